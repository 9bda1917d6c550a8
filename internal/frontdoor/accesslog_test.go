package frontdoor

import (
	"context"
	"io"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/probegate/probegate/internal/timeline"
)

// Lines as Traefik's JSON access log writes them with traefikArgs' fields (logrus: keys sorted,
// durations in nanoseconds), between lines of its own log.
const sampleLog = `2026-12-03T18:30:00Z ERR error="kubernetes service not found: web/nope" ingress=web namespace=web providerName=kubernetes
{"DownstreamStatus":200,"Duration":2345678,"OriginStatus":200,"RequestHost":"shop.example","RequestPath":"/work","RetryAttempts":0,"RouterName":"web-web-shop-example-work@kubernetes","ServiceAddr":"10.244.0.12:8080","StartUTC":"2026-12-03T18:30:01.123456789Z","level":"info","msg":"","request_X-Probegate-Load":"L1","request_X-Vegeta-Seq":"0","time":"2026-12-03T18:30:01Z"}
{"DownstreamStatus":502,"Duration":1000000,"RequestHost":"shop.example","RequestPath":"/work","RetryAttempts":2,"RouterName":"web-web-shop-example-work@kubernetes","ServiceAddr":"10.244.0.13:8080","StartUTC":"2026-12-03T18:30:01.200000000Z","level":"info","msg":"","request_X-Probegate-Load":"L1","request_X-Vegeta-Seq":"1","time":"2026-12-03T18:30:01Z"}
{"DownstreamStatus":503,"Duration":120000,"RequestHost":"shop.example","RequestPath":"/work","RetryAttempts":0,"RouterName":"web-web-shop-example-work@kubernetes","StartUTC":"2026-12-03T18:30:01.300000000Z","level":"info","msg":"","request_X-Probegate-Load":"L1","request_X-Vegeta-Seq":"2","time":"2026-12-03T18:30:01Z"}
{"DownstreamStatus":200,"Duration":2000000,"OriginStatus":200,"RequestPath":"/work","RetryAttempts":0,"ServiceAddr":"10.244.0.12:8080","StartUTC":"2026-12-03T18:29:01.000000000Z","level":"info","msg":"","request_X-Probegate-Load":"L0","request_X-Vegeta-Seq":"1","time":"2026-12-03T18:29:01Z"}
{"DownstreamStatus":200,"Duration":2000000,"OriginStatus":200,"RequestPath":"/ping","RetryAttempts":0,"ServiceAddr":"10.244.0.12:8080","StartUTC":"2026-12-03T18:30:02.000000000Z","level":"info","msg":"","time":"2026-12-03T18:30:02Z"}
{"level":"error","msg":"a JSON line of the controller's own","time":"2026-12-03T18:30:02Z"}

{"DownstreamStatus":200,"ServiceAddr":"not-an-address","StartUTC":"2026-12-03T18:30:03Z","request_X-Vegeta-Seq":"9"}
`

func TestParseAccessLog(t *testing.T) {
	es, bad, first := ParseAccessLog(strings.NewReader(sampleLog))
	if bad != 1 || first == nil || !strings.Contains(first.Error(), `ServiceAddr "not-an-address"`) {
		t.Errorf("bad %d, first %v: want the one unreadable address", bad, first)
	}
	if len(es) != 5 {
		t.Fatalf("%d entries, want 5: %+v", len(es), es)
	}
	want := AccessEntry{
		Start: time.Date(2026, 12, 3, 18, 30, 1, 123456789, time.UTC), Duration: 2345678 * time.Nanosecond,
		Upstream: netip.MustParseAddrPort("10.244.0.12:8080"), Status: 200, OriginStatus: 200, Path: "/work",
		Load: "L1", Seq: 0, HasSeq: true,
	}
	if !es[0].Start.Equal(want.Start) {
		t.Errorf("start %v, want %v", es[0].Start, want.Start)
	}
	es[0].Start = want.Start
	if es[0] != want {
		t.Errorf("entry 0 %+v\nwant     %+v", es[0], want)
	}
	if e := es[1]; e.Retries != 2 || e.OriginStatus != 0 || e.Status != 502 || e.Upstream.String() != "10.244.0.13:8080" {
		t.Errorf("a retried request the server never answered: %+v", e)
	}
	if e := es[2]; e.Upstream.IsValid() || e.Status != 503 || e.Seq != 2 {
		t.Errorf("a request no server was chosen for: %+v", e)
	}
	if e := es[4]; e.HasSeq || e.Load != "" {
		t.Errorf("a request the load did not send: %+v", e)
	}
}

