package cluster_test

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/testcluster"
)

// TestIntegrationClusterMultiNode proves the pod network between nodes on a cluster with workers
// (PROBEGATE_WORKERS=2): every node's fence is first in both families, podCIDRs are disjoint, a pod
// on one node reaches a pod on every other node by pod IP with its own address kept (no SNAT) and
// through a ClusterIP Service, DNS answers pods on every node, and host load through the control
// plane's published NodePort reaches pods on the workers. It skips on a single-node cluster.
func TestIntegrationClusterMultiNode(t *testing.T) {
	env := testcluster.Require(t)
	if len(env.Cluster.Nodes) < 2 {
		t.Skipf("cluster %q has one node: run with PROBEGATE_WORKERS=2 for the multi-node test", env.Cluster.Name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cs := env.Client

	checkFences := func(when string) {
		t.Helper()
		fences, err := env.Cluster.Fences(ctx)
		if err != nil || len(fences) != len(env.Cluster.Nodes) {
			t.Fatalf("%s: fences %v, %v; want one per node %v", when, fences, err, env.Cluster.Nodes)
		}
		for _, f := range fences {
			if !f.First() {
				t.Errorf("%s: %s", when, f)
			}
			t.Logf("%s: %s", when, f)
		}
	}
	checkFences("before")

	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) != len(env.Cluster.Nodes) {
		t.Fatalf("list nodes: %v (%d nodes, %d containers)", err, len(nodes.Items), len(env.Cluster.Nodes))
	}
	cidrs := map[string]netip.Prefix{}
	for _, n := range nodes.Items {
		p, err := netip.ParsePrefix(n.Spec.PodCIDR)
		if err != nil {
			t.Fatalf("node %s podCIDR %q: %v", n.Name, n.Spec.PodCIDR, err)
		}
		for other, q := range cidrs {
			if p.Overlaps(q) {
				t.Errorf("podCIDRs of %s (%s) and %s (%s) overlap", n.Name, p, other, q)
			}
		}
		cidrs[n.Name] = p
	}

	image := env.GoImage(t, "./internal/cluster/testdata/smokeserver", "probegate/smoke")
	ns := env.Namespace(t)
	// One pod pinned to each node (the control plane's taint tolerated), and a ClusterIP Service
	// selecting each pod alone; a NodePort Service on the published smoke port selects them all.
	for i, node := range env.Cluster.Nodes {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("mn-%d", i), Labels: map[string]string{"app": "mn", "mn-node": node}},
			Spec: corev1.PodSpec{
				NodeName:                      node,
				TerminationGracePeriodSeconds: ptr.To[int64](1),
				Tolerations:                   []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
				Containers: []corev1.Container{{
					Name: "smoke", Image: image, ImagePullPolicy: corev1.PullNever,
					Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(8080)}},
						PeriodSeconds: 1},
				}},
			},
		}
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("mn-%d", i)},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"mn-node": node},
				Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
		}
		if _, err := cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	all := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "mn-all"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Selector: map[string]string{"app": "mn"},
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080), NodePort: 30099}}},
	}
	if _, err := cs.CoreV1().Services(ns).Create(ctx, all, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	type podAt struct{ name, node, ip, clusterIP string }
	var pods []podAt
	poll(t, ctx, "a Ready pod on every node", func() (bool, string) {
		pods = nil
		for i, node := range env.Cluster.Nodes {
			p, err := cs.CoreV1().Pods(ns).Get(ctx, fmt.Sprintf("mn-%d", i), metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			ready := false
			for _, c := range p.Status.Conditions {
				ready = ready || (c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue)
			}
			if !ready {
				return false, p.Name + " on " + node + " not Ready"
			}
			svc, err := cs.CoreV1().Services(ns).Get(ctx, p.Name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			pods = append(pods, podAt{p.Name, node, p.Status.PodIP, svc.Spec.ClusterIP})
		}
		return true, ""
	})
	for _, p := range pods {
		ip, err := netip.ParseAddr(p.ip)
		if err != nil || !cidrs[p.node].Contains(ip) {
			t.Errorf("pod %s on %s has IP %q outside the node's podCIDR %s", p.name, p.node, p.ip, cidrs[p.node])
		}
	}

	// fetch asks pod from to GET url, through the API server's pod proxy.
	fetch := func(from podAt, url string) string {
		body, err := cs.CoreV1().Pods(ns).ProxyGet("http", from.name, "8080", "/fetch", map[string]string{"url": url}).DoRaw(ctx)
		if err != nil {
			return fmt.Sprintf("error %v %s", err, body)
		}
		return strings.TrimSpace(string(body))
	}
	for _, from := range pods {
		for _, to := range pods {
			if from.node == to.node {
				continue
			}
			want := fmt.Sprintf("200 %s %s", to.name, from.ip)
			poll(t, ctx, fmt.Sprintf("%s (%s) → %s (%s) by pod IP, caller address kept", from.name, from.node, to.name, to.node), func() (bool, string) {
				got := fetch(from, "http://"+to.ip+":8080/whoami")
				return got == want, fmt.Sprintf("%q, want %q", got, want)
			})
			poll(t, ctx, fmt.Sprintf("%s (%s) → %s (%s) through ClusterIP %s", from.name, from.node, to.name, to.node, to.clusterIP), func() (bool, string) {
				got := fetch(from, "http://"+to.clusterIP+"/whoami")
				return strings.HasPrefix(got, "200 "+to.name+" "), got
			})
		}
		name := fmt.Sprintf("mn-all.%s.svc.cluster.local", ns)
		poll(t, ctx, fmt.Sprintf("DNS from %s (%s)", from.name, from.node), func() (bool, string) {
			body, err := cs.CoreV1().Pods(ns).ProxyGet("http", from.name, "8080", "/resolve", map[string]string{"name": name}).DoRaw(ctx)
			return err == nil && len(strings.TrimSpace(string(body))) > 0, fmt.Sprintf("%v %s", err, body)
		})
	}

	// Host load enters the control plane's published port and reaches the pods on every node.
	url := fmt.Sprintf("http://127.0.0.1:%d/whoami", cluster.HostPort(30099))
	seen := map[string]bool{}
	poll(t, ctx, "the published NodePort reaches a pod on every node", func() (bool, string) {
		code, body := get(url)
		if f := strings.Fields(body); code == 200 && len(f) > 0 {
			seen[f[0]] = true
		}
		return len(seen) == len(pods), fmt.Sprintf("seen %v", seen)
	})

	checkFences("after")
}
