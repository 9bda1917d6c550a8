package frontdoor

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/probegate/probegate/internal/timeline"
)

// accessLogFields are the access log fields the controller keeps (Traefik's names, from its
// pkg/middlewares/accesslog): when the request started, how long it took, the server it went to
// (ServiceAddr: ip:port from the server's URL, set on each attempt, so the last one's), what the
// client got and what the server said (absent when no server answered), and how many retries.
var accessLogFields = []string{
	"StartUTC", "Duration", "ServiceAddr", "DownstreamStatus", "OriginStatus", "RetryAttempts",
	"RequestPath", "RequestHost", "RouterName",
}

// AccessEntry is one request as Traefik's JSON access log records it.
type AccessEntry struct {
	Start    time.Time
	Duration time.Duration
	// Upstream is the server the request's last attempt went to; invalid when none was chosen.
	Upstream netip.AddrPort
	// Status is what the client got; OriginStatus what the server answered (0: no answer).
	Status, OriginStatus int
	Retries              int
	Path                 string
	// Load and Seq are the load's id and the request's sequence number (its headers); HasSeq is
	// false for a request the load did not send.
	Load   string
	Seq    uint64
	HasSeq bool
}

// accessLine is the JSON of one access log line. logrus writes a time.Duration as nanoseconds and
// a time.Time as RFC 3339; kept request headers are "request_" + the canonical header name.
type accessLine struct {
	StartUTC         *time.Time `json:"StartUTC"`
	Duration         int64      `json:"Duration"`
	ServiceAddr      string     `json:"ServiceAddr"`
	DownstreamStatus int        `json:"DownstreamStatus"`
	OriginStatus     int        `json:"OriginStatus"`
	RetryAttempts    int        `json:"RetryAttempts"`
	RequestPath      string     `json:"RequestPath"`
	Load             string     `json:"request_X-Probegate-Load"`
	Seq              string     `json:"request_X-Vegeta-Seq"`
}

// ParseAccessLine reads one line of the controller's log: ok is false for a line that is no access
// log entry (the controller's own log lines, blank lines); err for an entry that cannot be read.
func ParseAccessLine(line []byte) (e AccessEntry, ok bool, err error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return AccessEntry{}, false, nil
	}
	var l accessLine
	if err := json.Unmarshal(line, &l); err != nil {
		return AccessEntry{}, false, fmt.Errorf("access log line: %w", err)
	}
	if l.StartUTC == nil || l.DownstreamStatus == 0 {
		return AccessEntry{}, false, nil // not a request: the controller's own JSON log
	}
	e = AccessEntry{
		Start: *l.StartUTC, Duration: time.Duration(l.Duration), Status: l.DownstreamStatus,
		OriginStatus: l.OriginStatus, Retries: l.RetryAttempts, Path: l.RequestPath, Load: l.Load,
	}
	if l.ServiceAddr != "" {
		ap, err := netip.ParseAddrPort(l.ServiceAddr)
		if err != nil {
			return AccessEntry{}, false, fmt.Errorf("access log line: ServiceAddr %q: %w", l.ServiceAddr, err)
		}
		e.Upstream = ap
	}
	if l.Seq != "" {
		n, err := strconv.ParseUint(l.Seq, 10, 64)
		if err != nil {
			return AccessEntry{}, false, fmt.Errorf("access log line: %s %q: %w", SeqHeader, l.Seq, err)
		}
		e.Seq, e.HasSeq = n, true
	}
	return e, true, nil
}

// ParseAccessLog reads every access log entry of r; bad counts entries that could not be read, and
// first is the first such error.
func ParseAccessLog(r io.Reader) (entries []AccessEntry, bad int, first error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		e, ok, err := ParseAccessLine(sc.Bytes())
		switch {
		case err != nil:
			bad++
			if first == nil {
				first = err
			}
		case ok:
			entries = append(entries, e)
		}
	}
	if err := sc.Err(); err != nil && first == nil {
		first = err
	}
	return entries, bad, first
}

