package oracle_test

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/probegate/probegate/fixtures/manifests"
	"github.com/probegate/probegate/internal/oracle"
)

func template(t *testing.T, variant string) *appsv1.Deployment {
	t.Helper()
	objs, err := manifests.Objects(variant)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if d, ok := o.(*appsv1.Deployment); ok && d.Name == "target" {
			return d
		}
	}
	t.Fatalf("variant %s has no target Deployment", variant)
	return nil
}

// TestBundledTargetWindows computes the oracle from the bundled good target's real manifest.
func TestBundledTargetWindows(t *testing.T) {
	d := template(t, "good")
	o, err := oracle.ForTemplate(d.Spec.Template, oracle.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := time.Second
	checks := []struct {
		name      string
		got, want time.Duration
	}{
		// readiness F=2 × P=1s, timeout 1s, app lag 1s (annotation, within one period) → [1s, 4s] + 2s propagation
		{"readiness min", o.Readiness.Detection.Min, 1 * s},
		{"readiness deadline", o.Readiness.Detection.Deadline(), 6 * s},
		// recovery S=1 × P=1s, timeout 1s, app lag 0.7s (annotation) → [0s, 2.7s] + 2s propagation
		{"readiness recovery deadline", o.Readiness.Recovery.Deadline(), 4700 * time.Millisecond},
		// liveness F=3 × P=5s, timeout 1s, app lag 3s (annotation) → [10s, 19s]; + grace 25s + restart 2s
		{"liveness min", o.Liveness.Detection.Min, 10 * s},
		{"liveness max", o.Liveness.Detection.Max, 19 * s},
		{"liveness restart deadline", o.Liveness.Restart.Deadline(), 46 * s},
		// termination: withdrawal 5s + drain 10s + margin 2s, from the annotations
		{"termination need", o.Termination.Required, 17 * s},
		// startup F=60 × P=1s
		{"startup budget", o.Startup.Budget, 60 * s},
		{"grace", o.Termination.GracePeriod, 25 * s},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %s, want %s", c.name, c.got, c.want)
		}
	}
	if o.Container != "target" || o.Startup.Source != "startupProbe" {
		t.Errorf("container %q, startup source %q", o.Container, o.Startup.Source)
	}
	for _, l := range o.Lines() {
		t.Log(l)
	}
}

// TestEveryVariantHasAnOracle: each anti-pattern variant's spec yields windows, and the one without
// a startup probe falls back to liveness for its bootstrap budget.
func TestEveryVariantHasAnOracle(t *testing.T) {
	for _, v := range manifests.Variants() {
		t.Run(v, func(t *testing.T) {
			o, err := oracle.ForTemplate(template(t, v).Spec.Template, oracle.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if o.Readiness == nil || o.Liveness == nil {
				t.Errorf("variant %s: readiness %v liveness %v", v, o.Readiness != nil, o.Liveness != nil)
			}
			if v == "no-startup-probe" && o.Startup.Source != "livenessProbe" {
				t.Errorf("no-startup-probe startup source = %q, want livenessProbe", o.Startup.Source)
			}
		})
	}
}
