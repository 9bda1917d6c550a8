package lint

import (
	"strings"
	"testing"
)

// TestNoReadinessLonePod: a container behind a Service with no readiness probe is a warning, and
// info where its pod never has another beside it to take the traffic (velero's MinIO: one replica,
// strategy Recreate; a single-replica StatefulSet). Two replicas with Recreate stay warnings: a
// replica that hangs keeps its share while the other could serve.
func TestNoReadinessLonePod(t *testing.T) {
	const container = "        image: minio:1\n        ports: [{name: http, containerPort: 9000}]\n"
	cases := []struct {
		name, kind, replicas, strategy string
		want                           Severity
		says                           string
	}{
		{"one replica, RollingUpdate", "Deployment", "1", "", Warning, "keeps it when it cannot"},
		{"one replica, Recreate", "Deployment", "1", "Recreate", Info, "it runs one replica with strategy Recreate"},
		{"replicas unset, Recreate", "Deployment", "null", "Recreate", Info, "strategy Recreate"},
		{"two replicas, Recreate", "Deployment", "2", "Recreate", Warning, "keeps it when it cannot"},
		{"single-replica StatefulSet", "StatefulSet", "1", "", Info, "single-replica StatefulSet"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := realManifest(tc.kind, "web", tc.replicas, "", container, svcHTTP)
			if tc.strategy != "" {
				in = strings.Replace(in, "  selector:", "  strategy: {type: "+tc.strategy+"}\n  selector:", 1)
			}
			inv, err := Parse("web.yaml", []byte(in))
			if err != nil {
				t.Fatal(err)
			}
			fs := only(Lint(inv, Config{}), "PG014")
			if len(fs) != 1 {
				t.Fatalf("want one PG014 finding, got %+v", fs)
			}
			if fs[0].Severity != tc.want || !strings.Contains(fs[0].Message, tc.says) {
				t.Errorf("got %s %q; want %s saying %q", fs[0].Severity, fs[0].Message, tc.want, tc.says)
			}
		})
	}
}
