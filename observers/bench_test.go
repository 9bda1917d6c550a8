package observers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/probegate/probegate/internal/benchfig"
	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/timeline"
)

// lagRecorder is a timeline stream sink that notes when each lag-probe event entry was appended.
type lagRecorder struct {
	mu       sync.Mutex
	appended map[string]time.Time
}

func (r *lagRecorder) Write(p []byte) (int, error) {
	now := time.Now()
	var e timeline.Entry
	if err := json.Unmarshal(p, &e); err == nil && e.Event != nil && e.Event.Reason == "ProbegateLag" {
		r.mu.Lock()
		r.appended[e.Event.Message] = now
		r.mu.Unlock()
	}
	return len(p), nil
}

// BenchmarkObserverLag measures, on the real cluster, the delay between an independent second
// watch (its own client and connection) receiving an object and probegate's timeline entry for it
// being appended. It creates Events (the cheapest object the observer turns into an entry) at a
// steady pace. Skips when the kind cluster is not running.
func BenchmarkObserverLag(b *testing.B) {
	if testing.Short() {
		b.Skip("needs the kind cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// Look for the node container first: finding no cluster must not install or create anything.
	node := cluster.DefaultName + "-control-plane"
	if out, err := exec.CommandContext(ctx, "docker", "inspect", "-f", "{{.State.Running}}", node).Output(); err != nil || strings.TrimSpace(string(out)) != "true" {
		b.Skipf("no kind cluster running (node container %s)", node)
	}
	c, err := cluster.Get(ctx, "")
	if err != nil {
		b.Skipf("no kind cluster running: %v", err)
	}
	cfg, err := c.RESTConfig()
	if err != nil {
		b.Skipf("no kind cluster config: %v", err)
	}
	obsClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	indepClient, err := kubernetes.NewForConfig(cfg) // a separate transport: its own connection
	if err != nil {
		b.Fatal(err)
	}
	writer, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	nsName := fmt.Sprintf("bench-lag-%d", time.Now().UnixNano()%100000)
	if _, err := writer.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nsName}}, metav1.CreateOptions{}); err != nil {
		b.Skipf("cluster not usable: %v", err)
	}
	defer func() { _ = writer.CoreV1().Namespaces().Delete(context.Background(), nsName, metav1.DeleteOptions{}) }()

	tl := timeline.New(time.Now())
	rec := &lagRecorder{appended: map[string]time.Time{}}
	tl.StreamTo(rec)
	obs, err := New(obsClient, tl, Options{Namespace: nsName})
	if err != nil {
		b.Fatal(err)
	}
	obs.Start(ctx)
	defer obs.Stop()
	if err := obs.WaitForSync(ctx); err != nil {
		b.Fatal(err)
	}
	w, err := indepClient.CoreV1().Events(nsName).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	seen := map[string]time.Time{}
	var seenMu sync.Mutex
	go func() {
		for ev := range w.ResultChan() {
			now := time.Now()
			if e, ok := ev.Object.(*corev1.Event); ok && ev.Type == watch.Added {
				seenMu.Lock()
				seen[e.Message] = now
				seenMu.Unlock()
			}
		}
	}()

	const n = 300
	b.ResetTimer()
	for i := 0; i < n; i++ {
		ev := &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("lag-%d", i), Namespace: nsName},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: nsName, Name: "lag"},
			Reason:         "ProbegateLag", Message: "lag-probe " + strconv.Itoa(i), Type: corev1.EventTypeNormal,
			FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(), Count: 1,
		}
		if _, err := writer.CoreV1().Events(nsName).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		time.Sleep(30 * time.Millisecond)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		rec.mu.Lock()
		seenMu.Lock()
		done := len(rec.appended) == n && len(seen) == n
		seenMu.Unlock()
		rec.mu.Unlock()
		if done || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.StopTimer()
	var lags []time.Duration
	rec.mu.Lock()
	seenMu.Lock()
	for msg, at := range rec.appended {
		if s, ok := seen[msg]; ok {
			lags = append(lags, at.Sub(s))
		}
	}
	seenMu.Unlock()
	rec.mu.Unlock()
	if len(lags) < n {
		b.Fatalf("only %d of %d events reached both watches", len(lags), n)
	}
	sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
	p := func(q float64) time.Duration { return lags[int(q*float64(len(lags)-1))] }
	b.Logf("observer lag over %d events: p50 %v p90 %v p99 %v max %v", len(lags), p(0.5), p(0.9), p(0.99), lags[len(lags)-1])
	b.ReportMetric(float64(p(0.99))/1e6, "p99-ms")
	benchfig.Print("observer_lag_p99", float64(p(0.99))/1e6, "ms", "<=50")
}

