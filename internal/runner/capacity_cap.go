package runner

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/probegate/probegate/internal/cpucap"
	"github.com/probegate/probegate/internal/faults"
	"github.com/probegate/probegate/internal/interrupt"
	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/reports"
)

// A target the harness cannot out-send (the search ended where the harness fell behind its own
// schedule, or at capacityMax) would leave every overload verdict INCONCLUSIVE: the overload cannot
// exceed a capacity it cannot reach. When the runner reaches the nodes, it caps the CPU of the
// target's containers instead (their cgroups' CFS quota: no restart, manifests untouched), sized
// from the CPU the target spent per request in the first search so that multiple × the capped
// capacity sits at capFraction of the harness's limit, and searches again; when the capped target
// still serves more than capOvershoot × that goal (a request costs less CPU at a low rate), the
// cap is scaled down once by what the capped search measured, and the search runs a third time.
// The cap holds until the scenario ends and the report says so (reports.CapacityCap).
const (
	// capFraction: a 2-s step the harness sends on time is not a minute it sustains beside the
	// target (etcd's /health held 1680/s in steps and drowned the harness for minutes at that rate).
	capFraction  = 0.25
	capOvershoot = 1.5
	// capFloor is the lowest cap given: below it a container's own probes and housekeeping starve.
	capFloor = 25
)

// needsCap reports whether c says the harness, not the target, ended the search.
func needsCap(c reports.Capacity) bool {
	return !c.Saturated && (c.HarnessLimit > 0 || c.Rate >= capacityMax)
}

// capMillicores is each of n containers' cap so that the target serves about goal requests per
// second when a request costs perRequest of CPU.
func capMillicores(goal float64, perRequest time.Duration, n int) int64 {
	if n <= 0 || perRequest <= 0 {
		return capFloor
	}
	m := int64(math.Ceil(goal * perRequest.Seconds() * 1000 / float64(n)))
	return max(m, capFloor)
}

// maxMultiple is the highest capacity multiple the scenario's overloads ask for (1 when none).
func maxMultiple(fs []scenario.Fault) float64 {
	out := 1.0
	for _, f := range fs {
		if m, err := strconv.ParseFloat(f.Params[faults.ParamCapacityMultiple], 64); f.Type == faults.TypeOverload && err == nil {
			out = max(out, m)
		}
	}
	return out
}

// searchCapacityWithin searches the target's capacity and, when the harness ended the search and
// the nodes are reachable, caps the target's CPU and searches again.
func (s *scenarioRun) searchCapacityWithin(ctx context.Context, path string, multiple float64) (reports.Capacity, error) {
	exec := s.r.kit.nodeExecOn
	var ctrs []cpucap.Container
	var before time.Duration
	if exec != nil {
		var err error
		if ctrs, err = s.targetContainers(ctx); err != nil {
			s.log.Warn("capacity search: the target's containers", "err", err)
		}
		if before, err = cpuUsed(ctx, exec, ctrs); err != nil {
			s.log.Warn("capacity search: CPU used before", "err", err)
			ctrs = nil
		}
	}
	c, sent, err := s.searchCapacity(ctx, path)
	if err != nil || !needsCap(c) || len(ctrs) == 0 || sent == 0 {
		return c, err
	}
	after, err := cpuUsed(ctx, exec, ctrs)
	if err != nil {
		s.log.Warn("capacity search: CPU used after", "err", err)
		return c, nil
	}
	perRequest := (after - before) / time.Duration(sent)
	reach := float64(capacityMax)
	if c.HarnessLimit > 0 {
		reach = min(c.HarnessLimit, capacityMax)
	}
	goal := capFraction * reach / multiple
	capped := &reports.CapacityCap{
		Millicores: capMillicores(goal, perRequest, len(ctrs)), Containers: len(ctrs), Uncapped: c,
		CPUPerRequest: math.Round(float64(perRequest.Microseconds())) / 1000,
	}
	capped2, err := s.cappedSearch(ctx, path, exec, ctrs, capped)
	if err != nil || capped2.Cap == nil {
		return c, err
	}
	if capped2.Rate <= capOvershoot*goal || capped.Millicores <= capFloor {
		return capped2, nil
	}
	// Scale the cap by what it bought: capacity is about proportional to the CPU a target may use.
	again := *capped
	again.Millicores = max(int64(math.Floor(float64(capped.Millicores)*goal/capped2.Rate)), capFloor)
	capped3, err := s.cappedSearch(ctx, path, exec, ctrs, &again)
	if err != nil || capped3.Cap == nil {
		return capped2, err
	}
	return capped3, nil
}

