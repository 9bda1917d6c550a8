package faults

import (
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
)

// TypeDBLatency slows the database's replies.
const TypeDBLatency = "db-latency"

func init() {
	Register(Definition{
		Type: TypeDBLatency,
		Doc:  "slows every reply from a dependency by a latency (± jitter) with a toxiproxy latency toxic",
		Params: []Param{
			{Name: "latency", Kind: KindDuration, Doc: "added to every DB reply (default 1s)"},
			{Name: "jitter", Kind: KindDuration, Doc: "± random jitter"},
			dependencyParam,
		},
		Needs: []Capability{NeedsToxiproxy},
		Proof: "a PostgreSQL round trip through the proxy takes at least the latency (a tcp dependency's is not measured)",
		Build: func(a Args) (Fault, error) {
			client, proxy, err := dbTarget(a)
			if err != nil {
				return nil, err
			}
			latency := a.Duration("latency", time.Second)
			// A measurement waits for two replies the toxic delays (SSLRequest, then StartupMessage),
			// plus a port-forward on a node that may be busy: a soak once saw no SSLRequest reply
			// within latency + 5 s, twice, on a loaded machine.
			probe := a.Env.dbProbe(client, proxy, 2*latency+6*time.Second)
			return NewDBLatency(a.Rec, client, proxy.Name, latency, a.Duration("jitter", 0), probe), nil
		},
	})
}

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
