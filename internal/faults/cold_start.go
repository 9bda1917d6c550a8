package faults

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/probegate/probegate/internal/pause"
	"github.com/probegate/probegate/internal/timeline"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// DefaultBootstrapEnv is the bundled target's setting for its simulated bootstrap work.
const DefaultBootstrapEnv = "BOOTSTRAP_DURATION"

// TypeColdStart rolls the workload with a longer bootstrap.
const TypeColdStart = "cold-start"

func init() {
	Register(Definition{
		Type: TypeColdStart,
		Doc:  "rolls the workload (Deployment or StatefulSet) with a longer bootstrap, so every new pod starts cold (the startup probe must cover it)",
		Params: []Param{
			{Name: "bootstrap", Kind: KindDuration, Required: true, Doc: "bootstrap time of the new pods (required)"},
			{Name: "env", Kind: KindString, Doc: "the env var holding it (default " + DefaultBootstrapEnv + ")"},
			{Name: "restore", Kind: KindBool, Doc: "roll back to the old value on revert (default true)"},
			{Name: "cpu", Kind: KindString, Doc: "on a target that declares no bootstrap switch (bootstrapEnv in its target file): " +
				"the CPU limit the new pods boot under for their first `bootstrap`, then lifted in place (any app feels it; " +
				"the cold start shows when they boot at least 2 s slower than the pods before the fault)"},
			{Name: "stop", Kind: KindBool, Doc: "on a target that declares no bootstrap switch: each new pod's container is stopped " +
				"(SIGSTOP on its node, like freeze) as soon as it runs, unless already ready, and resumed after `bootstrap` (any app feels it: " +
				"its probes time out meanwhile); with cpu, both; used when the pod's node can be reached, and shown the same way against the pods before the fault"},
		},
		Needs:    []Capability{NeedsRollout},
		Uses:     []Capability{NeedsNodeAccess}, // stop: each new container stopped at start
		Proof:    "the first new pod's time from creation to its container starting and from there to ready",
		Explains: []timeline.RestartCause{timeline.CauseDeletion},
		// One pod at a time: scheduled and started (rolloutStep), booting for the bootstrap, then
		// in rotation once readiness sees it.
		Span: func(params map[string]string, replicas int, readyAfter time.Duration) time.Duration {
			boot, err := time.ParseDuration(params["bootstrap"])
			if err != nil {
				return 0
			}
			return time.Duration(max(replicas, 1)) * (rolloutStep + boot + readyAfter)
		},
		Build: func(a Args) (Fault, error) {
			w, _ := a.Env.workload()
			f := NewColdStart(a.Rec, a.Env.Client, a.Env.Namespace, w, a.Env.Container, a.Duration("bootstrap", 0))
			switch v, ok := a.Param("env"); {
			case ok:
				f.Env = v
			case a.Env.BootstrapEnv != "":
				f.Env = a.Env.BootstrapEnv
			default:
				if stop, _ := a.Param("stop"); a.Env.NodeProcs != nil && isTrue(stop) {
					f.Stop = a.Env.NodeProcs
				}
				if cpu, ok := a.Param("cpu"); ok {
					q, err := resource.ParseQuantity(cpu)
					if err != nil || q.Sign() <= 0 {
						return nil, fmt.Errorf("cold-start: cpu %q: want a positive CPU quantity such as 20m", cpu)
					}
					f.CPU = &q
				}
			}
			if v, ok := a.Param("restore"); ok {
				f.Restore, _ = strconv.ParseBool(v)
			}
			return f, nil
		},
	})
}

// ColdStart rolls the workload with a longer bootstrap: it sets the container's bootstrap env var
// to Bootstrap or, with CPU set (an app with no such switch), limits the new pods' CPU to it for
// their first Bootstrap, so every new pod starts cold (the startup probe must cover it). Revert restores the
// previous value (another rollout) unless Restore is false. Proof of effect, measured in the
// background so that Inject returns once the rollout is under way: the first new pod of the rolled
// template and how long it took from creation to its container starting and from there to ready
// (see bootProof); recorded before Revert's actions, or when BootTimeout has passed.
type ColdStart struct {
	Recorder
	state
	Client    kubernetes.Interface
	Namespace string
	Workload  Workload
	Container string // the first container when empty
	Env       string // DefaultBootstrapEnv when empty
	Bootstrap time.Duration
	CPU       *resource.Quantity // throttle instead of Env: see cpuStart
	Stop      NodeProcs          // stop each new container at start instead of Env (with CPU, both): see stoppedStart
	Restore   bool
	// BootTimeout bounds the wait for the first new pod to boot (Bootstrap + 90s when 0).
	BootTimeout time.Duration

	slow slowStart   // how the bootstrap is slowed (set by Inject; the env switch before)
	boot *background // the bootstrap measurement started by Inject
	lift *background // with CPU or Stop: the lifting of each new pod's throttle, or its resume
	was  string      // the setting before Inject, in words
}

