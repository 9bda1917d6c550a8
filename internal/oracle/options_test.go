package oracle

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func TestParseOptions(t *testing.T) {
	o, err := ParseOptions(map[string]string{"container": " app ", "propagation": "1.5", "drain": "20s", "withdrawal": "3", "margin": "500ms"})
	if err != nil {
		t.Fatal(err)
	}
	want := Options{Container: "app", Propagation: 1500 * time.Millisecond, AdmittedWork: 20 * time.Second, Withdrawal: 3 * time.Second, Margin: 500 * time.Millisecond}
	if o != want {
		t.Errorf("ParseOptions = %+v, want %+v", o, want)
	}
	// The parsed options take effect in Compute over annotations.
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}}
	got, err := Compute(spec, map[string]string{AnnotationDrain: "5"}, o)
	if err != nil {
		t.Fatal(err)
	}
	if got.Termination.AdmittedWork != 20*time.Second || got.Termination.AdmittedWorkSource != "scenario" || got.Propagation != 1500*time.Millisecond {
		t.Errorf("termination = %+v propagation %s", got.Termination, got.Propagation)
	}
	for _, bad := range []map[string]string{{"drian": "3"}, {"cleanup": "soon"}, {"margin": "-2"}} {
		if _, err := ParseOptions(bad); err == nil {
			t.Errorf("ParseOptions(%v) accepted bad input", bad)
		} else if !strings.Contains(err.Error(), "oracle option") {
			t.Errorf("error %q does not say what it was reading", err)
		}
	}
}

// ParseSeconds is the one parser of timing values: seconds or a Go duration, never negative; other
// packages word their own message for a bad value and keep "negative duration".
func TestParseSeconds(t *testing.T) {
	for in, want := range map[string]time.Duration{"5": 5 * time.Second, " 2.5 ": 2500 * time.Millisecond, "1500ms": 1500 * time.Millisecond, "0": 0} {
		if d, err := ParseSeconds(in); err != nil || d != want {
			t.Errorf("ParseSeconds(%q) = %s, %v; want %s", in, d, err, want)
		}
	}
	for _, in := range []string{"-1", "-2s"} {
		if _, err := ParseSeconds(in); !errors.Is(err, ErrNegativeDuration) || err.Error() != "negative duration" {
			t.Errorf("ParseSeconds(%q) = %v, want ErrNegativeDuration", in, err)
		}
	}
	if _, err := ParseSeconds("ten"); err == nil || errors.Is(err, ErrNegativeDuration) {
		t.Errorf("ParseSeconds(ten) = %v", err)
	}
	if _, err := parseSeconds("ten"); err == nil || err.Error() != `want seconds ("5", "2.5") or a duration ("1500ms")` {
		t.Errorf("parseSeconds(ten) = %v", err)
	}
}
