package faults

import (
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
)

// TypeDBTimeout makes the database stop answering.
const TypeDBTimeout = "db-timeout"

func init() {
	Register(Definition{
		Type: TypeDBTimeout,
		Doc:  "makes a dependency stop answering with a toxiproxy timeout toxic (replies swallowed, connections held or closed)",
		Params: []Param{
			{Name: "timeout", Kind: KindDuration, Doc: "close connections after this (default 0: hold them open)"},
			dependencyParam,
		},
		Needs: []Capability{NeedsToxiproxy},
		Proof: "a PostgreSQL round trip through the proxy gets no reply (a probe that never reached the proxy, e.g. its port-forward failed, proves nothing; a tcp dependency's is not measured)",
		Build: func(a Args) (Fault, error) {
			client, proxy, err := dbTarget(a)
			if err != nil {
				return nil, err
			}
			return NewDBTimeout(a.Rec, client, proxy.Name, a.Duration("timeout", 0), a.Env.dbProbe(client, proxy, 3*time.Second)), nil
		},
	})
}

// NewDBTimeout makes the database stop answering: a toxiproxy timeout toxic swallows every reply and,
// when closeAfter > 0, closes the connection after it (0 holds it open until reverted). Proof of
// effect: probe's round trip reaches the proxy and gets no reply (a ProbeNotRunError leaves it
// unproven).
func NewDBTimeout(rec Recorder, client *toxiproxy.Client, proxy string, closeAfter time.Duration, probe DBProbe) Fault {
	rec.Type = TypeDBTimeout
	return &toxic{
		Recorder: rec, client: client, proxy: proxy, name: "probegate-db-timeout", kind: "timeout",
		attrs:  toxiproxy.Attributes{"timeout": closeAfter.Milliseconds()},
		params: map[string]string{"timeout_ms": ms(closeAfter)},
		probe:  probe,
		effect: func(d time.Duration, err error) (bool, string) {
			switch {
			case probeNotRun(err):
				return false, "effect unproven: the round trip never reached the proxy"
			case err != nil:
				return true, "no reply"
			}
			return false, "the database still answered"
		},
		recovered: func(_ time.Duration, err error) bool { return err == nil },
	}
}
