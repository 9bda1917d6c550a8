package observers

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	"github.com/probegate/probegate/internal/testcluster"
	"github.com/probegate/probegate/internal/timeline"
)

// cuttableDialer dials the apiserver and can drop every connection it made and refuse new ones,
// as a network partition between probegate and the apiserver would.
type cuttableDialer struct {
	d       net.Dialer
	blocked atomic.Bool
	mu      sync.Mutex
	conns   []net.Conn
}

func (c *cuttableDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if c.blocked.Load() {
		return nil, fmt.Errorf("dial %s: cut by test", addr)
	}
	conn, err := c.d.DialContext(ctx, network, addr)
	if err == nil {
		c.mu.Lock()
		c.conns = append(c.conns, conn)
		c.mu.Unlock()
	}
	return conn, err
}

// cut closes every connection and refuses new ones until restore.
func (c *cuttableDialer) cut() int {
	c.blocked.Store(true)
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.conns)
	for _, conn := range c.conns {
		_ = conn.Close()
	}
	c.conns = nil
	return n
}

func (c *cuttableDialer) restore() { c.blocked.Store(false) }

func webObjects(ns, image string, replicas int32) (*corev1.Service, *appsv1.Deployment) {
	labels := map[string]string{"app": "web"}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec:       corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Name: "http", Port: 8080, TargetPort: intstr.FromInt32(8080)}}},
	}
	// Generous timeouts and thresholds: on a loaded 2-core machine a 1 s probe timeout flaps.
	probe := func(path string, threshold int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(8080)}},
			PeriodSeconds: 1, TimeoutSeconds: 5, FailureThreshold: threshold, SuccessThreshold: 1,
		}
	}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr(int64(10)),
					Containers: []corev1.Container{{
						Name: "app", Image: image, ImagePullPolicy: corev1.PullNever,
						Env:            []corev1.EnvVar{{Name: "DRAIN", Value: "2s"}},
						Ports:          []corev1.ContainerPort{{ContainerPort: 8080}},
						ReadinessProbe: probe("/readyz", 3),
						LivenessProbe:  probe("/livez", 3),
						StartupProbe:   probe("/livez", 120),
					}},
				},
			},
		},
	}
	return svc, dep
}