func TestParseAccessLineIPv6(t *testing.T) {
	e, ok, err := ParseAccessLine([]byte(`{"DownstreamStatus":200,"ServiceAddr":"[fd00:10:244::7]:8080","StartUTC":"2026-12-03T18:30:01Z","request_X-Vegeta-Seq":"3"}`))
	if err != nil || !ok || e.Upstream.Addr() != netip.MustParseAddr("fd00:10:244::7") || e.Seq != 3 {
		t.Errorf("%+v, %v, %v", e, ok, err)
	}
}

// endpoints gives pod a the address 10.244.0.12 from the start, b 10.244.0.13, and from 50 s on
// the address 10.244.0.12 to pod c (a after it is gone).
func endpoints() []timeline.Entry {
	ep := func(t time.Duration, pod, addr string) timeline.Entry {
		return timeline.Entry{T: t, Kind: timeline.KindEndpoint, Pod: pod, Endpoint: &timeline.EndpointTransition{Address: addr}}
	}
	return []timeline.Entry{ep(0, "web-a", "10.244.0.12"), ep(0, "web-b", "10.244.0.13"), ep(50*time.Second, "web-c", "10.244.0.12")}
}

func TestAttributeAccess(t *testing.T) {
	log, _, _ := ParseAccessLog(strings.NewReader(sampleLog))
	reqs := []timeline.Request{
		{Seq: 0, T: time.Second, Status: 200},
		{Seq: 1, T: 2 * time.Second, Status: 502},
		{Seq: 2, T: 3 * time.Second, Status: 503},
		{Seq: 3, T: 4 * time.Second, Status: 200}, // no line: not in the log (yet)
	}
	out, sum := AttributeAccess("ingress", reqs, log, "L1", endpoints())
	if out[0].Pod != "web-a" || out[0].PodFrom != "ingress" || out[0].Upstream != "10.244.0.12:8080" {
		t.Errorf("seq 0: %+v", out[0])
	}
	if out[1].Pod != "web-b" || out[1].DoorRetries != 2 {
		t.Errorf("seq 1 (retried twice, last on b): %+v", out[1])
	}
	if !out[2].NoUpstream || out[2].Pod != "" || out[2].Reached() {
		t.Errorf("seq 2 (answered by the controller): %+v", out[2])
	}
	if out[3].Pod != "" || out[3].Upstream != "" {
		t.Errorf("seq 3 has no line: %+v", out[3])
	}
	want := timeline.DoorAttribution{Door: "ingress", Lines: 3, Found: 2, Coverage: 2.0 / 3, NoUpstream: 1, Retried: 1, Agreement: 1}
	if sum.Door != want.Door || sum.Lines != want.Lines || sum.Found != want.Found || sum.Coverage != want.Coverage ||
		sum.NoUpstream != want.NoUpstream || sum.Retried != want.Retried || sum.Agreement != want.Agreement {
		t.Errorf("summary %+v\nwant    %+v", sum, want)
	}
	if reqs[0].Pod != "" {
		t.Error("AttributeAccess changed its input")
	}
}

