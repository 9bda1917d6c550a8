package runner

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestIngressNode(t *testing.T) {
	n := func(name string, cp bool) corev1.Node {
		node := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
		if cp {
			node.Labels["node-role.kubernetes.io/control-plane"] = ""
		}
		return node
	}
	three := []corev1.Node{n("pg-worker", false), n("pg-control-plane", true), n("pg-worker2", false)}
	for _, tc := range []struct {
		nodes      []corev1.Node
		name, want string // want "" : an error
	}{
		{three, "pg-control-plane", "pg-control-plane"},
		{three, "", "pg-control-plane"},
		{three, "pg-worker2", "pg-worker2"},
		{three, "elsewhere", ""},
		{[]corev1.Node{n("solo", false)}, "", "solo"},
		{[]corev1.Node{n("a", false), n("b", false)}, "", ""},
		{[]corev1.Node{n("a", true), n("b", true)}, "", ""},
	} {
		got, err := ingressNode(tc.nodes, tc.name)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("%q: chose %s, want an error", tc.name, got.Name)
		case tc.want != "" && (err != nil || got.Name != tc.want):
			t.Errorf("%q: %v, %v; want %s", tc.name, got, err, tc.want)
		case err != nil && strings.Contains(err.Error(), "\n"):
			t.Errorf("%q: error of more than one line: %v", tc.name, err)
		}
	}
}
