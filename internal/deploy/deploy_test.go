package deploy

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestOptionsRejectBadInput(t *testing.T) {
	cases := []struct {
		opts Options
		want string
	}{
		{Options{}, "namespace: required"},
		{Options{Namespace: "Bad_NS"}, `namespace "Bad_NS"`},
		{Options{Namespace: "ns", Variant: "sloppy"}, `variant "sloppy": unknown`},
		{Options{Namespace: "ns", Slot: 4}, "slot 4"},
		{Options{Namespace: "ns", Slot: -1}, "slot -1"},
		{Options{Namespace: "ns", Replicas: -2}, "replicas -2"},
		{Options{Namespace: "ns", Env: map[string]string{"VARIANT": "good"}}, `env "VARIANT"`},
	}
	for _, tc := range cases {
		_, err := Install(context.Background(), fake.NewClientset(), tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.opts, err, tc.want)
		}
	}
}

func TestInstallRejectsBadInputBeforeTouchingTheCluster(t *testing.T) {
	client := fake.NewClientset()
	if _, err := Install(context.Background(), client, Options{Namespace: "ns", Variant: "nope"}); err == nil {
		t.Fatal("no error")
	}
	if n := len(client.Actions()); n != 0 {
		t.Fatalf("%d API calls on bad input, want none (nothing half-applied)", n)
	}
}

func TestObjectsForFillsSlotReplicasImagesAndEnv(t *testing.T) {
	opts := Options{Namespace: "ns1", Variant: "no-drain", Slot: 2, Replicas: 5, TargetImage: "probegate/target:abc",
		Env: map[string]string{"BOOTSTRAP_DURATION": "30s", "WORK_SLEEP": "20ms"}}
	if err := opts.defaults(); err != nil {
		t.Fatal(err)
	}
	objs, err := objectsFor("no-drain", opts)
	if err != nil {
		t.Fatal(err)
	}
	var sawSvc, sawDep bool
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.Service:
			sawSvc = true
			if o.Namespace != "ns1" || o.Spec.Ports[0].NodePort != 30082 {
				t.Errorf("target Service: ns %q nodePort %d, want ns1 30082", o.Namespace, o.Spec.Ports[0].NodePort)
			}
		case *appsv1.Deployment:
			sawDep = true
			c := o.Spec.Template.Spec.Containers[0]
			if o.Namespace != "ns1" || *o.Spec.Replicas != 5 || c.Image != "probegate/target:abc" {
				t.Errorf("target Deployment: ns %q replicas %d image %q", o.Namespace, *o.Spec.Replicas, c.Image)
			}
			env := map[string]string{}
			count := map[string]int{}
			for _, e := range c.Env {
				env[e.Name] = e.Value
				count[e.Name]++
			}
			if env["BOOTSTRAP_DURATION"] != "30s" || env["WORK_SLEEP"] != "20ms" || env["VARIANT"] != "no-drain" {
				t.Errorf("env overrides not applied: %v", env)
			}
			if count["BOOTSTRAP_DURATION"] != 1 {
				t.Errorf("BOOTSTRAP_DURATION set %d times", count["BOOTSTRAP_DURATION"])
			}
		}
	}
	if !sawSvc || !sawDep {
		t.Fatal("missing Service or Deployment")
	}

	tox, err := objectsFor("toxiproxy", opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range tox {
		if s, ok := o.(*corev1.Service); ok && s.Name == ToxiproxyAPIName && s.Spec.Ports[0].NodePort != 30476 {
			t.Errorf("toxiproxy-api nodePort %d, want 30476 for slot 2", s.Spec.Ports[0].NodePort)
		}
	}
	ep := endpointsFor(opts)
	if ep.TargetURL != "http://127.0.0.1:18082" || ep.ToxiproxyURL != "http://127.0.0.1:18476" {
		t.Errorf("endpoints %+v", ep)
	}
}

