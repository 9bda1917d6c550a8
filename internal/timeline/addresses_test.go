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
		t    time.Duration
		want string
	}{{0, "a"}, {20 * time.Second, "a"}, {28 * time.Second, "a"}, {29 * time.Second, "b"}, {31 * time.Second, "b"}} {
		if got := book.PodAt(ip, c.t); got != c.want {
			t.Errorf("PodAt(%s) = %q, want %q (b took the address at 30 s, seen up to WatchLag early)", c.t, got, c.want)
		}
	}
	if got := book.PodAt(netip.MustParseAddr("10.0.0.2"), 0); got != "" {
		t.Errorf("an address no endpoint had names %q", got)
	}
}