// BenchmarkObserverMemory drives one simulated hour of a 3-pod target through a fake clientset
// (each second: a status update per pod and an EndpointSlice update that change nothing the
// observer tracks; every 30 s a readiness flip of one pod with its endpoint, and an event) and
// reports the observer's heap growth per hour beyond the timeline's own entries.
func BenchmarkObserverMemory(b *testing.B) {
	const hour = 3600 // simulated seconds
	var growth, perEntry float64
	for i := 0; i < b.N; i++ {
		growth, perEntry = observerHourGrowth(b, hour)
	}
	b.ReportMetric(growth/1024, "KiB/hour")
	b.ReportMetric(perEntry, "B/entry")
	benchfig.Print("observer_heap_growth_per_hour", growth/1024, "KiB", "<=1024")
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// observerHourGrowth returns heap growth over simulated seconds beyond the timeline, scaled to one
// hour, and the measured heap cost of one timeline entry.
func observerHourGrowth(b *testing.B, seconds int) (float64, float64) {
	b.Helper()
	r := newRig(b, Options{Service: "web", MoveWindow: -1})
	ctx := context.Background()
	pods := []*corev1.Pod{pod("p1"), pod("p2"), pod("p3")}
	sl := slice("web-a", ep("p1", "10.0.0.1", nil, nil, nil), ep("p2", "10.0.0.2", nil, nil, nil), ep("p3", "10.0.0.3", nil, nil, nil))
	podStore := r.obs.informers[0].informer.GetStore()
	tick := 0
	drive := func(sec int) {
		for i, p := range pods {
			tick++
			p.Annotations = map[string]string{"tick": strconv.Itoa(tick)}
			if sec%30 == 0 && i == (sec/30)%3 {
				ready := p.Status.ContainerStatuses[0].Ready
				p.Status.ContainerStatuses[0].Ready = !ready
				sl.Endpoints[i].Conditions.Ready = ptr(!ready)
			}
			if _, err := r.client.CoreV1().Pods(ns).Update(ctx, p, metav1.UpdateOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		sl.Labels["tick"] = strconv.Itoa(sec)
		if _, err := r.client.DiscoveryV1().EndpointSlices(ns).Update(ctx, sl, metav1.UpdateOptions{}); err != nil {
			b.Fatal(err)
		}
		if sec%30 == 0 {
			ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("e-%d", sec), Namespace: ns},
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p1"}, Reason: "Pulled", Message: "image present", Count: 1}
			if _, err := r.client.CoreV1().Events(ns).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
			// Events expire on a real cluster (1 h TTL); delete as the apiserver would.
			if sec >= 600 {
				_ = r.client.CoreV1().Events(ns).Delete(ctx, fmt.Sprintf("e-%d", sec-600), metav1.DeleteOptions{})
			}
		}
		// The fake clientset records every action; a real apiserver keeps nothing per request.
		r.client.ClearActions()
		// Keep pace with the informer so the fake watch's buffer never overflows.
		if sec%5 != 0 {
			return
		}
		want := strconv.Itoa(tick)
		for {
			obj, ok, _ := podStore.GetByKey(ns + "/p3")
			if ok && obj.(*corev1.Pod).Annotations["tick"] == want {
				break
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	for _, p := range pods {
		if _, err := r.client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := r.client.DiscoveryV1().EndpointSlices(ns).Create(ctx, sl, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	warm := seconds / 10
	for s := 1; s <= warm; s++ {
		drive(s)
	}
	time.Sleep(200 * time.Millisecond)
	startEntries := r.tl.Len()
	h0 := heapInUse()
	for s := warm + 1; s <= warm+seconds; s++ {
		drive(s)
	}
	time.Sleep(200 * time.Millisecond)
	h1 := heapInUse()
	added := r.tl.Entries()[startEntries:]

	// Calibrate the heap cost of these entries: rebuild them (deep, through JSON) on a new timeline.
	var buf bytes.Buffer
	for _, e := range added {
		_ = json.NewEncoder(&buf).Encode(e)
	}
	c0 := heapInUse()
	shadow, err := timeline.Load(&buf)
	if err != nil {
		b.Fatal(err)
	}
	c1 := heapInUse()
	perEntry := float64(int64(c1)-int64(c0)) / float64(len(added))
	runtime.KeepAlive(shadow)
	buf.Reset()

	beyond := float64(int64(h1)-int64(h0)) - perEntry*float64(len(added))
	b.Logf("heap %d → %d bytes over %d s, %d entries × %.0f B; beyond the timeline %.0f B", h0, h1, seconds, len(added), perEntry, beyond)
	r.obs.Stop()
	return beyond * 3600 / float64(seconds), perEntry
}
