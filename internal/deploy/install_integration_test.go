package deploy_test

import (
	"context"
	"io"
	"net/http"
	"sort"
	"testing"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/probegate/probegate/internal/deploy"
	"github.com/probegate/probegate/internal/testcluster"
)

// TestIntegrationInstallGood installs the good fixture on the real cluster, checks that traffic
// reaches every replica through the NodePort, and that the target's database path really runs
// through toxiproxy: a latency toxic withdraws readiness from every pod but the keeper, removing it
// restores every endpoint.
func TestIntegrationInstallGood(t *testing.T) {
	env := testcluster.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	ns := env.Namespace(t)
	slot, err := deploy.FreeSlot(ctx, env.Client)
	if err != nil {
		t.Fatal(err)
	}
	opts := deploy.Options{Namespace: ns, Slot: slot, Timeout: 4 * time.Minute}
	if err := env.Cluster.LoadImages(ctx, deploy.Images(opts)...); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ep, err := deploy.Install(ctx, env.Client, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("installed in %s: target %s, toxiproxy %s", time.Since(start).Round(time.Millisecond), ep.TargetURL, ep.ToxiproxyURL)

	// Install returns once every endpoint is ready; kube-proxy may take a sync period more to route
	// to the last one. Keep asking (a new connection each time) until all 3 replicas have answered.
	pods := map[string]int{}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	deadline := time.Now().Add(30 * time.Second)
	sent := 0
	for (sent < 60 || len(pods) < 3) && time.Now().Before(deadline) {
		resp, err := client.Get(ep.TargetURL + "/work")
		if err != nil {
			t.Fatalf("GET /work through the NodePort: %v", err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /work: %s", resp.Status)
		}
		pods[resp.Header.Get("X-Probegate-Pod")]++
		sent++
	}
	if len(pods) != 3 {
		t.Errorf("%d requests in 30s reached pods %v, want all 3 replicas", sent, pods)
	}
	t.Logf("%d requests reached %v", sent, pods)

	proxy, err := toxiclient.NewClient(ep.ToxiproxyURL).Proxy(ep.ToxiproxyProxy)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := proxy.AddToxic("latency", "latency", "downstream", 1.0, toxiclient.Attributes{"latency": 2000}); err != nil {
		t.Fatal(err)
	}
	// A shared slowdown: every pod but the keeper (the lowest-named, see fixtures/target/peers) withdraws;
	// the keeper stays so the Service never loses its last endpoint.
	readyPods := waitReadyEndpoints(t, ctx, env, ns, 1, 30*time.Second)
	names := make([]string, 0, len(pods))
	for p := range pods {
		names = append(names, p)
	}
	sort.Strings(names)
	if readyPods[0] != names[0] {
		t.Errorf("during the shared slowdown %v stayed ready, want the lowest-named pod %s (of %v)", readyPods, names[0], names)
	}
	// It stays the only one for a while: the guard holds, no flapping.
	time.Sleep(5 * time.Second)
	if again := waitReadyEndpoints(t, ctx, env, ns, 1, time.Second); again[0] != readyPods[0] {
		t.Errorf("keeper changed from %s to %s during the slowdown", readyPods[0], again[0])
	}
	if err := proxy.RemoveToxic("latency"); err != nil {
		t.Fatal(err)
	}
	waitReadyEndpoints(t, ctx, env, ns, 3, 30*time.Second)

	restarts := 0
	list, err := env.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: ep.TargetSelector})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range list.Items {
		for _, c := range p.Status.ContainerStatuses {
			restarts += int(c.RestartCount)
		}
	}
	if restarts != 0 {
		t.Errorf("good variant: %d container restarts during DB slowness, want 0", restarts)
	}
}

// waitReadyEndpoints waits until exactly want target endpoints are ready and returns their pods.
func waitReadyEndpoints(t *testing.T, ctx context.Context, env *testcluster.Env, ns string, want int, within time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(within)
	ready := -1
	for time.Now().Before(deadline) {
		slices, err := env.Client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{
			LabelSelector: discoveryv1.LabelServiceName + "=" + deploy.TargetName,
		})
		if err != nil {
			t.Fatal(err)
		}
		var pods []string
		for _, s := range slices.Items {
			for _, e := range s.Endpoints {
				if (e.Conditions.Ready == nil || *e.Conditions.Ready) && e.TargetRef != nil {
					pods = append(pods, e.TargetRef.Name)
				}
			}
		}
		if ready = len(pods); ready == want {
			return pods
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("target endpoints: %d ready after %s, want %d", ready, within, want)
	return nil
}