// slowing is how the fault slows the bootstrap.
func (c *ColdStart) slowing() slowStart {
	if c.slow == nil {
		c.slow = &envStart{name: c.env(), bootstrap: c.Bootstrap}
	}
	return c.slow
}

// NewColdStart returns the cold-start fault; it restores the old setting on revert.
func NewColdStart(rec Recorder, client kubernetes.Interface, namespace string, w Workload, container string, bootstrap time.Duration) *ColdStart {
	rec.Type = TypeColdStart
	return &ColdStart{Recorder: rec, Client: client, Namespace: namespace, Workload: w,
		Container: container, Env: DefaultBootstrapEnv, Bootstrap: bootstrap, Restore: true}
}

// Type implements Fault.
func (c *ColdStart) Type() string { return TypeColdStart }

// Inject sets the bootstrap env var, and so starts a rollout, and starts measuring the first new
// pod's bootstrap.
func (c *ColdStart) Inject(ctx context.Context) error {
	if !c.begin(true) {
		c.end(true)
		return nil
	}
	pods, err := podsOf(ctx, c.Client, c.Namespace, c.Workload)
	if err != nil {
		c.end(false)
		return fmt.Errorf("cold-start: %w", err)
	}
	before := make(map[types.UID]bool, len(pods))
	for _, p := range pods {
		before[p.UID] = true
	}
	var cpu *cpuStart
	var stop *stoppedStart
	if c.CPU != nil {
		cpu = &cpuStart{limit: *c.CPU, hold: c.Bootstrap, baseline: slowestBoot(pods, c.Container)}
		c.slow = cpu
	}
	if c.Stop != nil {
		stop = &stoppedStart{hold: c.Bootstrap, baseline: slowestBoot(pods, c.Container), procs: c.Stop}
		c.slow = stop
		if cpu != nil {
			c.slow = &throttledStop{cpu: cpu, stop: stop}
		}
	}
	slow := c.slowing()
	var was string
	var changed bool
	gen, err := c.update(ctx, func(ctr *corev1.Container) { was, changed = slow.apply(ctr) })
	if err != nil {
		c.end(false)
		return fmt.Errorf("cold-start: %w", err)
	}
	c.was = was
	params := slow.params()
	params["previous"], params["generation"] = was, fmt.Sprint(gen)
	params["workload"] = c.Workload.Kind() + "/" + c.Workload.Name()
	c.record(timeline.FaultInject, c.Workload.Name(), "", fmt.Sprintf("%s (was %s): rolling %s", slow.setting(), was, c.what()), params)
	if !changed {
		c.proof(c.Workload.Name(), "", timeline.PhaseDuring, false,
			fmt.Sprintf("the template already had %s: it did not change, no new pod boots", slow.setting()),
			map[string]string{"generation": fmt.Sprint(gen)})
		c.end(true)
		return nil
	}
	old := make(map[string]bool, len(before))
	for uid := range before {
		old[string(uid)] = true
	}
	if cpu != nil || stop != nil {
		c.lift = goProof(ctx, func(ctx context.Context) {
			var wg sync.WaitGroup
			if cpu != nil {
				wg.Go(func() { c.liftThrottles(ctx, cpu, old) })
			}
			if stop != nil {
				wg.Go(func() { c.holdStopped(ctx, stop, old) })
			}
			wg.Wait()
		})
	}
	c.boot = goProof(ctx, func(ctx context.Context) { c.observeBootstrap(ctx, gen, before) })
	c.end(true)
	return nil
}

// Revert stops the bootstrap measurement (recording what it saw), then restores the previous
// bootstrap setting (when Restore is set).
func (c *ColdStart) Revert(ctx context.Context) error {
	if !c.begin(false) {
		c.end(false)
		return nil
	}
	c.boot.stop()
	c.lift.stop()
	if !c.Restore {
		c.end(false)
		return nil
	}
	slow := c.slowing()
	gen, err := c.update(ctx, slow.restore)
	if err != nil {
		c.end(true)
		return fmt.Errorf("cold-start revert: %w", err)
	}
	params := slow.params()
	params["restored"], params["generation"] = c.was, fmt.Sprint(gen)
	c.record(timeline.FaultRevert, c.Workload.Name(), "", fmt.Sprintf("%s undone, back to %s: rolling %s", slow.setting(), c.was, c.what()), params)
	c.end(false)
	observeRollout(ctx, c.Recorder, c.Workload, gen, timeline.PhaseAfter)
	return nil
}

// rolloutStep is what a rollout step takes beside the new pod's boot: the old pod's removal, the
// new one's scheduling and its container's start (2 s on the local cluster).
const rolloutStep = 2 * time.Second