// tlWait polls the timeline until cond holds or the timeout passes.
func tlWait(t *testing.T, tl *timeline.Timeline, what string, timeout time.Duration, cond func([]timeline.Entry) bool) []timeline.Entry {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		es := tl.Entries()
		if cond(es) {
			return es
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s; timeline:\n%s", timeout, what, dump(es))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// endpointLog returns the endpoint entries of one pod in time order.
func endpointLog(es []timeline.Entry, pod string) []timeline.Entry {
	var out []timeline.Entry
	for _, e := range es {
		if e.Kind == timeline.KindEndpoint && e.Pod == pod {
			out = append(out, e)
		}
	}
	return out
}

// readyPods returns the pods whose endpoint the timeline currently shows ready, sorted.
func readyPods(es []timeline.Entry) []string {
	last := map[string]*timeline.EndpointState{}
	for _, e := range es {
		if e.Kind == timeline.KindEndpoint {
			last[e.Pod] = e.Endpoint.To
		}
	}
	var out []string
	for p, s := range last {
		if s != nil && s.Ready {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// apiEndpoints reads the Service's EndpointSlices now: pod → state, with nil conditions defaulted.
func apiEndpoints(ctx context.Context, t *testing.T, c kubernetes.Interface, ns string) map[string]timeline.EndpointState {
	t.Helper()
	list, err := c.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=web"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]timeline.EndpointState{}
	for i := range list.Items {
		for k, info := range endpointsOf(&list.Items[i], nil) {
			out[k.pod] = info.state
		}
	}
	return out
}

// timelineEndpoints is the same view reconstructed from the timeline alone.
func timelineEndpoints(es []timeline.Entry) map[string]timeline.EndpointState {
	out := map[string]timeline.EndpointState{}
	for _, e := range es {
		if e.Kind != timeline.KindEndpoint {
			continue
		}
		if e.Endpoint.To == nil {
			delete(out, e.Pod)
		} else {
			out[e.Pod] = *e.Endpoint.To
		}
	}
	return out
}

// timelinePods is the set of pods the timeline says exist.
func timelinePods(es []timeline.Entry) map[string]bool {
	out := map[string]bool{}
	for _, e := range es {
		if e.Kind != timeline.KindPod {
			continue
		}
		switch e.PodChange.Field {
		case "created":
			out[e.Pod] = true
		case "deleted":
			delete(out, e.Pod)
		}
	}
	return out
}

func apiPods(ctx context.Context, t *testing.T, c kubernetes.Interface, ns string) map[string]bool {
	t.Helper()
	list, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, p := range list.Items {
		out[p.Name] = true
	}
	return out
}

func scale(ctx context.Context, t *testing.T, c kubernetes.Interface, ns string, n int32) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := c.AppsV1().Deployments(ns).GetScale(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		s.Spec.Replicas = n
		_, err = c.AppsV1().Deployments(ns).UpdateScale(ctx, "web", s, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("scale web to %d: %v", n, err)
	}
}

// waitAPI polls the API (through the test's own client) until cond holds.
func waitAPI(t *testing.T, what string, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s: %s", timeout, what, state)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func readyEndpointCount(ctx context.Context, t *testing.T, c kubernetes.Interface, ns string) (int, map[string]timeline.EndpointState) {
	eps := apiEndpoints(ctx, t, c, ns)
	n := 0
	for _, s := range eps {
		if s.Ready {
			n++
		}
	}
	return n, eps
}

// must stops the parent test when a step failed: later steps build on it.
func must(t *testing.T, ok bool) {
	t.Helper()
	if !ok {
		t.FailNow()
	}
}

func hasPrefix(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

func mapsEqual[V comparable](a, b map[string]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestIntegrationObserverLifecycle runs a real Deployment on the kind cluster and checks the exact
// entries for a scale-up, a pod deletion and a liveness failure, then cuts the observer's
// connection to the apiserver while pods change and checks that the relist recovers every change.
func TestIntegrationObserverLifecycle(t *testing.T) {
	env := testcluster.Require(t)
	ns := env.Namespace(t)
	image := env.GoImage(t, "./observers/testdata/probeserver", "probegate/observer-probe")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()

	dialer := &cuttableDialer{}
	cfg := rest.CopyConfig(env.Config)
	cfg.Dial = dialer.DialContext
	obsClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tl := timeline.New(time.Now())
	obs, err := New(obsClient, tl, Options{Namespace: ns, Service: "web", Deployment: "web"})
	if err != nil {
		t.Fatal(err)
	}
	obs.Start(ctx)
	defer obs.Stop()
	if err := obs.WaitForSync(ctx); err != nil {
		t.Fatal(err)
	}

	svc, dep := webObjects(ns, image, 1)
	if _, err := env.Client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Client.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	es := tlWait(t, tl, "one ready endpoint", 240*time.Second, func(es []timeline.Entry) bool { return len(readyPods(es)) == 1 })
	first := readyPods(es)[0]

	// Scale up: the rollout progress reaches 2 ready and a second endpoint turns ready.
	must(t, t.Run("scale", func(t *testing.T) {
		scale(ctx, t, env.Client, ns, 2)
		es := tlWait(t, tl, "two ready endpoints", 180*time.Second, func(es []timeline.Entry) bool { return len(readyPods(es)) == 2 })
		sawTwoReady := false
		for _, e := range es {
			if e.Kind == timeline.KindRollout && e.Rollout.Replicas == 2 && e.Rollout.Ready == 2 {
				sawTwoReady = true
			}
		}
		if !sawTwoReady {
			tlWait(t, tl, "rollout ready=2", 10*time.Second, func(es []timeline.Entry) bool {
				for _, e := range es {
					if e.Kind == timeline.KindRollout && e.Rollout.Replicas == 2 && e.Rollout.Ready == 2 {
						return true
					}
				}
				return false
			})
		}
	}))
	pods := readyPods(tl.Entries())
	second := pods[0]
	if second == first {
		second = pods[1]
	}

	// Delete the first pod: ready → not ready + terminating → gone, on the pod's own endpoint.
	must(t, t.Run("delete", func(t *testing.T) {
		mark := tl.Since(time.Now())
		if err := env.Client.CoreV1().Pods(ns).Delete(ctx, first, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		es := tlWait(t, tl, "endpoint of "+first+" removed", 120*time.Second, func(es []timeline.Entry) bool {
			log := endpointLog(es, first)
			return len(log) > 0 && log[len(log)-1].Endpoint.Change == timeline.EndpointRemoved
		})
		var after []timeline.Entry
		for _, e := range endpointLog(es, first) {
			if e.T >= mark {
				after = append(after, e)
			}
		}
		if len(after) < 2 {
			t.Fatalf("endpoint entries after delete: %s", dump(after))
		}
		head, tail := after[0].Endpoint, after[len(after)-1].Endpoint
		if head.Change != timeline.EndpointChanged || head.From == nil || !head.From.Ready || head.To == nil || head.To.Ready || !head.To.Terminating {
			t.Fatalf("first change after delete is not ready→not-ready+terminating: %s", dump(after))
		}
		if tail.Change != timeline.EndpointRemoved || tail.From == nil || !tail.From.Terminating {
			t.Fatalf("last entry is not the removal of a terminating endpoint: %s", dump(after))
		}
		for _, e := range after[1 : len(after)-1] {
			if e.Endpoint.Change != timeline.EndpointChanged || !e.Endpoint.To.Terminating || e.Endpoint.To.Ready {
				t.Fatalf("unexpected entry between withdrawal and removal: %s", dump(after))
			}
		}
		for _, e := range after {
			if e.Recovered {
				t.Fatalf("live entry marked recovered: %s", describe(e))
			}
		}
		es = tlWait(t, tl, "pod "+first+" deleted", 30*time.Second, func(es []timeline.Entry) bool {
			return hasPrefix(kinds(es, timeline.KindPod), "pod "+first+" deleted ")
		})
		podLines := kinds(es, timeline.KindPod, timeline.KindRestart)
		iDeleting, iEnd, iDeleted := -1, -1, -1
		for i, l := range podLines {
			switch {
			case l == "pod "+first+" deleting ->true":
				iDeleting = i
			case strings.HasPrefix(l, "restart "+first+" app #") && strings.HasSuffix(l, " deletion"):
				iEnd = i
			case strings.HasPrefix(l, "pod "+first+" deleted "):
				iDeleted = i
			}
		}
		if iDeleting < 0 || iEnd < iDeleting || iDeleted < iEnd {
			t.Fatalf("want deleting → restart(deletion) → deleted for %s, got:\n  %s", first, strings.Join(podLines, "\n  "))
		}
	}))

	// Fail the second pod's liveness probe: restartCount +1 with cause liveness; its endpoint goes
	// not ready (not terminating) and comes back.
	must(t, t.Run("liveness", func(t *testing.T) {
		mark := tl.Since(time.Now())
		body, err := env.Client.CoreV1().Pods(ns).ProxyGet("http", second, "8080", "/fail", map[string]string{"probe": "liveness"}).DoRaw(ctx)
		if err != nil {
			t.Fatalf("fail liveness of %s: %v (%s)", second, err, body)
		}
		es := tlWait(t, tl, "restart of "+second, 120*time.Second, func(es []timeline.Entry) bool {
			for _, e := range es {
				if e.Kind == timeline.KindRestart && e.Pod == second {
					return true
				}
			}
			return false
		})
		var rs []timeline.Entry
		for _, e := range es {
			if e.Kind == timeline.KindRestart && e.Pod == second {
				rs = append(rs, e)
			}
		}
		if len(rs) != 1 || rs[0].Restart.RestartCount != 1 || rs[0].Restart.Container != "app" {
			t.Fatalf("want exactly one restart #1 of %s/app, got %s", second, dump(rs))
		}
		t.Logf("live attribution: %s (%s)", rs[0].Restart.Cause, rs[0].Restart.Evidence)
		// Give a late Killing event time to arrive, then take the final attribution.
		time.Sleep(restartSettle)
		var final timeline.Entry
		for _, e := range AttributeRestarts(tl.Entries()) {
			if e.Kind == timeline.KindRestart && e.Pod == second {
				final = e
			}
		}
		if final.Restart.Cause != timeline.CauseLiveness {
			t.Fatalf("restart cause = %s (%s), want liveness; timeline:\n%s", final.Restart.Cause, final.Restart.Evidence, dump(tl.Entries()))
		}
		es = tlWait(t, tl, second+" ready again", 180*time.Second, func(es []timeline.Entry) bool {
			log := endpointLog(es, second)
			return len(log) > 0 && log[len(log)-1].T > mark && log[len(log)-1].Endpoint.To != nil && log[len(log)-1].Endpoint.To.Ready
		})
		var after []string
		for _, e := range endpointLog(es, second) {
			if e.T >= mark {
				after = append(after, describe(e))
			}
		}
		if len(after) < 2 || !strings.HasSuffix(after[0], "RS->-") && !strings.HasSuffix(after[0], "RS->S") || !strings.HasSuffix(after[len(after)-1], "->RS") {
			t.Fatalf("endpoint of %s after liveness failure: want ready → not ready (not terminating) → ready, got\n  %s", second, strings.Join(after, "\n  "))
		}
		probes := 0
		for _, e := range es {
			if e.Kind == timeline.KindProbe && e.Pod == second && e.Probe.Probe == timeline.ProbeLiveness && e.T >= mark {
				probes++
			}
		}
		if probes == 0 {
			t.Fatalf("no liveness ProbeFailure entries for %s", second)
		}
	}))

	// Cut the observer's connection while the Deployment scales to 3 and a pod is deleted; every
	// change must reach the timeline through the relist, marked recovered.
	must(t, t.Run("watch-cut", func(t *testing.T) {
		before := tl.Len()
		relists := obs.Relists()
		if n := dialer.cut(); n == 0 {
			t.Fatal("no apiserver connection to cut")
		}
		scale(ctx, t, env.Client, ns, 3)
		// Readiness may flap on a loaded machine: wait for the set of pods and endpoints, not states.
		waitAPI(t, "3 endpoints", 240*time.Second, func() (bool, string) {
			eps := apiEndpoints(ctx, t, env.Client, ns)
			return len(eps) == 3, fmt.Sprint(eps)
		})
		if err := env.Client.CoreV1().Pods(ns).Delete(ctx, second, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitAPI(t, second+" gone and its replacement's endpoint present", 240*time.Second, func() (bool, string) {
			pods := apiPods(ctx, t, env.Client, ns)
			eps := apiEndpoints(ctx, t, env.Client, ns)
			_, stillListed := eps[second]
			return !pods[second] && !stillListed && len(pods) == 3 && len(eps) == 3, fmt.Sprint(eps)
		})
		gapEnd := tl.Since(time.Now())
		if n := tl.Len(); n > before+4 {
			// Only the watch-gap marks may have been written while the connection was cut.
			t.Fatalf("entries written during the cut:\n%s", dump(tl.Entries()[before:]))
		}
		dialer.restore()

		// The timeline must converge on the API's state (read fresh each time: readiness may still
		// change after the gap, and those changes arrive live).
		var wantPods map[string]bool
		var wantEps map[string]timeline.EndpointState
		es := tlWait(t, tl, "timeline to match the API after the relist", 120*time.Second, func(es []timeline.Entry) bool {
			wantPods, wantEps = apiPods(ctx, t, env.Client, ns), apiEndpoints(ctx, t, env.Client, ns)
			return mapsEqual(timelinePods(es), wantPods) && mapsEqual(timelineEndpoints(es), wantEps)
		})
		t.Logf("timeline matches the API: pods %v, endpoints %v", wantPods, wantEps)
		rl := obs.Relists()
		if rl["pods"] <= relists["pods"] || rl["endpointslices"] <= relists["endpointslices"] {
			t.Fatalf("relists %v → %v: the gap was not recovered by a relist", relists, rl)
		}
		var recovered, live []string
		for _, e := range es[before:] {
			if e.Kind == timeline.KindMark {
				continue
			}
			if e.Recovered {
				recovered = append(recovered, describe(e))
			} else if e.T < gapEnd {
				live = append(live, describe(e))
			}
		}
		if len(live) > 0 {
			t.Fatalf("entries for gap changes not marked recovered:\n  %s", strings.Join(live, "\n  "))
		}
		if !hasPrefix(recovered, "pod "+second+" deleted ") {
			t.Fatalf("deletion of %s not among recovered entries:\n  %s", second, strings.Join(recovered, "\n  "))
		}
		created := 0
		for _, l := range recovered {
			if strings.Contains(l, " created ->") {
				created++
			}
		}
		if created != 2 {
			t.Fatalf("want 2 pods created during the gap (scale-up + replacement), got %d:\n  %s", created, strings.Join(recovered, "\n  "))
		}
		if !hasLine(kinds(es, timeline.KindMark), "mark watch-gap pods watch ended; relisting") {
			t.Fatalf("no watch-gap mark for pods")
		}
		t.Logf("recovered after the cut:\n  %s", strings.Join(recovered, "\n  "))

		// Live again: a scale-down is observed live, not recovered.
		mark := tl.Since(time.Now())
		scale(ctx, t, env.Client, ns, 2)
		es = tlWait(t, tl, "scale-down observed", 60*time.Second, func(es []timeline.Entry) bool {
			for _, e := range es {
				if e.T > mark && e.Kind == timeline.KindPod && e.PodChange.Field == "deleting" {
					return true
				}
			}
			return false
		})
		for _, e := range es {
			if e.T > mark && e.Recovered {
				t.Fatalf("entry after the gap marked recovered: %s", describe(e))
			}
		}
	}))
}

// restartSettle is how long the liveness test waits for a late Killing event before the final pass.
const restartSettle = 3 * time.Second
