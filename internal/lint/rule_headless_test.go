package lint

import (
	"strings"
	"testing"
)

// TestHeadlessOnlyRoutes: the traffic rules (PG002, PG007, PG009, PG014) are warnings on a
// Deployment behind a Service with a virtual IP, and info when only headless Services reach it
// (prometheus-operator's scrape Service); one Service with a virtual IP beside a headless one keeps
// them warnings.
func TestHeadlessOnlyRoutes(t *testing.T) {
	const probed = `        image: web:1
        ports: [{name: http, containerPort: 8080}]
        livenessProbe: {httpGet: {path: /livez, port: http}, periodSeconds: 10, failureThreshold: 3}
        readinessProbe: {httpGet: {path: /readyz, port: http}, periodSeconds: 30, failureThreshold: 3}
`
	const unprobed = "        image: web:1\n        ports: [{name: http, containerPort: 8080}]\n"
	svc := func(name, clusterIP string) string {
		return "---\napiVersion: v1\nkind: Service\nmetadata: {name: " + name + "}\nspec:\n" + clusterIP +
			"  selector: {app: web}\n  ports: [{name: http, port: 8080, targetPort: http}]\n"
	}
	headless, virtual := svc("web-headless", "  clusterIP: None\n"), svc("web", "")
	cases := []struct {
		name, services string
		want           Severity
	}{
		{"Service with a virtual IP", virtual, Warning},
		{"headless Service only", headless, Info},
		{"headless and virtual-IP Services", headless + virtual, Warning},
	}
	for _, tc := range cases {
		for _, rule := range []string{"PG002", "PG007", "PG009", "PG014"} {
			t.Run(tc.name+"/"+rule, func(t *testing.T) {
				container := probed
				if rule == "PG014" {
					container = unprobed
				}
				inv, err := Parse("web.yaml", []byte(realManifest("Deployment", "web", "2", "", container, tc.services)))
				if err != nil {
					t.Fatal(err)
				}
				fs := only(Lint(inv, Config{}), rule)
				if len(fs) != 1 {
					t.Fatalf("want one %s finding, got %+v", rule, fs)
				}
				if fs[0].Severity != tc.want {
					t.Errorf("%s is %s, want %s: %s", rule, fs[0].Severity, tc.want, fs[0].Message)
				}
				if says := strings.Contains(fs[0].Message, "is headless"); says != (tc.want == Info) {
					t.Errorf("message names the headless Service: %v, want %v: %s", says, tc.want == Info, fs[0].Message)
				}
			})
		}
	}
}

// TestHeadlessStatefulSetPeers: a StatefulSet's headless Service stays out of the traffic rules
// altogether (peer discovery), as before the headless info case.
func TestHeadlessStatefulSetPeers(t *testing.T) {
	in := realManifest("StatefulSet", "web", "3", "", "        image: web:1\n        ports: [{name: http, containerPort: 8080}]\n",
		"---\napiVersion: v1\nkind: Service\nmetadata: {name: web-peers}\nspec:\n  clusterIP: None\n  selector: {app: web}\n  ports: [{name: http, port: 8080, targetPort: http}]\n")
	inv, err := Parse("web.yaml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	for _, rule := range []string{"PG009", "PG014"} {
		if fs := only(Lint(inv, Config{}), rule); len(fs) != 0 {
			t.Errorf("%s on a StatefulSet behind its headless peer Service: %+v", rule, fs)
		}
	}
}