func TestAttributeAccessHeaderAndReusedAddress(t *testing.T) {
	log := []AccessEntry{
		{Upstream: netip.MustParseAddrPort("10.244.0.12:8080"), Status: 200, Load: "L", Seq: 0, HasSeq: true},
		{Upstream: netip.MustParseAddrPort("10.244.0.12:8080"), Status: 200, Load: "L", Seq: 1, HasSeq: true},
		{Upstream: netip.MustParseAddrPort("10.244.0.12:8080"), Status: 200, Load: "L", Seq: 2, HasSeq: true},
		{Upstream: netip.MustParseAddrPort("10.9.9.9:8080"), Status: 200, Load: "L", Seq: 3, HasSeq: true},
	}
	reqs := []timeline.Request{
		{Seq: 0, T: 10 * time.Second, Status: 200, Pod: "web-a", PodFrom: timeline.PodFromHeader},
		{Seq: 1, T: 60 * time.Second, Status: 200},                                                // the address is c's by then
		{Seq: 2, T: 60 * time.Second, Status: 200, Pod: "web-a", PodFrom: timeline.PodFromHeader}, // header disagrees
		{Seq: 3, T: 60 * time.Second, Status: 200},
	}
	out, sum := AttributeAccess("ingress", reqs, log, "L", endpoints())
	if out[0].Pod != "web-a" || out[0].PodFrom != timeline.PodFromHeader {
		t.Errorf("seq 0: the header's pod stays: %+v", out[0])
	}
	if out[1].Pod != "web-c" {
		t.Errorf("seq 1: %q, want web-c (the address's holder at the time)", out[1].Pod)
	}
	if out[3].Pod != "" || sum.UnknownAddresses != 1 {
		t.Errorf("seq 3 went to no pod of the run: %+v, unknown %d", out[3], sum.UnknownAddresses)
	}
	if sum.Compared != 2 || sum.Agreed != 1 || len(sum.Disagreed) != 1 || sum.Disagreed[0] != "seq 2: header web-a, ingress web-c" {
		t.Errorf("comparison: %+v", sum)
	}
}

func TestTailFollowsAndWaits(t *testing.T) {
	pr, pw := io.Pipe()
	tail, err := StartTail(context.Background(), func(context.Context) (io.ReadCloser, error) { return pr, nil })
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(sampleLog, "\n")
	go func() {
		for _, l := range lines[:3] {
			io.WriteString(pw, l)
		}
		time.Sleep(50 * time.Millisecond)
		for _, l := range lines[3:] {
			io.WriteString(pw, l)
		}
	}()
	start := time.Now()
	tail.WaitFor(context.Background(), func(es []AccessEntry) bool { return linesOf(es, "L1") >= 3 }, 5*time.Second)
	if time.Since(start) > 4*time.Second {
		t.Error("WaitFor waited for its bound, not for the lines")
	}
	es, bad, _ := tail.Stop()
	if linesOf(es, "L1") != 3 {
		t.Errorf("%d lines of L1 after the wait", linesOf(es, "L1"))
	}
	pw.Close()
	_ = bad
	// Stop is final and WaitFor returns at once on a stopped tail.
	tail.WaitFor(context.Background(), func([]AccessEntry) bool { return false }, time.Minute)
}

func TestRecorderNoLines(t *testing.T) {
	pr, pw := io.Pipe()
	tail, _ := StartTail(context.Background(), func(context.Context) (io.ReadCloser, error) { return pr, nil })
	r := &accessLogRecorder{door: "ingress", tail: tail}
	pw.Close()
	reqs := []timeline.Request{{Seq: 0, Status: 200}}
	_, _, err := r.Attribute(context.Background(), "L", reqs, nil, 100*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "holds none of the load's 1 answered requests") {
		t.Errorf("err = %v", err)
	}
	r.Stop() // again: no panic
}

func TestPodLogFindsTheController(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "probegate-traefik-x", Namespace: "s1", Labels: traefikLabels}}
	client := fake.NewSimpleClientset(pod)
	p := planTraefik(Route{Ingress: "web"}, "s1")
	rc, err := PodLog(client, "s1", p.Selector, p.Container)(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	if string(b) != "fake logs" { // what the fake clientset streams
		t.Errorf("log %q", b)
	}
	if _, err := PodLog(client, "s2", p.Selector, p.Container)(context.Background()); err == nil || !strings.Contains(err.Error(), "0 pods match") {
		t.Errorf("no controller: err = %v", err)
	}
}

