package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/faults"
	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/reports"
)

// TestCapOnlyWhenTheHarnessEndedTheSearch: a target that saturated within the harness's reach is
// never capped; one that held every rate the harness could send, or capacityMax, is.
func TestCapOnlyWhenTheHarnessEndedTheSearch(t *testing.T) {
	for _, tc := range []struct {
		c    reports.Capacity
		want bool
	}{
		{reports.Capacity{Rate: 120, Saturated: true}, false},
		{reports.Capacity{Rate: 120, Saturated: true, HarnessLimit: 1920}, false},
		{reports.Capacity{Rate: 1680, HarnessLimit: 1920}, true},
		{reports.Capacity{Rate: capacityMax}, true},
		{reports.Capacity{Rate: 900}, false}, // the search's budget ended it: not the harness
	} {
		if got := needsCap(tc.c); got != tc.want {
			t.Errorf("needsCap(%s) = %v, want %v", tc.c.String(), got, tc.want)
		}
	}
}

// TestCapSizedFromTheCostOfARequest: etcd's /health cost about 0.3 CPU-ms per request in its
// first search; a goal of 480/s over 3 containers is 48m each.
func TestCapSizedFromTheCostOfARequest(t *testing.T) {
	if got := capMillicores(480, 300*time.Microsecond, 3); got != 48 {
		t.Errorf("cap = %dm, want 48m", got)
	}
	if got := capMillicores(100, 10*time.Microsecond, 3); got != capFloor {
		t.Errorf("a cheap request: %dm, want the floor %dm", got, capFloor)
	}
	if got := capMillicores(100, 0, 3); got != capFloor {
		t.Errorf("no cost measured: %dm, want the floor", got)
	}
}

func TestMaxMultiple(t *testing.T) {
	fs := []scenario.Fault{
		{Type: faults.TypeOverload, Params: map[string]string{faults.ParamCapacityMultiple: "2"}},
		{Type: faults.TypeOverload, Params: map[string]string{"rate": "400"}},
		{Type: faults.TypeOverload, Params: map[string]string{faults.ParamCapacityMultiple: "3"}},
		{Type: "pod-delete", Params: map[string]string{faults.ParamCapacityMultiple: "9"}},
	}
	if got := maxMultiple(fs); got != 3 {
		t.Errorf("maxMultiple = %g, want 3", got)
	}
	if got := maxMultiple(nil); got != 1 {
		t.Errorf("maxMultiple(nil) = %g, want 1", got)
	}
}

func TestCappedCapacitySaysSo(t *testing.T) {
	c := reports.Capacity{Rate: 240, Saturated: true, Cap: &reports.CapacityCap{
		Millicores: 48, Containers: 3, CPUPerRequest: 0.3, Uncapped: reports.Capacity{Rate: 1680, HarnessLimit: 1920},
	}}
	for _, w := range []string{"capacity 240 rps (a higher rate was not served)", "capped at 48m in each of its 3 containers", "uncapped: capacity 1680 rps at least: the harness fell behind at 1920 rps"} {
		if !strings.Contains(c.String(), w) {
			t.Errorf("%q lacks %q", c.String(), w)
		}
	}
}