// bootPoll is how often the bootstrap measurement reads the workload's pods.
var bootPoll = time.Second

// observeBootstrap watches the workload's pods that were not there before the update (before holds the
// UIDs that were) and carry the new setting, until one of them has booted (see bootProof), the
// BootTimeout has passed or ctx ends, and records the proof.
func (c *ColdStart) observeBootstrap(ctx context.Context, generation int64, before map[types.UID]bool) {
	timeout := c.BootTimeout
	if timeout <= 0 {
		timeout = c.Bootstrap + 90*time.Second
	}
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	params := c.slowing().params()
	params["generation"] = fmt.Sprint(generation)
	var fresh []corev1.Pod // the new pods as last read
	var lastErr error
	for {
		pods, err := podsOf(wctx, c.Client, c.Namespace, c.Workload)
		if err == nil {
			fresh = c.newPods(pods, before)
			lastErr = nil
			for i := range fresh {
				if done, ok, detail, p := c.bootProof(&fresh[i], time.Now(), false); done {
					c.proofBoot(ok, detail, params, p)
					return
				}
			}
		} else if wctx.Err() == nil {
			lastErr = err
		}
		if pause.For(wctx, bootPoll) != nil {
			break
		}
	}
	// Out of time (or stopped): judge the oldest new pod as it was last seen.
	elapsed := time.Since(start).Round(time.Second)
	if len(fresh) == 0 {
		detail := fmt.Sprintf("no pod with %s had appeared within %s", c.slowing().setting(), elapsed)
		if ctx.Err() != nil {
			detail = fmt.Sprintf("no pod with %s had appeared when the measurement stopped %s after inject", c.slowing().setting(), elapsed)
		}
		if lastErr != nil {
			params["error"] = lastErr.Error()
			detail += ": list pods: " + lastErr.Error()
		}
		c.proof(c.Workload.Name(), "", timeline.PhaseDuring, false, detail, params)
		return
	}
	_, ok, detail, p := c.bootProof(&fresh[0], time.Now(), true)
	when := fmt.Sprintf(" (as seen %s after inject)", elapsed)
	if ctx.Err() != nil {
		when = fmt.Sprintf(" (as seen when the measurement stopped, %s after inject)", elapsed)
	}
	c.proofBoot(ok, detail+when, params, p)
}

func (c *ColdStart) proofBoot(ok bool, detail string, params, more map[string]string) {
	for k, v := range more {
		params[k] = v
	}
	pod := params["pod"]
	delete(params, "pod")
	c.proof(c.Workload.Name(), pod, timeline.PhaseDuring, ok, detail, params)
}

// bootProof judges one new pod's bootstrap from its status, with the API's timestamps (one-second
// resolution, hence the one-second tolerance):
//   - ready, never restarted: confirmed when it became ready at least the boot time that shows a
//     cold start (slowStart.shows: the bootstrap less one second, or the slowest boot before the
//     fault plus two seconds) after its container started, not observed when sooner;
//   - restarted before it was ready: confirmed when the run that ended lasted at least half that
//     without becoming ready (killed while booting cold), not observed when shorter (a crash);
//   - still booting: undecided, unless final, when it is confirmed if its container has run at least
//     that long without becoming ready, and not observed otherwise (also when it never started).
func (c *ColdStart) bootProof(p *corev1.Pod, now time.Time, final bool) (done, ok bool, detail string, params map[string]string) {
	params = map[string]string{"pod": p.Name}
	created := p.CreationTimestamp.Time
	what := fmt.Sprintf("new pod %s (%s)", p.Name, c.slowing().setting())
	shows, _ := c.slowing().shows()
	cs := ContainerStatus(p, c.Container)
	if cs == nil || (cs.State.Running == nil && cs.LastTerminationState.Terminated == nil) {
		waiting := ""
		if cs != nil && cs.State.Waiting != nil {
			waiting = ", waiting: " + cs.State.Waiting.Reason
		}
		return final, false, fmt.Sprintf("%s: container not started %s after creation%s", what, secs(now.Sub(created)), waiting), params
	}
	if cs.RestartCount > 0 && cs.LastTerminationState.Terminated != nil {
		term := cs.LastTerminationState.Terminated
		run := term.FinishedAt.Sub(term.StartedAt.Time)
		params["started_s"] = secsNum(term.StartedAt.Sub(created))
		params["killed_after_s"] = secsNum(run)
		params["restarts"] = fmt.Sprint(cs.RestartCount)
		ok = run >= shows/2
		verdict := "killed while booting cold"
		if !ok {
			verdict = "too short to show the bootstrap: not a cold start"
		}
		return true, ok, fmt.Sprintf("%s: container started %s after creation, ended after %s without becoming ready (%s, exit %d, %d restarts): %s",
			what, secs(term.StartedAt.Sub(created)), secs(run), term.Reason, term.ExitCode, cs.RestartCount, verdict), params
	}
	started := cs.State.Running.StartedAt.Time
	params["started_s"] = secsNum(started.Sub(created))
	if readyAt, ready := readySince(p); ready {
		boot := readyAt.Sub(started)
		params["ready_s"] = secsNum(readyAt.Sub(created))
		params["boot_s"] = secsNum(boot)
		ok, detail = c.bootLasted(what, started.Sub(created), "ready", boot,
			"booted cold", "sooner than the bootstrap: the cold start did not show")
		return true, ok, detail, params
	}
	if !final {
		return false, false, "", params
	}
	booting := now.Sub(started)
	params["not_ready_s"] = secsNum(booting)
	ok, detail = c.bootLasted(what, started.Sub(created), "not ready", booting,
		"still booting cold", "not yet as long as the bootstrap: not measured")
	return true, ok, detail, params
}

