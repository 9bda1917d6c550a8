package verdicttest

import (
	"testing"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

func TestTrafficFollowsReadiness(t *testing.T) {
	b := New().Ready(0, "a", "b").NotReady(2*time.Second, "a").NotReady(3*time.Second, "b").Ready(4*time.Second, "a").
		Traffic(0, 5*time.Second, 10)
	reqs := b.Requests()
	if len(reqs) != 50 {
		t.Fatalf("%d requests, want 50", len(reqs))
	}
	count := map[string]int{}
	for _, q := range reqs {
		switch {
		case q.T < 2*time.Second:
			count["early-"+q.Pod]++
		case q.T < 3*time.Second && q.Pod != "b":
			t.Errorf("request at %s served by %q while only b was ready", q.T, q.Pod)
		case q.T >= 3*time.Second && q.T < 4*time.Second && (q.Error != timeline.ErrRefused || q.Pod != ""):
			t.Errorf("request at %s = %+v, want refused with nothing ready", q.T, q)
		case q.T >= 4*time.Second && q.Pod != "a":
			t.Errorf("request at %s served by %q, want a", q.T, q.Pod)
		}
	}
	if count["early-a"] != 10 || count["early-b"] != 10 {
		t.Errorf("round robin before 2s = %v, want 10 each", count)
	}
}

func TestEndpointTransitionsCarryFromAndChange(t *testing.T) {
	e := New().Ready(0, "a").Terminating(time.Second, "a").Removed(2*time.Second, "a").Entries()
	if len(e) != 3 {
		t.Fatalf("%d entries", len(e))
	}
	if e[0].Endpoint.Change != timeline.EndpointAdded || e[0].Endpoint.From != nil || !e[0].Endpoint.To.Ready {
		t.Errorf("added = %+v", e[0].Endpoint)
	}
	if c := e[1].Endpoint; c.Change != timeline.EndpointChanged || !c.From.Ready || c.To.Ready || !c.To.Terminating || !c.To.Serving {
		t.Errorf("terminating = %+v", c)
	}
	if c := e[2].Endpoint; c.Change != timeline.EndpointRemoved || c.To != nil || !c.From.Terminating {
		t.Errorf("removed = %+v", c)
	}
	if e[0].Seq != 1 || e[2].Seq != 3 || !e[2].At.Equal(Start.Add(2*time.Second)) {
		t.Errorf("seq/at not stamped: %+v", e[2])
	}
	if tl := New().Ready(time.Second, "a").Timeline(); tl.Len() != 1 || tl.Entries()[0].T != time.Second {
		t.Errorf("Timeline() lost the entry or its offset")
	}
}

func TestDefaultOracleWindows(t *testing.T) {
	o := DefaultOracle()
	if got := o.Readiness.Detection.Deadline(); got != 5*time.Second {
		t.Errorf("readiness deadline %s, want 5s", got)
	}
	if got := o.Liveness.Restart.Deadline(); got != 17*time.Second {
		t.Errorf("liveness restart deadline %s, want 17s", got)
	}
	if o.Termination.GracePeriod != 10*time.Second || !o.Termination.Fits {
		t.Errorf("termination %+v", o.Termination)
	}
}
