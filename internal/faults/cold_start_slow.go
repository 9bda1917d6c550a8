package faults

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/probegate/probegate/internal/pause"
	"github.com/probegate/probegate/internal/timeline"
)

// slowStart is how a cold start makes the new pods' bootstrap slow: through the app's own switch
// (an env var naming its bootstrap time) or, for any app, by starving the new pods of CPU for
// their first moments.
type slowStart interface {
	// apply changes the container of the new template; it returns the previous setting in words
	// and false when the template already had this setting (no rollout follows).
	apply(ctr *corev1.Container) (was string, changed bool)
	// restore puts the previous setting back.
	restore(ctr *corev1.Container)
	// setting names the slowing for messages ("BOOTSTRAP_DURATION=25s").
	setting() string
	// carries reports whether a pod's container runs with the setting.
	carries(ctr corev1.Container) bool
	// shows is the boot time (container start → ready) that shows a cold start, and its basis.
	shows() (time.Duration, string)
	// params are the inject's timeline params.
	params() map[string]string
}

// envStart sets the app's own bootstrap switch.
type envStart struct {
	name      string
	bootstrap time.Duration
	prev      *corev1.EnvVar
}

func (e *envStart) apply(ctr *corev1.Container) (string, bool) {
	e.prev = setEnv(ctr, e.name, e.bootstrap.String())
	if e.prev == nil {
		return "unset", true
	}
	return e.prev.Value, e.prev.Value != e.bootstrap.String()
}

func (e *envStart) restore(ctr *corev1.Container) {
	if e.prev == nil {
		removeEnv(ctr, e.name)
		return
	}
	setEnv(ctr, e.name, e.prev.Value)
}

func (e *envStart) setting() string { return fmt.Sprintf("%s=%s", e.name, e.bootstrap) }

func (e *envStart) carries(ctr corev1.Container) bool {
	for _, v := range ctr.Env {
		if v.Name == e.name && v.Value == e.bootstrap.String() {
			return true
		}
	}
	return false
}

// shows: the bootstrap less the API's one-second resolution.
func (e *envStart) shows() (time.Duration, string) {
	return e.bootstrap - time.Second, "bootstrap " + e.bootstrap.String()
}

func (e *envStart) params() map[string]string {
	return map[string]string{"bootstrap": e.bootstrap.String(), "env": e.name}
}

// cpuStart limits the new pods' CPU hard for their first moments (any app feels it), then lifts
// the limit in place (the pod's resize subresource), so what is judged is a slow start, not a pod
// starved for its whole life. The cold start shows when a new pod takes at least minSlower longer
// to become ready than the slowest pod before the fault did.
type cpuStart struct {
	limit    resource.Quantity
	hold     time.Duration // how long after its container starts a new pod stays throttled
	baseline time.Duration // the slowest boot (start → ready) of the pods before the fault; < 0 unknown
	prev     corev1.ResourceRequirements
}

// minSlower is how much slower than the baseline a throttled boot must be to count: two of the
// API's one-second timestamps.
const minSlower = 2 * time.Second

// unthrottled is the CPU limit a lifted pod gets when its template had none: a resize cannot
// remove a limit, and one far above any node's CPUs never throttles.
var unthrottled = resource.MustParse("256")

func (c *cpuStart) apply(ctr *corev1.Container) (string, bool) {
	c.prev = *ctr.Resources.DeepCopy()
	was := "no CPU limit"
	if l, ok := ctr.Resources.Limits[corev1.ResourceCPU]; ok {
		was = "CPU limit " + l.String()
		if l.Cmp(c.limit) == 0 {
			return was, false
		}
	}
	if ctr.Resources.Limits == nil {
		ctr.Resources.Limits = corev1.ResourceList{}
	}
	ctr.Resources.Limits[corev1.ResourceCPU] = c.limit
	if ctr.Resources.Requests == nil {
		ctr.Resources.Requests = corev1.ResourceList{}
	}
	// A request above the limit is refused; no request would default to the limit, and a pod whose
	// every request equals its limit is Guaranteed, a class a resize cannot leave.
	if r, ok := ctr.Resources.Requests[corev1.ResourceCPU]; !ok || r.Cmp(c.limit) >= 0 {
		ctr.Resources.Requests[corev1.ResourceCPU] = resource.MustParse("1m")
	}
	return was, true
}

func (c *cpuStart) restore(ctr *corev1.Container) { ctr.Resources = *c.prev.DeepCopy() }

func (c *cpuStart) setting() string {
	return fmt.Sprintf("CPU limit %s for the first %s", c.limit.String(), c.hold)
}

func (c *cpuStart) carries(ctr corev1.Container) bool {
	l, ok := ctr.Resources.Limits[corev1.ResourceCPU]
	return ok && l.Cmp(c.limit) == 0
}

