package faults

import (
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
)

// NewDBTimeout makes the database stop answering: a toxiproxy timeout toxic swallows every reply and,
// when closeAfter > 0, closes the connection after it (0 holds it open until reverted). Proof of
// effect: probe gets no reply.
func NewDBTimeout(rec Recorder, client *toxiproxy.Client, proxy string, closeAfter time.Duration, probe DBProbe) Fault {
	rec.Type = TypeDBTimeout
	return &toxic{
		Recorder: rec, client: client, proxy: proxy, name: "probegate-db-timeout", kind: "timeout",
		attrs:  toxiproxy.Attributes{"timeout": closeAfter.Milliseconds()},
		params: map[string]string{"timeout_ms": ms(closeAfter)},
		probe:  probe,
		effect: func(d time.Duration, err error) (bool, string) {
			if err != nil {
				return true, "no reply"
			}
			return false, "the database still answered"
		},
		recovered: func(_ time.Duration, err error) bool { return err == nil },
	}
}