// bootLasted judges a container that was state for d after it started: a cold start when d is at
// least the boot time that shows one.
func (c *ColdStart) bootLasted(what string, startedAfter time.Duration, state string, d time.Duration, yes, no string) (bool, string) {
	shows, basis := c.slowing().shows()
	ok, verdict := d >= shows, yes
	if !ok {
		verdict = no
	}
	return ok, fmt.Sprintf("%s: container started %s after creation, %s %s after it started (%s): %s",
		what, secs(startedAfter), state, secs(d), basis, verdict)
}

// newPods returns the pods that were not there before the update and run with the new setting,
// oldest first.
func (c *ColdStart) newPods(pods []corev1.Pod, before map[types.UID]bool) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range pods {
		if before[p.UID] || p.DeletionTimestamp != nil {
			continue
		}
		if ctr := podContainer(&p, c.Container); ctr != nil && c.slowing().carries(*ctr) {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreationTimestamp.Before(&out[j].CreationTimestamp) })
	return out
}

func (c *ColdStart) what() string {
	return strings.ToLower(c.Workload.Kind()) + " " + c.Workload.Name()
}

// ContainerStatus returns the status of the named container of p (the first when name is "").
func ContainerStatus(p *corev1.Pod, name string) *corev1.ContainerStatus {
	if name == "" && len(p.Spec.Containers) > 0 {
		name = p.Spec.Containers[0].Name
	}
	for i := range p.Status.ContainerStatuses {
		if p.Status.ContainerStatuses[i].Name == name {
			return &p.Status.ContainerStatuses[i]
		}
	}
	return nil
}

// readySince returns when p last became Ready, if it is Ready.
func readySince(p *corev1.Pod) (time.Time, bool) {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.LastTransitionTime.Time, c.Status == corev1.ConditionTrue
		}
	}
	return time.Time{}, false
}

func secs(d time.Duration) string    { return d.Round(time.Second).String() }
func secsNum(d time.Duration) string { return fmt.Sprint(int64(d.Round(time.Second).Seconds())) }

func (c *ColdStart) env() string {
	if c.Env == "" {
		return DefaultBootstrapEnv
	}
	return c.Env
}

// update applies change to the target container of the workload's template, retrying on
// conflicts, and returns the new generation.
func (c *ColdStart) update(ctx context.Context, change func(*corev1.Container)) (int64, error) {
	return c.Workload.UpdateTemplate(ctx, func(t *corev1.PodTemplateSpec) error {
		ctr, err := findContainer(t, c.Container)
		if err != nil {
			return fmt.Errorf("%s: %w", c.what(), err)
		}
		change(ctr)
		return nil
	})
}

func findContainer(t *corev1.PodTemplateSpec, name string) (*corev1.Container, error) {
	cs := t.Spec.Containers
	for i := range cs {
		if name == "" || cs[i].Name == name {
			return &cs[i], nil
		}
	}
	return nil, fmt.Errorf("no container %q in the pod template", name)
}

// setEnv sets name=value on ctr and returns the previous variable (nil when there was none).
func setEnv(ctr *corev1.Container, name, value string) *corev1.EnvVar {
	for i := range ctr.Env {
		if ctr.Env[i].Name == name {
			prev := ctr.Env[i]
			ctr.Env[i] = corev1.EnvVar{Name: name, Value: value}
			return &prev
		}
	}
	ctr.Env = append(ctr.Env, corev1.EnvVar{Name: name, Value: value})
	return nil
}

func removeEnv(ctr *corev1.Container, name string) {
	out := ctr.Env[:0]
	for _, e := range ctr.Env {
		if e.Name != name {
			out = append(out, e)
		}
	}
	ctr.Env = out
}

// isTrue reads a bool parameter (already validated as one).
func isTrue(v string) bool {
	b, _ := strconv.ParseBool(v)
	return b
}
