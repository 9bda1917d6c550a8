package faults

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Workload is the controller of the target's pods as rollout faults act on it (rolling-update,
// cold-start): its pod template, its pods and its controller's progress. Each kind registers
// itself (RegisterWorkload), as fault types do; the faults never switch on the kind.
type Workload interface {
	// Kind is the API kind ("Deployment"); Name the object's name.
	Kind() string
	Name() string
	// UpdateTemplate applies change to the pod template, retrying on conflicts, and returns the
	// generation the update produced.
	UpdateTemplate(ctx context.Context, change func(*corev1.PodTemplateSpec) error) (int64, error)
	// Selector is the label selector of the workload's pods.
	Selector(ctx context.Context) (string, error)
	// Progress reads the controller's rollout status.
	Progress(ctx context.Context) (Progress, error)
}

// Progress is a controller's rollout status. Rolls is empty when a template change starts a
// rollout; otherwise it says why none starts by itself (a StatefulSet's OnDelete strategy).
type Progress struct {
	ObservedGeneration int64
	Updated, Ready     int32
	Replicas           int32 // desired
	Rolls              string
	// MaxUnavailable is how many pods the rolling update may take out of service at once, resolved
	// against Replicas (a StatefulSet has no surge: its update always takes pods out).
	MaxUnavailable int32
}

// Availability reads the target's workload: its desired replicas and how many of them its rolling
// update may take out of service at once. ok is false when the workload kind is not registered.
func Availability(ctx context.Context, env Env) (replicas, maxUnavailable int32, ok bool, err error) {
	w, why := env.workload()
	if why != "" {
		return 0, 0, false, nil
	}
	p, err := w.Progress(ctx)
	if err != nil {
		return 0, 0, false, err
	}
	return p.Replicas, p.MaxUnavailable, true, nil
}

// WorkloadKind is one registered workload kind.
type WorkloadKind struct {
	Kind string // the API kind, "Deployment"
	Doc  string // how a template change rolls it, one sentence
	Open func(client kubernetes.Interface, namespace, name string) Workload
}

var (
	workloadsMu sync.RWMutex
	workloads   = map[string]WorkloadKind{}
)

// RegisterWorkload adds a workload kind. It panics on a duplicate or malformed kind.
func RegisterWorkload(k WorkloadKind) {
	if k.Kind == "" || k.Doc == "" || k.Open == nil {
		panic(fmt.Sprintf("faults: workload kind %q needs a kind, a doc and an opener", k.Kind))
	}
	workloadsMu.Lock()
	defer workloadsMu.Unlock()
	if _, dup := workloads[strings.ToLower(k.Kind)]; dup {
		panic(fmt.Sprintf("faults: workload kind %q registered twice", k.Kind))
	}
	workloads[strings.ToLower(k.Kind)] = k
}

// LookupWorkload returns the registered kind (matched case-insensitively).
func LookupWorkload(kind string) (WorkloadKind, bool) {
	workloadsMu.RLock()
	defer workloadsMu.RUnlock()
	k, ok := workloads[strings.ToLower(kind)]
	return k, ok
}

// WorkloadKinds lists the registered kinds, sorted.
func WorkloadKinds() []string {
	workloadsMu.RLock()
	defer workloadsMu.RUnlock()
	out := make([]string, 0, len(workloads))
	for _, k := range workloads {
		out = append(out, k.Kind)
	}
	sort.Strings(out)
	return out
}

// workload opens the target's workload, or says why a rollout fault cannot act on it.
func (env Env) workload() (Workload, string) {
	kind, name := env.WorkloadKind, env.WorkloadName
	if kind == "" && env.Deployment != "" {
		kind, name = "Deployment", env.Deployment
	}
	if name == "" {
		return nil, "the target names no workload to roll"
	}
	k, ok := LookupWorkload(kind)
	if !ok {
		return nil, fmt.Sprintf("the target is a %s: rollouts are built for %s", kind, strings.Join(WorkloadKinds(), " and "))
	}
	return k.Open(env.Client, env.Namespace, name), ""
}

// podsOf lists the pods matching w's selector.
func podsOf(ctx context.Context, client kubernetes.Interface, namespace string, w Workload) ([]corev1.Pod, error) {
	sel, err := w.Selector(ctx)
	if err != nil {
		return nil, err
	}
	list, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("list pods of %s %s: %w", strings.ToLower(w.Kind()), w.Name(), err)
	}
	return list.Items, nil
}

// selectorString renders a workload's label selector.
func selectorString(kind, name string, s *metav1.LabelSelector) (string, error) {
	if s == nil {
		return "", fmt.Errorf("%s %s has no selector", strings.ToLower(kind), name)
	}
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return "", fmt.Errorf("%s %s selector: %w", strings.ToLower(kind), name, err)
	}
	return sel.String(), nil
}
