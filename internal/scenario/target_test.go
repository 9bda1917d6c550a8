package scenario

import (
	"strings"
	"testing"
)

func TestTargetBootstrapEnv(t *testing.T) {
	base := "name: web\nmanifests: [m.yaml]\nworkload: statefulset/web\nservice: web\n"
	spec, err := ParseTargetSpec("t.yaml", []byte(base+"bootstrapEnv: BOOTSTRAP_DURATION\n"))
	if err != nil {
		t.Fatal(err)
	}
	if spec.BootstrapEnv != "BOOTSTRAP_DURATION" || spec.Workload.Kind != "StatefulSet" {
		t.Errorf("bootstrapEnv %q, workload %+v", spec.BootstrapEnv, spec.Workload)
	}
	if _, err := ParseTargetSpec("t.yaml", []byte(base+"bootstrapEnv: \"not a name\"\n")); err == nil || !strings.Contains(err.Error(), "must be an environment variable name") {
		t.Errorf("a bad name: err = %v", err)
	}
}
