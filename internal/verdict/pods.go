package verdict

import (
	"cmp"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/probegate/probegate/internal/timeline"
)

// mark is a point on the timeline that came from an entry.
type mark struct {
	T   time.Duration
	Seq int64
}

// containerExit is a container observed in state terminated. Finished, when the API reported it,
// is the status's finishedAt on the timeline's clock: one-second resolution, truncated, but free of
// the kubelet's delay in reporting the exit (T is when the harness saw the status).
type containerExit struct {
	mark
	Container string
	ExitCode  *int32
	Reason    string
	Finished  *time.Duration
	// Deletion marks an exit known only from the pod's deleted mark: no terminated state was seen,
	// so there is no exit code and no finishedAt, and T is later than the exit by an unknown time.
	Deletion bool
	// Recovered marks an exit (or deletion) that came from a relist after a watch gap: for a
	// deletion, the relist's tombstone, which carries only the relist's time.
	Recovered bool
}

// latestExit is the latest the process can have exited: the reported finishedAt rounded up to its
// second, or when the exit was seen, whichever is earlier.
func (x containerExit) latestExit() time.Duration {
	if x.Finished != nil {
		return min(x.T, *x.Finished+time.Second)
	}
	return x.T
}

// earliestExit is the earliest the process can have exited: the reported finishedAt, which the API
// truncates to its second. False when the status reported none (or only the deletion was seen).
func (x containerExit) earliestExit() (time.Duration, bool) {
	if x.Finished == nil || x.Deletion {
		return 0, false
	}
	return min(*x.Finished, x.T), true
}

// podLife is what the timeline says about one pod's lifecycle.
type podLife struct {
	Name string
	// Created and FirstReady mark when the harness saw them; CreatedAt and ReadyAt are when the API
	// says they happened (the creationTimestamp and the Ready condition's lastTransitionTime, on the
	// timeline's clock), also for pods that existed before the observers started.
	// ReadyAt is the earliest any container or the pod reported ready: the tightest measure of a
	// boot, for bounds that grow with it.
	CreatedAt, ReadyAt *time.Duration
	Created            *mark
	// PodReady marks every transition of the pod's Ready condition to true (every container ready);
	// ContainerReady every transition of each container's ready to true, by container name.
	PodReady       []mark
	ContainerReady map[string][]mark
	Deleting       *mark
	// DeletingAt is when the API says the deletion was made (deletionTimestamp − grace, to the
	// second, on the timeline's clock; Deleting.T without it): the watch can deliver the
	// deletion after the process already exited.
	DeletingAt time.Duration
	// Started is when a container first reported started=true (its startup probe passed), by
	// container name.
	Started map[string]mark
	Grace   *time.Duration
	Exits   []containerExit
	Deleted *mark
	// DeletedRecovered marks a deletion known only from a relist after a watch gap (its tombstone).
	DeletedRecovered bool
	Restarts         []timeline.Entry
}

// deletedFrom is the earliest the pod's deletion can have happened: when the harness saw it, or the
// API's second-truncated time of it when that is earlier (by at most the truncation).
func (p *podLife) deletedFrom() time.Duration {
	return min(p.Deleting.T, max(p.DeletingAt, p.Deleting.T-time.Second))
}

// readyMarks are the transitions to ready=true that show container ready: its own and the pod's
// Ready condition (which needs every container ready). With container "" any container's count.
func (p *podLife) readyMarks(container string) []mark {
	out := slices.Clone(p.PodReady)
	for c, ms := range p.ContainerReady {
		if container == "" || c == container {
			out = append(out, ms...)
		}
	}
	slices.SortFunc(out, func(a, b mark) int {
		if c := cmp.Compare(a.T, b.T); c != 0 {
			return c
		}
		return cmp.Compare(a.Seq, b.Seq)
	})
	return out
}

// firstReady is the first time container (any container for "") was seen ready, or the pod.
func (p *podLife) firstReady(container string) (mark, bool) {
	ms := p.readyMarks(container)
	if len(ms) == 0 {
		return mark{}, false
	}
	return ms[0], true
}

// readyBetween reports whether container (any container for "") or the pod turned ready in
// (from, to].
func (p *podLife) readyBetween(container string, from, to time.Duration) bool {
	for _, m := range p.readyMarks(container) {
		if m.T > from && m.T <= to {
			return true
		}
	}
	return false
}

// exitAfter returns the first sign at or after t that container's process is gone (any
// container's for ""): the container terminated, else the pod deleted (an exit marked Deletion,
// which callers that judge the exit itself must not take for one). Another container's exit, a
// sidecar's, is no sign of it.
func (p *podLife) exitAfter(t time.Duration, container string) (containerExit, bool) {
	for _, x := range p.Exits {
		if x.T >= t && (container == "" || x.Container == container) {
			return x, true
		}
	}
	if p.Deleted != nil && p.Deleted.T >= t {
		return containerExit{mark: *p.Deleted, Reason: "pod deleted", Deletion: true, Recovered: p.DeletedRecovered}, true
	}
	return containerExit{}, false
}

var (
	exitCodeRE = regexp.MustCompile(`(?i)exit[ _-]?code[=: ]+(-?\d+)`)
	reasonRE   = regexp.MustCompile(`(?i)reason[=: ]+([A-Za-z]+)`)
)