func TestApplyTwiceUpdatesAndKeepsClusterIP(t *testing.T) {
	client := fake.NewClientset()
	opts := Options{Namespace: "ns"}
	if err := opts.defaults(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := applyManifest(ctx, client, "good", opts); err != nil {
		t.Fatal(err)
	}
	svc, _ := client.CoreV1().Services("ns").Get(ctx, TargetName, metav1.GetOptions{})
	svc.Spec.ClusterIP = "10.96.0.42"
	if _, err := client.CoreV1().Services("ns").Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	opts.Variant = "always-ready"
	if err := applyManifest(ctx, client, "always-ready", opts); err != nil {
		t.Fatalf("second apply: %v", err)
	}
	svc, _ = client.CoreV1().Services("ns").Get(ctx, TargetName, metav1.GetOptions{})
	if svc.Spec.ClusterIP != "10.96.0.42" {
		t.Errorf("clusterIP %q after re-apply, want it kept", svc.Spec.ClusterIP)
	}
	dep, _ := client.AppsV1().Deployments("ns").Get(ctx, TargetName, metav1.GetOptions{})
	if dep.Spec.Template.Labels["probegate.dev/variant"] != "always-ready" {
		t.Errorf("variant after re-apply: %v", dep.Spec.Template.Labels)
	}
	// The peer view's RBAC is applied (twice) into the namespace, the binding naming the namespace's
	// ServiceAccount.
	if _, err := client.CoreV1().ServiceAccounts("ns").Get(ctx, TargetName, metav1.GetOptions{}); err != nil {
		t.Errorf("ServiceAccount: %v", err)
	}
	if _, err := client.RbacV1().Roles("ns").Get(ctx, "target-peer-view", metav1.GetOptions{}); err != nil {
		t.Errorf("Role: %v", err)
	}
	rb, err := client.RbacV1().RoleBindings("ns").Get(ctx, "target-peer-view", metav1.GetOptions{})
	if err != nil || len(rb.Subjects) != 1 || rb.Subjects[0].Namespace != "ns" {
		t.Errorf("RoleBinding: %+v, %v; want one subject in namespace ns", rb, err)
	}
}

func TestInstallNamesWhatDidNotBecomeReady(t *testing.T) {
	pollInterval = 20 * time.Millisecond
	client := fake.NewClientset(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "postgres-abc", Namespace: "ns", Labels: map[string]string{"app": "postgres"}},
		Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
			Name: "postgres",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
				Reason:  "ErrImageNeverPull",
				Message: `Container image "probegate/postgres:dev" is not present with pull policy of Never`,
			}},
		}}},
	})
	_, err := Install(context.Background(), client, Options{Namespace: "ns", Timeout: 300 * time.Millisecond})
	if err == nil {
		t.Fatal("Install succeeded on a cluster where nothing runs")
	}
	for _, want := range []string{"deployment ns/postgres did not become ready", "0/1 ready", "pod postgres-abc", "ErrImageNeverPull", "is not present"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if _, err := client.CoreV1().ConfigMaps("ns").Get(context.Background(), "toxiproxy-config", metav1.GetOptions{}); err != nil {
		t.Errorf("toxiproxy ConfigMap not applied: %v", err)
	}
}

// TestNoLoopbackLeavesURLsEmpty: a remote cluster driven by in-cluster load is reached through
// nothing on 127.0.0.1.
func TestNoLoopbackLeavesURLsEmpty(t *testing.T) {
	ep := endpointsFor(Options{Namespace: "ns", Slot: 1})
	if ep.TargetURL == "" || ep.ToxiproxyURL == "" {
		t.Fatalf("kind endpoints without loopback URLs: %+v", ep)
	}
	ep = endpointsFor(Options{Namespace: "ns", Slot: 1, NoLoopback: true})
	if ep.TargetURL != "" || ep.ToxiproxyURL != "" {
		t.Fatalf("NoLoopback endpoints still name loopback URLs: %q %q", ep.TargetURL, ep.ToxiproxyURL)
	}
}