func (c *cpuStart) shows() (time.Duration, string) {
	if c.baseline < 0 {
		return c.hold, fmt.Sprintf("no boot before the fault to compare with: at least the %s throttle", c.hold)
	}
	return c.baseline + minSlower, fmt.Sprintf("slowest boot before the fault %s + %s", secs(c.baseline), minSlower)
}

func (c *cpuStart) params() map[string]string {
	p := map[string]string{"cpu": c.limit.String(), "hold": c.hold.String()}
	if c.baseline >= 0 {
		p["baseline_boot_s"] = secsNum(c.baseline)
	}
	return p
}

// liftedLimit is the CPU limit a throttled pod is resized to: its template's before the fault.
func (c *cpuStart) liftedLimit() resource.Quantity {
	if l, ok := c.prev.Limits[corev1.ResourceCPU]; ok {
		return l
	}
	return unthrottled
}

// slowestBoot is the longest time from container start to ready among pods (< 0 when none of
// them is ready).
func slowestBoot(pods []corev1.Pod, container string) time.Duration {
	out := time.Duration(-1)
	for i := range pods {
		cs := ContainerStatus(&pods[i], container)
		if cs == nil || cs.State.Running == nil {
			continue
		}
		if at, ok := readySince(&pods[i]); ok {
			out = max(out, at.Sub(cs.State.Running.StartedAt.Time))
		}
	}
	return out
}

// liftThrottles resizes every new pod that carries the throttle, once its container has run for
// hold, back to the template's old CPU settings, until ctx ends. Each lift is a mark on the
// timeline; a lift the cluster refuses is one too, and the pod stays throttled.
func (c *ColdStart) liftThrottles(ctx context.Context, cpu *cpuStart, before map[string]bool) {
	lifted := map[string]bool{}
	for pause.For(ctx, bootPoll) == nil {
		pods, err := podsOf(ctx, c.Client, c.Namespace, c.Workload)
		if err != nil {
			continue
		}
		for i := range pods {
			p := &pods[i]
			uid := string(p.UID)
			if lifted[uid] {
				continue
			}
			cs, ctr := c.runningNew(p, before, cpu)
			if cs == nil || time.Since(cs.State.Running.StartedAt.Time) < cpu.hold {
				continue
			}
			lifted[uid] = true
			to := cpu.liftedLimit()
			detail := fmt.Sprintf("cold-start: CPU limit of %s lifted to %s after %s throttled at %s", p.Name, to.String(), cpu.hold, cpu.limit.String())
			if err := resizeCPU(ctx, c.Client, p, ctr.Name, cpu.prev, to); err != nil {
				detail = fmt.Sprintf("cold-start: could not lift the CPU limit of %s (it stays at %s): %v", p.Name, cpu.limit.String(), err)
			}
			if c.Timeline != nil {
				c.Timeline.Append(timeline.Entry{Kind: timeline.KindMark, Mark: &timeline.Mark{Name: "cold-start-lift", Detail: detail}})
			}
		}
	}
}

// resizeCPU resizes container of p in place to requests (the template's before the fault) and a
// CPU limit of limit.
func resizeCPU(ctx context.Context, client kubernetes.Interface, p *corev1.Pod, container string, requests corev1.ResourceRequirements, limit resource.Quantity) error {
	cur, err := client.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	ctr := podContainer(cur, container)
	if ctr == nil {
		return fmt.Errorf("pod %s has no container %s", p.Name, container)
	}
	ctr.Resources.Limits[corev1.ResourceCPU] = limit
	if r, ok := requests.Requests[corev1.ResourceCPU]; ok {
		ctr.Resources.Requests[corev1.ResourceCPU] = r
	}
	_, err = client.CoreV1().Pods(p.Namespace).UpdateResize(ctx, p.Name, cur, metav1.UpdateOptions{})
	return err
}

// podContainer is the named container of p's spec (the first when name is "").
func podContainer(p *corev1.Pod, name string) *corev1.Container {
	for i := range p.Spec.Containers {
		if name == "" || p.Spec.Containers[i].Name == name {
			return &p.Spec.Containers[i]
		}
	}
	return nil
}

// runningNew returns the status and spec of p's container when p is a new pod of the cold start
// (not in before, not being deleted) whose container runs with slow's setting; nil, nil otherwise.
func (c *ColdStart) runningNew(p *corev1.Pod, before map[string]bool, slow slowStart) (*corev1.ContainerStatus, *corev1.Container) {
	if before[string(p.UID)] || p.DeletionTimestamp != nil {
		return nil, nil
	}
	cs := ContainerStatus(p, c.Container)
	ctr := podContainer(p, c.Container)
	if cs == nil || cs.State.Running == nil || ctr == nil || !slow.carries(*ctr) {
		return nil, nil
	}
	return cs, ctr
}