// maxDoorDisagreements bounds the examples kept in DoorAttribution.Disagreed.
const maxDoorDisagreements = 10

// AttributeAccess returns a copy of reqs in which every request the access log holds (by load id
// and sequence number) carries the upstream address, the door's retries, and — when the address
// was a pod's at the time (the EndpointSlice entries' address book) and no header named one —
// that pod, PodFrom door. A request the controller answered itself (no server) is NoUpstream.
func AttributeAccess(door string, reqs []timeline.Request, log []AccessEntry, loadID string, entries []timeline.Entry) ([]timeline.Request, timeline.DoorAttribution) {
	bySeq := map[uint64]AccessEntry{}
	sum := timeline.DoorAttribution{Door: door}
	for _, e := range log {
		if !e.HasSeq || e.Load != loadID {
			continue
		}
		sum.Lines++
		bySeq[e.Seq] = e
	}
	pods := timeline.Addresses(entries)
	out := make([]timeline.Request, len(reqs))
	reached := 0
	for i, q := range reqs {
		out[i] = q
		e, ok := bySeq[q.Seq]
		if !ok {
			if q.Reached() {
				reached++
			}
			continue
		}
		out[i].DoorRetries = e.Retries
		if e.Retries > 0 {
			sum.Retried++
		}
		if !e.Upstream.IsValid() {
			out[i].NoUpstream = true
			sum.NoUpstream++
			continue
		}
		out[i].Upstream = e.Upstream.String()
		if !out[i].Reached() {
			continue
		}
		reached++
		pod := pods.PodAt(e.Upstream.Addr(), q.T)
		if pod == "" {
			sum.UnknownAddresses++
			continue
		}
		sum.Found++
		switch {
		case q.Pod == "":
			out[i].Pod, out[i].PodFrom = pod, door
		case q.Pod == pod:
			sum.Compared++
			sum.Agreed++
		default:
			sum.Compared++
			if len(sum.Disagreed) < maxDoorDisagreements {
				sum.Disagreed = append(sum.Disagreed, fmt.Sprintf("seq %d: header %s, %s %s", q.Seq, q.Pod, door, pod))
			}
		}
	}
	sum.Coverage = ratio(sum.Found, reached)
	sum.Agreement = ratio(sum.Agreed, sum.Compared)
	return out, sum
}

func ratio(n, d int) float64 {
	if d == 0 {
		return 1
	}
	return float64(n) / float64(d)
}

// LogSource opens the controller's log from its start, following it (until ctx ends).
type LogSource func(ctx context.Context) (io.ReadCloser, error)

// PodLog is the log of the container of the one pod that selector finds in ns, followed.
func PodLog(client kubernetes.Interface, ns, selector, container string) LogSource {
	return func(ctx context.Context) (io.ReadCloser, error) {
		pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return nil, fmt.Errorf("list the controller's pods: %w", err)
		}
		if len(pods.Items) != 1 {
			return nil, fmt.Errorf("%d pods match %s in %s: want the controller's one", len(pods.Items), selector, ns)
		}
		rc, err := client.CoreV1().Pods(ns).GetLogs(pods.Items[0].Name, &corev1.PodLogOptions{Container: container, Follow: true}).Stream(ctx)
		if err != nil {
			return nil, fmt.Errorf("read the log of %s/%s: %w", ns, pods.Items[0].Name, err)
		}
		return rc, nil
	}
}

// Tail collects the access log entries of a followed log as they are written, so a long load's
// log is read as it goes (kubelet rotates container logs) and its end is known when it lands.
type Tail struct {
	cancel context.CancelFunc
	rc     io.ReadCloser
	done   chan struct{}

	mu      sync.Mutex
	entries []AccessEntry
	bad     int
	err     error // the first unreadable entry, or the stream's error
	changed chan struct{}
}

