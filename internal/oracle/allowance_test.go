package oracle

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// A propagation or restart allowance widened by annotation or scenario is capped at its ceiling and
// stated as an assumption (the annotation "60" used to widen the readiness deadline by 58 s,
// unstated); one at its default states nothing.
func TestAllowancesCapped(t *testing.T) {
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "app",
		ReadinessProbe: httpProbe("/ready", 1, 1, 2, 1), LivenessProbe: httpProbe("/live", 5, 1, 3, 1)}}}
	for _, c := range []struct {
		name          string
		ann           map[string]string
		opts          Options
		prop, restart time.Duration
		assumed       []string // each assumption's explanation contains one, in order
	}{
		{name: "defaults", prop: 2 * s, restart: 2 * s},
		{name: "annotation 60 s", ann: map[string]string{AnnotationPropagation: "60"}, prop: MaxPropagation, restart: 2 * s,
			assumed: []string{"propagation 1m0s (annotation probegate.dev/propagation-seconds) capped at 5s"}},
		{name: "scenario 3 s with its reason", opts: Options{Propagation: 3 * s, Reason: "a slow kube-proxy"}, prop: 3 * s, restart: 2 * s,
			assumed: []string{"propagation 3s (scenario: a slow kube-proxy) instead of the default 2s"}},
		{name: "restart allowance 30 s", opts: Options{RestartAllowance: 30 * s, Reason: "slow runtime"}, prop: 2 * s, restart: MaxRestartAllowance,
			assumed: []string{"restart allowance 30s (scenario: slow runtime) capped at 5s"}},
		{name: "narrower propagation", opts: Options{Propagation: 500 * time.Millisecond}, prop: 500 * time.Millisecond, restart: 2 * s,
			assumed: []string{"narrower"}},
	} {
		o, err := Compute(spec, c.ann, c.opts)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if o.Propagation != c.prop || o.Readiness.Detection.Allowance != c.prop {
			t.Errorf("%s: propagation %s (readiness window's %s), want %s", c.name, o.Propagation, o.Readiness.Detection.Allowance, c.prop)
		}
		if got := o.Liveness.Restart.Allowance - 30*s; got != c.restart {
			t.Errorf("%s: restart allowance %s, want %s", c.name, got, c.restart)
		}
		if len(o.Assumptions) != len(c.assumed) {
			t.Fatalf("%s: assumptions %+v, want %d", c.name, o.Assumptions, len(c.assumed))
		}
		for i, want := range c.assumed {
			if !strings.Contains(o.Assumptions[i].Explain, want) {
				t.Errorf("%s: assumption %q lacks %q", c.name, o.Assumptions[i].Explain, want)
			}
		}
	}
}

// A scenario that widens the propagation or restart allowance past its default must say why.
func TestLooseningOptionsNeedAReason(t *testing.T) {
	for _, c := range []struct {
		params map[string]string
		ok     bool
	}{
		{map[string]string{"propagation": "4"}, false},
		{map[string]string{"restart-allowance": "3s"}, false},
		{map[string]string{"propagation": "4", "tolerance": "a slow kube-proxy"}, true},
		{map[string]string{"propagation": "1.5"}, true},
		{map[string]string{"propagation": "2"}, true},
	} {
		o, err := ParseOptions(c.params)
		if (err == nil) != c.ok {
			t.Errorf("%v: err = %v, want ok %v", c.params, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "say why") {
			t.Errorf("%v: %v does not ask for a reason", c.params, err)
		}
		if c.ok && c.params["tolerance"] != "" && o.Reason != c.params["tolerance"] {
			t.Errorf("%v: reason %q", c.params, o.Reason)
		}
	}
}
