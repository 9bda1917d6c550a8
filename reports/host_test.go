package reports

import (
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

func TestHostFigures(t *testing.T) {
	if hostFigures(nil) != nil || hostLine(nil) != "" {
		t.Error("no host samples: want no figures and no line")
	}
	sample := func(w float64, run int) timeline.Entry {
		return timeline.Entry{Kind: timeline.KindHost, Host: &timeline.HostSample{Interval: time.Second, CPUWaiting: w, Runnable: run, CPUs: 2}}
	}
	quiet := hostFigures([]timeline.Entry{sample(0.3, 3), sample(0.5, 5)})
	if quiet == nil || quiet.Observed != 2*time.Second || quiet.Waiting != 0.4 || quiet.WorstSecond != 0.5 || quiet.Runnable != 5 {
		t.Fatalf("figures %+v: want 2s observed, 40 %% waiting, worst 50 %%, 5 runnable", quiet)
	}
	if line := hostLine(quiet); line != "" {
		t.Errorf("a host waiting 40 %% of the time is not starved, got %q", line)
	}
	starved := hostFigures([]timeline.Entry{sample(0.95, 20), sample(1, 24)})
	if line := hostLine(starved); !strings.Contains(line, "98 %") || !strings.Contains(line, "24 runnable on 2 CPUs") {
		t.Errorf("starved host line %q", line)
	}
}