// StartTail follows src until Stop.
func StartTail(ctx context.Context, src LogSource) (*Tail, error) {
	ctx, cancel := context.WithCancel(ctx)
	rc, err := src(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	t := &Tail{cancel: cancel, rc: rc, done: make(chan struct{}), changed: make(chan struct{})}
	go func() {
		defer close(t.done)
		defer rc.Close()
		sc := bufio.NewScanner(rc)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			e, ok, err := ParseAccessLine(sc.Bytes())
			if !ok && err == nil {
				continue
			}
			t.mu.Lock()
			if err != nil {
				t.bad++
				if t.err == nil {
					t.err = err
				}
			} else {
				t.entries = append(t.entries, e)
			}
			close(t.changed)
			t.changed = make(chan struct{})
			t.mu.Unlock()
		}
		if err := sc.Err(); err != nil && ctx.Err() == nil && !errors.Is(err, io.ErrClosedPipe) {
			t.mu.Lock()
			if t.err == nil {
				t.err = fmt.Errorf("follow the controller's log: %w", err)
			}
			t.mu.Unlock()
		}
	}()
	return t, nil
}

// WaitFor waits until done holds for the entries read so far, the log ends, or max passes.
func (t *Tail) WaitFor(ctx context.Context, done func([]AccessEntry) bool, max time.Duration) {
	timer := time.NewTimer(max)
	defer timer.Stop()
	for {
		t.mu.Lock()
		ok, changed := done(t.entries), t.changed
		t.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-t.done:
			return
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// Stop ends the follow and returns every entry read, how many could not be read and the first
// problem.
func (t *Tail) Stop() ([]AccessEntry, int, error) {
	t.cancel()
	t.rc.Close() // a read in progress returns
	<-t.done
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.entries, t.bad, t.err
}

// accessLogRecorder reads an ingress controller's access log through a Tail.
type accessLogRecorder struct {
	door string
	tail *Tail
	once sync.Once
	out  struct {
		entries []AccessEntry
		bad     int
		err     error
	}
}

// recordAccessLog follows the log of the door's controller pod from its start.
func recordAccessLog(ctx context.Context, client kubernetes.Interface, door Opened) (Recorder, error) {
	if door.Selector == "" {
		return nil, errors.New("the door names no controller pods")
	}
	t, err := StartTail(ctx, PodLog(client, door.Namespace, door.Selector, door.Container))
	if err != nil {
		return nil, err
	}
	return &accessLogRecorder{door: door.Kind, tail: t}, nil
}

func (r *accessLogRecorder) Stop() {
	r.once.Do(func() { r.out.entries, r.out.bad, r.out.err = r.tail.Stop() })
}

// Attribute implements Recorder. It fails only when the log holds none of the load's requests
// although some were answered: then nothing it would say can be trusted.
func (r *accessLogRecorder) Attribute(ctx context.Context, loadID string, reqs []timeline.Request, entries []timeline.Entry, wait time.Duration) ([]timeline.Request, timeline.DoorAttribution, error) {
	answered := 0
	for _, q := range reqs {
		if q.Status != 0 {
			answered++
		}
	}
	r.tail.WaitFor(ctx, func(es []AccessEntry) bool { return linesOf(es, loadID) >= answered }, wait)
	r.Stop()
	out, sum := AttributeAccess(r.door, reqs, r.out.entries, loadID, entries)
	if sum.Lines == 0 && answered > 0 {
		err := fmt.Errorf("the controller's access log holds none of the load's %d answered requests (%d entries read, %d unreadable)", answered, len(r.out.entries), r.out.bad)
		if r.out.err != nil {
			err = fmt.Errorf("%w: %w", err, r.out.err)
		}
		return reqs, sum, err
	}
	return out, sum, nil
}

// linesOf counts the entries of load loadID.
func linesOf(es []AccessEntry, loadID string) int {
	n := 0
	for _, e := range es {
		if e.HasSeq && e.Load == loadID {
			n++
		}
	}
	return n
}
