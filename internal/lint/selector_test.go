package lint

import (
	"strings"
	"testing"
)

// TestScrapePortByAnnotation: a Service port that reaches the port the pod's prometheus.io/port
// annotation names, on a container that serves on another port, is a scrape route: the traffic
// rules (PG009, PG014) skip it, whatever the Service port is called. A Service named http that reaches
// the traffic port still counts, and so does the annotated port when it is the container's only one.
func TestScrapePortByAnnotation(t *testing.T) {
	svc := func(port string) string {
		return "---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  selector: {app: web}\n  ports: [" + port + "]\n"
	}
	cases := []struct {
		name, ports, annotation, service string
		routed                           bool
	}{
		{"Service port named http on the annotated metrics port", "[{name: http, containerPort: 8080}, {name: admin, containerPort: 9090}]", "9090",
			svc("{name: http, port: 9090, targetPort: 9090}"), false},
		{"the same Service reaching the traffic port by name", "[{name: http, containerPort: 8080}, {name: admin, containerPort: 9090}]", "9090",
			svc("{name: http, port: 80, targetPort: http}"), true},
		{"the annotated port is the container's only one: traffic and scrapes share it", "[{name: http, containerPort: 8080}]", "8080",
			svc("{name: http, port: 80, targetPort: 8080}"), true},
		{"no annotation", "[{name: http, containerPort: 8080}, {name: admin, containerPort: 9090}]", "",
			svc("{name: http, port: 9090, targetPort: 9090}"), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := realManifest("Deployment", "web", "3", "", "        image: web:1\n        ports: "+tc.ports+"\n", tc.service)
			if tc.annotation != "" {
				in = strings.Replace(in, "metadata: {labels: {app: web}}", "metadata: {labels: {app: web}, annotations: {prometheus.io/scrape: \"true\", prometheus.io/port: \""+tc.annotation+"\"}}", 1)
			}
			inv, err := Parse("web.yaml", []byte(in))
			if err != nil {
				t.Fatal(err)
			}
			fs := Lint(inv, Config{})
			want := 0
			if tc.routed {
				want = 1
			}
			if p9, p14 := only(fs, "PG009"), only(fs, "PG014"); len(p9) != want || len(p14) != want {
				t.Errorf("PG009 %+v, PG014 %+v; want %d of each", p9, p14, want)
			}
		})
	}
}
