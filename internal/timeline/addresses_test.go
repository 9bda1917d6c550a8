package timeline

import (
	"net/netip"
	"testing"
	"time"
)

func TestAddressBookNamesThePodThatHadTheAddressThen(t *testing.T) {
	ep := func(at time.Duration, pod, addr string) Entry {
		return Entry{T: at, Kind: KindEndpoint, Pod: pod, Endpoint: &EndpointTransition{Change: EndpointAdded, Address: addr}}
	}
	book := Addresses([]Entry{ep(1*time.Second, "a", "10.0.0.1"), ep(2*time.Second, "a", "10.0.0.1"), ep(30*time.Second, "b", "10.0.0.1"), ep(3*time.Second, "c", "bogus")})
	ip := netip.MustParseAddr("10.0.0.1")
	for _, c := range []struct {
		t     time.Duration
		slack time.Duration
		want  string
	}{{0, 0, "a"}, {20 * time.Second, 0, "a"}, {29 * time.Second, time.Second, "b"}, {31 * time.Second, 0, "b"}} {
		if got := book.PodAt(ip, c.t, c.slack); got != c.want {
			t.Errorf("PodAt(%s, slack %s) = %q, want %q", c.t, c.slack, got, c.want)
		}
	}
	if got := book.PodAt(netip.MustParseAddr("10.0.0.2"), 0, 0); got != "" {
		t.Errorf("an address no endpoint had names %q", got)
	}
}
