package kubeletprobes

import (
	"testing"

	"k8s.io/client-go/kubernetes/fake"
)

const sample = `# HELP prober_probe_duration_seconds [ALPHA] Duration in seconds for a probe response.
# TYPE prober_probe_duration_seconds histogram
prober_probe_duration_seconds_bucket{container="target",namespace="ns1",pod="web-a",probe_type="Readiness",le="0.005"} 10
prober_probe_duration_seconds_bucket{container="target",namespace="ns1",pod="web-a",probe_type="Readiness",le="0.25"} 98
prober_probe_duration_seconds_bucket{container="target",namespace="ns1",pod="web-a",probe_type="Readiness",le="1"} 100
prober_probe_duration_seconds_bucket{container="target",namespace="ns1",pod="web-a",probe_type="Readiness",le="+Inf"} 100
prober_probe_duration_seconds_sum{container="target",namespace="ns1",pod="web-a",probe_type="Readiness"} 3.2
prober_probe_duration_seconds_bucket{container="target",namespace="ns1",pod="web-a",probe_type="Liveness",le="+Inf"} 20
prober_probe_duration_seconds_bucket{container="coredns",namespace="kube-system",pod="coredns-1",probe_type="Readiness",le="+Inf"} 355
prober_probe_total{container="target",namespace="ns1",pod="web-a",probe_type="Readiness",result="successful"} 99
`

func TestParseKeepsTheNamespacesHistograms(t *testing.T) {
	hs, err := Parse(sample, "ns1")
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 2 || hs[0].Latency.Probe != "liveness" || hs[1].Latency.Probe != "readiness" {
		t.Fatalf("histograms = %+v, want web-a's liveness and readiness", hs)
	}
	r := hs[1]
	if r.Pod != "web-a" || r.Latency.Container != "target" || len(r.Latency.Buckets) != 4 ||
		r.Latency.Buckets[1].Le != "0.25" || r.Latency.Buckets[1].Count != 98 || r.Latency.Buckets[3].Le != "+Inf" {
		t.Errorf("readiness histogram = %+v", r)
	}
}

func TestParseRejectsMalformedLines(t *testing.T) {
	for _, bad := range []string{
		`prober_probe_duration_seconds_bucket{namespace="ns1",le="1"}`,
		`prober_probe_duration_seconds_bucket{namespace="ns1,le="1"} 3`,
		`prober_probe_duration_seconds_bucket{namespace="ns1",le="1"} x`,
	} {
		if _, err := Parse(bad, "ns1"); err == nil {
			t.Errorf("Parse(%q) = nil error", bad)
		}
	}
}

func TestScrapeWithAFakeClientIsAnErrorNotAPanic(t *testing.T) {
	if _, err := Scrape(t.Context(), fake.NewClientset(), []string{"node-1"}, "ns1"); err == nil {
		t.Error("want an error from a client with no REST client")
	}
}