// cappedSearch caps every container at capped.Millicores (lifted when the scenario ends) and
// searches again. The result has no Cap when the cap could not be written.
func (s *scenarioRun) cappedSearch(ctx context.Context, path string, exec cpucap.Exec, ctrs []cpucap.Container, capped *reports.CapacityCap) (reports.Capacity, error) {
	restores, err := capAll(ctx, exec, ctrs, capped.Millicores)
	s.onEnd(func() {
		cctx, cancel := interrupt.Teardown(ctx, 30*time.Second)
		defer cancel()
		for _, r := range restores {
			if err := r(cctx); err != nil {
				s.log.Warn("lift the capacity search's CPU cap", "err", err)
			}
		}
	})
	if err != nil {
		s.log.Warn("capacity search: could not cap the target's CPU; its capacity stays out of the harness's reach", "err", err)
		return reports.Capacity{}, nil
	}
	s.mark(reports.MarkCapacityCap, fmt.Sprintf("%s: the target's CPU capped at %dm in each of its %d containers (%.3f CPU-ms per request), searching again",
		capped.Uncapped.String(), capped.Millicores, len(ctrs), capped.CPUPerRequest))
	s.log.Info("capacity beyond the harness: target CPU capped", "uncapped", capped.Uncapped.String(), "millicores", capped.Millicores, "containers", len(ctrs))
	if err := s.waitAllReady(ctx); err != nil {
		s.log.Warn("before the capped search", "err", err)
	}
	c, _, err := s.searchCapacity(ctx, path)
	c.Cap = capped
	return c, err
}

// targetContainers are the running target containers of the target's pods.
func (s *scenarioRun) targetContainers(ctx context.Context) ([]cpucap.Container, error) {
	pods, err := s.r.Conn.Client.CoreV1().Pods(s.target.Namespace).List(ctx, metav1.ListOptions{LabelSelector: s.target.Selector})
	if err != nil {
		return nil, fmt.Errorf("list the target's pods: %w", err)
	}
	var out []cpucap.Container
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		if cs := faults.ContainerStatus(&p, s.target.Container); cs != nil && cs.State.Running != nil && cs.ContainerID != "" {
			_, id, _ := strings.Cut(cs.ContainerID, "://")
			out = append(out, cpucap.Container{Node: p.Spec.NodeName, ID: id})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no running container %q in the pods of %s", s.target.Container, s.target.Selector)
	}
	return out, nil
}

// cpuUsed is the CPU time the containers have used, together.
func cpuUsed(ctx context.Context, exec cpucap.Exec, ctrs []cpucap.Container) (time.Duration, error) {
	var sum time.Duration
	for _, c := range ctrs {
		u, err := cpucap.Usage(ctx, exec, c)
		if err != nil {
			return 0, err
		}
		sum += u
	}
	return sum, nil
}

// capAll caps every container; on an error the caps already written are in the restores returned
// all the same.
func capAll(ctx context.Context, exec cpucap.Exec, ctrs []cpucap.Container, milli int64) ([]func(context.Context) error, error) {
	var restores []func(context.Context) error
	for _, c := range ctrs {
		r, err := cpucap.Cap(ctx, exec, c, milli)
		if err != nil {
			return restores, err
		}
		restores = append(restores, r)
	}
	return restores, nil
}
