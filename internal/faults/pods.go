package faults

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/probegate/probegate/internal/seed"
)

// podParam names the pod a pod fault hits (see PodChoice).
var podParam = Param{Name: "pod", Kind: KindPod, Doc: "random (default) or a pod name"}

// PodChoice says which pod a pod fault hits: the named Pod, or (Pod "" or "random") one of the
// running, ready pods matching Selector, chosen with Rand so that a seeded run picks the same one.
// Names are sorted before the draw, so the choice is "the k-th pod by name".
type PodChoice struct {
	Client    kubernetes.Interface
	Namespace string
	Selector  string
	Pod       string
	Rand      *seed.Source
}

// Choose returns the pod to hit now.
func (c PodChoice) Choose(ctx context.Context) (*corev1.Pod, error) {
	if c.Pod != "" && c.Pod != "random" {
		p, err := c.Client.CoreV1().Pods(c.Namespace).Get(ctx, c.Pod, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("get pod %s/%s: %w", c.Namespace, c.Pod, err)
		}
		return p, nil
	}
	list, err := c.Client.CoreV1().Pods(c.Namespace).List(ctx, metav1.ListOptions{LabelSelector: c.Selector})
	if err != nil {
		return nil, fmt.Errorf("list pods %q in %s: %w", c.Selector, c.Namespace, err)
	}
	byName := map[string]*corev1.Pod{}
	var ready, running []string
	for i := range list.Items {
		p := &list.Items[i]
		if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
			continue
		}
		byName[p.Name] = p
		running = append(running, p.Name)
		if podReady(p) {
			ready = append(ready, p.Name)
		}
	}
	names := ready
	if len(names) == 0 {
		names = running
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no running pod matches %q in %s", c.Selector, c.Namespace)
	}
	rnd := c.Rand
	if rnd == nil {
		rnd = seed.New(0)
	}
	return byName[rnd.Pick(names)], nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
