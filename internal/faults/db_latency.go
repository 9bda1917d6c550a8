package faults

import (
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
)

// NewDBLatency slows every reply from the database by latency (± jitter) with a toxiproxy latency
// toxic on proxy. Proof of effect: probe's round trip through the proxy takes at least latency.
func NewDBLatency(rec Recorder, client *toxiproxy.Client, proxy string, latency, jitter time.Duration, probe DBProbe) Fault {
	rec.Type = TypeDBLatency
	return &toxic{
		Recorder: rec, client: client, proxy: proxy, name: "probegate-db-latency", kind: "latency",
		attrs:  toxiproxy.Attributes{"latency": latency.Milliseconds(), "jitter": jitter.Milliseconds()},
		params: map[string]string{"latency_ms": ms(latency), "jitter_ms": ms(jitter)},
		probe:  probe,
		effect: func(d time.Duration, err error) (bool, string) {
			if err != nil {
				return false, "probe failed"
			}
			if d >= latency-jitter-latency/20 {
				return true, "slowed as injected"
			}
			return false, "faster than the injected latency"
		},
		recovered: func(d time.Duration, err error) bool { return err == nil && d < latency },
	}
}
