package faults

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/probegate/probegate/internal/seed"
)

// podParam names the pod a pod fault hits (see PodChoice).
var podParam = Param{Name: "pod", Kind: KindPod, Doc: "random (default), busiest (the ready pod that has served the most of the load's requests) or a pod name"}

// Pod choices other than a name.
const (
	PodRandom  = "random"
	PodBusiest = "busiest"
)

// PodChoice says which pod a pod fault hits: the named Pod, or one of the running, ready pods
// matching Selector. Pod "" or "random" draws one with Rand so that a seeded run picks the same
// one (names are sorted before the draw: "the k-th pod by name"). "busiest" takes the one that has
// served the most of the load's requests so far, by the load's own attribution (SetLoad): the pod
// a fault can show the most on, since with kept-alive connections a few pods may carry all the
// traffic and another none; without a load, or before any request named a pod, it draws as random.
type PodChoice struct {
	Client    kubernetes.Interface
	Namespace string
	Selector  string
	Pod       string
	Rand      *seed.Source

	tally PodTally
}

// PodTally is a running load that counts the requests each pod served (by the load's own
// attribution: the pod-naming response header).
type PodTally interface {
	ServedBy() map[string]uint64
}

// SetLoad gives the choice the running load, whose tally ranks the pods for "busiest".
func (c *PodChoice) SetLoad(l RateSetter) {
	if t, ok := l.(PodTally); ok {
		c.tally = t
	}
}

// Choose returns the pod to hit now.
func (c PodChoice) Choose(ctx context.Context) (*corev1.Pod, error) {
	p, _, err := c.choose(ctx)
	return p, err
}

// choose returns the pod to hit now and, for "busiest", how it was chosen.
func (c PodChoice) choose(ctx context.Context) (*corev1.Pod, string, error) {
	if c.Pod != "" && c.Pod != PodRandom && c.Pod != PodBusiest {
		p, err := c.Client.CoreV1().Pods(c.Namespace).Get(ctx, c.Pod, metav1.GetOptions{})
		if err != nil {
			return nil, "", fmt.Errorf("get pod %s/%s: %w", c.Namespace, c.Pod, err)
		}
		return p, "", nil
	}
	list, err := c.Client.CoreV1().Pods(c.Namespace).List(ctx, metav1.ListOptions{LabelSelector: c.Selector})
	if err != nil {
		return nil, "", fmt.Errorf("list pods %q in %s: %w", c.Selector, c.Namespace, err)
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
		if PodReady(p) {
			ready = append(ready, p.Name)
		}
	}
	names := ready
	if len(names) == 0 {
		names = running
	}
	if len(names) == 0 {
		return nil, "", fmt.Errorf("no running pod matches %q in %s", c.Selector, c.Namespace)
	}
	slices.Sort(names)
	how := ""
	if c.Pod == PodBusiest {
		if c.tally == nil {
			how = "busiest: no load to rank pods by, drawn at random"
		} else if name, n := busiest(names, c.tally.ServedBy()); n > 0 {
			return byName[name], fmt.Sprintf("busiest: served %d of the load's requests so far", n), nil
		} else {
			how = "busiest: no request named a pod yet, drawn at random"
		}
	}
	rnd := c.Rand
	if rnd == nil {
		rnd = seed.New(0)
	}
	return byName[rnd.Pick(names)], how, nil
}

// busiest returns the name (of sorted names) that served the most requests, the first on a tie.
func busiest(names []string, served map[string]uint64) (string, uint64) {
	best, most := "", uint64(0)
	for _, n := range names {
		if served[n] > most {
			best, most = n, served[n]
		}
	}
	return best, most
}

// chosenParams starts a fault record's params with how its pod was chosen, when that says more
// than the param.
func chosenParams(how string) map[string]string {
	params := map[string]string{}
	if how != "" {
		params["chosen"] = how
	}
	return params
}

// PodReady reports whether p's Ready condition is True.
func PodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