// buildPods reads pod transitions and restarts. A container state transition counts as an exit when
// its To starts with "terminated" (see parseExit).
func buildPods(entries []timeline.Entry) map[string]*podLife {
	pods := map[string]*podLife{}
	get := func(name string) *podLife {
		p := pods[name]
		if p == nil {
			p = &podLife{Name: name}
			pods[name] = p
		}
		return p
	}
	for _, e := range entries {
		if e.Pod == "" {
			continue
		}
		m := mark{T: e.T, Seq: e.Seq}
		switch {
		case e.Kind == timeline.KindRestart && e.Restart != nil:
			p := get(e.Pod)
			p.Restarts = append(p.Restarts, e)
		case e.Kind == timeline.KindPod && e.PodChange != nil:
			p := get(e.Pod)
			c := e.PodChange
			switch {
			case c.Field == "created":
				if p.Created == nil {
					p.Created = &m
					at := apiOffset(e)
					p.CreatedAt = &at
				}
			case c.Field == "deleting":
				if p.Deleting == nil {
					p.Deleting = &m
					p.DeletingAt = apiOffset(e)
					if c.GracePeriodSeconds != nil {
						g := time.Duration(*c.GracePeriodSeconds) * time.Second
						p.Grace = &g
					}
				}
			case c.Field == "deleted":
				if p.Deleted == nil {
					p.Deleted = &m
					p.DeletedRecovered = e.Recovered
				}
			case strings.HasPrefix(c.Field, "container/") && strings.HasSuffix(c.Field, "/started") && strings.EqualFold(c.To, "true"):
				name := strings.TrimSuffix(strings.TrimPrefix(c.Field, "container/"), "/started")
				if _, ok := p.Started[name]; !ok {
					if p.Started == nil {
						p.Started = map[string]mark{}
					}
					p.Started[name] = m
				}
			case isReadyField(c.Field) && strings.EqualFold(c.To, "true"):
				if at := apiOffset(e); p.ReadyAt == nil || at < *p.ReadyAt {
					p.ReadyAt = &at
				}
				if c.Field == "condition/Ready" {
					p.PodReady = append(p.PodReady, m)
					continue
				}
				name := strings.TrimSuffix(strings.TrimPrefix(c.Field, "container/"), "/ready")
				if p.ContainerReady == nil {
					p.ContainerReady = map[string][]mark{}
				}
				p.ContainerReady[name] = append(p.ContainerReady[name], m)
			case strings.HasPrefix(c.Field, "container/") && strings.HasSuffix(c.Field, "/state") &&
				strings.HasPrefix(strings.ToLower(c.To), "terminated"):
				name := strings.TrimSuffix(strings.TrimPrefix(c.Field, "container/"), "/state")
				if strings.HasPrefix(name, "init:") {
					continue // an init container finishing is not the process exiting
				}
				x := parseExit(m, name, c.To, c.Detail)
				x.Recovered = e.Recovered
				if e.APITime != nil && !e.At.IsZero() {
					f := e.T + e.APITime.Sub(e.At)
					x.Finished = &f
				}
				p.Exits = append(p.Exits, x)
			}
		}
	}
	return pods
}

// container is the container the pod rules judge in a pod of several: the oracle's, the one whose
// probes are under test (the scenario's "container" option, else the first container with a probe,
// else the first: oracle.Compute), else the one the run's workload entry names. A sidecar's exit
// or readiness does not stand in for it. "" when neither names one: then any container counts.
func (in Input) container() string {
	if in.Oracle.Container != "" {
		return in.Oracle.Container
	}
	for _, e := range in.Entries {
		if e.Kind == timeline.KindWorkload && e.Workload != nil && e.Workload.Container != "" {
			return e.Workload.Container
		}
	}
	return ""
}

// apiOffset is when e's change happened by the API's clock (its APITime), as an offset on the
// timeline; e.T when the entry carries no API time.
func apiOffset(e timeline.Entry) time.Duration {
	if e.APITime != nil && !e.At.IsZero() {
		return e.T + e.APITime.Sub(e.At)
	}
	return e.T
}

// bootstrapBefore is the slowest creation-to-ready time of the pods that were ready by t, as the
// API dated them, and how many pods it was measured on.
func bootstrapBefore(pods map[string]*podLife, t time.Duration) (time.Duration, int) {
	var slowest time.Duration
	n := 0
	for _, p := range pods {
		if p.CreatedAt == nil || p.ReadyAt == nil || *p.ReadyAt > t || *p.ReadyAt < *p.CreatedAt {
			continue
		}
		n++
		slowest = max(slowest, *p.ReadyAt-*p.CreatedAt)
	}
	return slowest, n
}

// bootMargin is what a boot measured before the fault allows a later boot on the same, possibly
// busy, node: × 1.5 + 2s.
func bootMargin(b time.Duration) time.Duration { return b*3/2 + 2*time.Second }

func isReadyField(f string) bool {
	return f == "condition/Ready" ||
		(strings.HasPrefix(f, "container/") && !strings.HasPrefix(f, "container/init:") && strings.HasSuffix(f, "/ready"))
}

// parseExit reads a terminated container state as the pod observer writes it,
// "terminated:<Reason>:<ExitCode>", or a free form with "exitCode=N reason=X" in To or Detail.
func parseExit(m mark, container, to, detail string) containerExit {
	x := containerExit{mark: m, Container: container}
	if parts := strings.Split(to, ":"); len(parts) == 3 {
		x.Reason = parts[1]
		if n, err := strconv.ParseInt(parts[2], 10, 32); err == nil {
			code := int32(n)
			x.ExitCode = &code
		}
		return x
	}
	text := to + " " + detail
	if sm := exitCodeRE.FindStringSubmatch(text); sm != nil {
		if n, err := strconv.ParseInt(sm[1], 10, 32); err == nil {
			code := int32(n)
			x.ExitCode = &code
		}
	}
	if sm := reasonRE.FindStringSubmatch(text); sm != nil {
		x.Reason = sm[1]
	}
	return x
}

func sortedPodNames(pods map[string]*podLife) []string {
	out := make([]string, 0, len(pods))
	for n := range pods {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