// Lines Traefik v3.6.12 (probegate/traefik's binary) wrote with traefikArgs' access log flags, in
// front of a file-provider route to a local server: one routed, one no router matched.
func TestParseTraefikOutput(t *testing.T) {
	routed := `{"DownstreamStatus":404,"Duration":14599747,"OriginStatus":404,"RequestHost":"shop.example","RequestPath":"/work?x=1","RetryAttempts":0,"RouterName":"r@file","ServiceAddr":"127.0.0.1:18790","StartUTC":"2026-12-03T19:09:06.419368908Z","level":"info","msg":"","request_X-Probegate-Load":"L9","request_X-Vegeta-Seq":"0","time":"2026-12-03T19:09:06Z"}`
	unrouted := `{"DownstreamStatus":404,"Duration":69881,"OriginStatus":0,"RequestHost":"nope.example","RequestPath":"/","RetryAttempts":0,"StartUTC":"2026-12-03T19:09:06.495003788Z","level":"info","msg":"","time":"2026-12-03T19:09:06Z"}`
	e, ok, err := ParseAccessLine([]byte(routed))
	if err != nil || !ok || e.Upstream.String() != "127.0.0.1:18790" || e.Load != "L9" || !e.HasSeq || e.Seq != 0 || e.Status != 404 || e.OriginStatus != 404 || e.Duration != 14599747 {
		t.Errorf("routed: %+v, %v, %v", e, ok, err)
	}
	e, ok, err = ParseAccessLine([]byte(unrouted))
	if err != nil || !ok || e.Upstream.IsValid() || e.HasSeq || e.OriginStatus != 0 {
		t.Errorf("unrouted: %+v, %v, %v", e, ok, err)
	}
}

// Lines of the gateway door's Traefik: the same fields, under a router its Gateway provider names
// (pkg/provider/kubernetes/gateway: "httproute-NS-ROUTE-gw-NS-GATEWAY-ep-ENTRYPOINT-RULE-" and a
// hash of the rule, qualified by the provider), whose service is a weighted round robin over the
// backendRefs' load balancers of pod addresses; a backend with no ready endpoint has no server.
const gatewayLog = `{"DownstreamStatus":200,"Duration":1500000,"OriginStatus":200,"RequestHost":"shop.example","RequestPath":"/work","RetryAttempts":0,"RouterName":"httproute-pg-s1-target-gw-pg-s1-probegate-ep-web-0-3f2a9c1b7d5e0a4c8b6f@kubernetesgateway","ServiceAddr":"10.244.0.12:8080","StartUTC":"2026-12-04T10:00:01.000000000Z","level":"info","msg":"","request_X-Probegate-Load":"L1","request_X-Vegeta-Seq":"0","time":"2026-12-04T10:00:01Z"}
{"DownstreamStatus":503,"Duration":90000,"RequestHost":"shop.example","RequestPath":"/work","RetryAttempts":0,"RouterName":"httproute-pg-s1-target-gw-pg-s1-probegate-ep-web-0-3f2a9c1b7d5e0a4c8b6f@kubernetesgateway","StartUTC":"2026-12-04T10:00:02.000000000Z","level":"info","msg":"","request_X-Probegate-Load":"L1","request_X-Vegeta-Seq":"1","time":"2026-12-04T10:00:02Z"}
`

func TestParseGatewayAccessLog(t *testing.T) {
	es, bad, first := ParseAccessLog(strings.NewReader(gatewayLog))
	if bad != 0 || first != nil || len(es) != 2 {
		t.Fatalf("entries %+v, bad %d, first %v", es, bad, first)
	}
	if e := es[0]; e.Upstream.String() != "10.244.0.12:8080" || e.Status != 200 || e.Load != "L1" || !e.HasSeq || e.Seq != 0 {
		t.Errorf("a request a pod answered: %+v", e)
	}
	if e := es[1]; e.Upstream.IsValid() || e.Status != 503 || e.Seq != 1 {
		t.Errorf("a request no server was chosen for: %+v", e)
	}
}
