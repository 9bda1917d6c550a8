package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/probegate/probegate/internal/benchfig"
	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/deploy"
	"github.com/probegate/probegate/internal/maxrate"
	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/loadgen"
	"github.com/probegate/probegate/loadgen/agent"
)

// loadMaxEnv turns BenchmarkLoadMaxRate on: hack/bench.sh sets it where the cluster it wants is up
// (the 3-node one), so the benchmarks' general run does not search a second time.
const loadMaxEnv = "PROBEGATE_BENCH_LOAD_MAX"

// The steps of the search: each is a constant-rate run of loadMaxStep, requests time out after
// loadMaxTimeout (a slower answer counts as failed), and a request sent more than
// maxrate.DefaultMaxLag after its schedule counts as late.
const (
	loadMaxStep    = 8 * time.Second
	loadMaxTimeout = time.Second
	loadMaxSettle  = 2 * time.Second // idle after each step
	loadMaxPath    = "/health/live"  // answered at once, no database
	// loadMaxWorkers caps the host generators' concurrent requests: unbounded, an overloaded step
	// (4000 rps here) opened connections faster than Docker's userland proxy in front of
	// 127.0.0.1 could take, and the proxy of the target's port died, for every user of the cluster.
	loadMaxWorkers = 512
)

// BenchmarkLoadMaxRate finds, on the running cluster (never created or recreated here), the
// highest rate held at fidelity ≥ 0.99 (package maxrate: a ladder ×1.5 from 1000 rps, then
// bisection, a missed rate tried twice) against the fixture target's /health/live in a namespace
// of its own, by three generators in turn: the harness's host load through the target's NodePort on
// 127.0.0.1 (the runner's vegetaLoad), bare vegeta (its library's Attacker with its defaults but the
// same request timeout and cap on workers, results only counted) on the same URL, and N in-cluster
// agents through the target's ClusterIP (the runner's agentLoad; N is the number of schedulable
// nodes, 2 on the 3-node cluster; PROBEGATE_BENCH_LOAD_AGENTS overrides it). It prints the rates,
// their ratios, the harness's CPU per 1000 rps (this process's rusage over the host step held
// highest, per second of load) beside bare vegeta's, and what bounds in-cluster load at scale:
// bytes per streamed record, each agent's CPU and memory (its pod's cgroup, read in its node's
// container), the API server's CPU (its static pod's cgroup) and the harness's during the agents'
// highest step held. PROBEGATE_BENCH_LOAD_BUDGET (default 150s) bounds each generator's search
// (waits for a quiet machine and a ready target aside); PROBEGATE_BENCH_LOAD_MODES
// (host,bare,agents) picks generators. docs/scale.md reads the results.
func BenchmarkLoadMaxRate(b *testing.B) {
	if os.Getenv(loadMaxEnv) != "1" {
		b.Skipf("set %s=1 (hack/bench.sh does, where the cluster is up)", loadMaxEnv)
	}
	budget := 150 * time.Second
	if v := os.Getenv("PROBEGATE_BENCH_LOAD_BUDGET"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			b.Fatalf("PROBEGATE_BENCH_LOAD_BUDGET=%q: want a positive duration", v)
		}
		budget = d
	}
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c, err := cluster.Get(ctx, "")
	if err != nil {
		b.Fatalf("the load search needs a running cluster (it never creates one): %v", err)
	}
	client, err := c.Client()
	if err != nil {
		b.Fatal(err)
	}
	agents, err := schedulableNodes(ctx, client)
	if err != nil {
		b.Fatal(err)
	}
	if v := os.Getenv("PROBEGATE_BENCH_LOAD_AGENTS"); v != "" {
		if agents, err = strconv.Atoi(v); err != nil || agents < 1 {
			b.Fatalf("PROBEGATE_BENCH_LOAD_AGENTS=%q: want a number of agents", v)
		}
	}
	if v := os.Getenv("PROBEGATE_BENCH_LOAD_QUIET"); v != "" {
		if quietWait, err = time.ParseDuration(v); err != nil {
			b.Fatalf("PROBEGATE_BENCH_LOAD_QUIET=%q: want a duration", v)
		}
	}
	modes := map[string]bool{"host": true, "bare": true, "agents": true}
	if v := os.Getenv("PROBEGATE_BENCH_LOAD_MODES"); v != "" {
		modes = map[string]bool{}
		for _, m := range strings.Split(v, ",") {
			if m != "host" && m != "bare" && m != "agents" {
				b.Fatalf("PROBEGATE_BENCH_LOAD_MODES=%q: want a comma-separated list of host, bare, agents", v)
			}
			modes[m] = true
		}
	}
	bench := deployLoadTarget(b, c, client, log)

	for range b.N {
		opts := func(start float64) maxrate.Options {
			return maxrate.Options{Start: start, Factor: 1.5, Max: 6000, Budget: budget, Retries: 1, OnStep: func(s maxrate.Step) {
				b.Logf("step %s", s)
			}}
		}
		var host, bare, inCluster maxrate.Result
		var err error
		if modes["host"] {
			b.Logf("host load on %s (load average %s)", bench.url, loadAverage())
			if host, err = maxrate.Search(ctx, opts(1000), bench.hostStep); err != nil {
				b.Fatal(err)
			}
		}
		if modes["bare"] {
			b.Logf("bare vegeta on %s (load average %s)", bench.url, loadAverage())
			if bare, err = maxrate.Search(ctx, opts(1000), bench.bareStep); err != nil {
				b.Fatal(err)
			}
		}
		if modes["agents"] {
			b.Logf("%d in-cluster agents on %s:%d%s (load average %s)", agents, bench.clusterIP, deploy.TargetPort, loadMaxPath, loadAverage())
			bench.agents = agents
			if inCluster, err = maxrate.Search(ctx, opts(1000), bench.agentStep); err != nil {
				b.Fatal(err)
			}
		}
		for _, r := range []struct {
			name string
			res  maxrate.Result
		}{{"host", host}, {"vegeta bare", bare}, {"agents", inCluster}} {
			if len(r.res.Steps) > 0 {
				b.Logf("%s: held %g rps, missed %g rps, %d steps, cut by the budget: %v", r.name, r.res.Held, r.res.Missed, len(r.res.Steps), r.res.Cut)
			}
		}

		// Four scenarios side by side (the port slots), each at the overload fault's 400 rps.
		const rateGoal = ">=1600"
		hostCPU, bareCPU := bench.cpuPer1000[hostKey(host.Held)], bench.cpuPer1000[bareKey(bare.Held)]
		if modes["host"] {
			benchfig.Print("load-max-rate-host", host.Held, "rps", rateGoal)
		}
		if modes["agents"] {
			benchfig.Print("load-max-rate-agents", inCluster.Held, "rps", rateGoal)
			benchfig.Print("load-max-rate-per-agent", inCluster.Held/float64(agents), "rps", ">=800")
		}
		if modes["bare"] {
			benchfig.Print("vegeta-bare-max-rate", bare.Held, "rps", rateGoal)
		}
		if modes["host"] && modes["bare"] {
			benchfig.Print("load-max-rate-host-vs-vegeta", ratio(host.Held, bare.Held), "x", ">=0.8")
		}
		if modes["host"] && modes["agents"] {
			benchfig.Print("load-max-rate-agents-vs-host", ratio(inCluster.Held, host.Held), "x", ">=0.5")
		}
		if modes["host"] {
			benchfig.Print("harness-cpu-per-1000rps", hostCPU, "ms/s", "<=600")
		}
		if modes["bare"] {
			benchfig.Print("vegeta-bare-cpu-per-1000rps", bareCPU, "ms/s", "<=600")
		}
		if modes["host"] && modes["bare"] {
			benchfig.Print("harness-cpu-vs-vegeta", ratio(hostCPU, bareCPU), "x", "<=2")
		}
		if u, ok := bench.agentUse[inCluster.Held]; ok {
			benchfig.Print("agent-record-bytes", u.recordBytes, "bytes", "<=400")
			benchfig.Print("agent-cpu-per-1000rps", u.agentCPU/(inCluster.Held/float64(agents)/1000), "ms/s", "<=600")
			benchfig.Print("agent-mem-peak", u.agentPeak/(1<<20), "MiB", "<=128")
			benchfig.Print("apiserver-cpu-during-agents", u.apiserverCPU, "ms/s", "<=1000")
			benchfig.Print("harness-cpu-per-1000rps-agents", u.harnessCPU/(inCluster.Held/1000), "ms/s", "<=600")
		}
		if u, ok := bench.hostUse[host.Held]; ok {
			b.Logf("API server CPU during the host step at %g rps (no agents, no streams): %.0f ms/s", host.Held, u)
		}
	}
}

// loadAverage is the machine's load averages, for the log: another job on the machine skews the
// search.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(data))[:3], " ")
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func hostKey(rate float64) string { return "host " + strconv.FormatFloat(rate, 'f', -1, 64) }
func bareKey(rate float64) string { return "bare " + strconv.FormatFloat(rate, 'f', -1, 64) }

// schedulableNodes counts the nodes a pod without tolerations can go to (at least 1).
func schedulableNodes(ctx context.Context, client kubernetes.Interface) (int, error) {
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("list nodes: %w", err)
	}
	n := 0
	for _, node := range nodes.Items {
		tainted := node.Spec.Unschedulable
		for _, t := range node.Spec.Taints {
			tainted = tainted || t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
		}
		if !tainted {
			n++
		}
	}
	return max(n, 1), nil
}

// loadBench is the deployed target and what the steps measured on the side.
type loadBench struct {
	c         *cluster.Cluster
	client    kubernetes.Interface
	log       *slog.Logger
	ns        string
	url       string // the target's NodePort on loopback, with loadMaxPath
	clusterIP string
	agents    int
	replicas  int // of the target
	apiserver podCgroup
	// cpuPer1000 is the generator's own CPU in ms per second of load per 1000 rps, by hostKey or
	// bareKey; hostUse the API server's CPU (ms/s) during each host step; agentUse the agents' steps.
	cpuPer1000 map[string]float64
	hostUse    map[float64]float64
	agentUse   map[float64]agentUse
}

// agentUse is what an agents' step cost: bytes per streamed record line, CPU per agent (ms/s,
// mean over agents), peak memory per agent (bytes, the largest), the API server's CPU (ms/s), and
// the harness's.
type agentUse struct {
	recordBytes, agentCPU, agentPeak, apiserverCPU float64
	// harnessCPU is this process's CPU (ms/s) starting the agents and reading their streams.
	harnessCPU float64
}

// deployLoadTarget installs the fixture (3 target replicas, PostgreSQL, toxiproxy) in a namespace of
// its own on a free port slot and deletes the namespace when the benchmark ends.
func deployLoadTarget(b *testing.B, c *cluster.Cluster, client kubernetes.Interface, log *slog.Logger) *loadBench {
	ctx := context.Background()
	ns := fmt.Sprintf("pg-bench-load-%06x", time.Now().UnixNano()&0xffffff)
	pool := &slotPool{Client: client, Slots: cluster.Slots, TargetPort: cluster.TargetNodePort, ToxiproxyPort: cluster.ToxiproxyNodePort}
	slotCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	slot, err := pool.Acquire(slotCtx)
	cancel()
	if err != nil {
		b.Fatal(err)
	}
	opts := deploy.Options{Namespace: ns, Slot: slot, Replicas: 3, Log: log}
	if err := c.LoadImages(ctx, append(deploy.Images(opts), agent.DefaultImage)...); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		grace := int64(0)
		if err := client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
			b.Logf("delete namespace %s: %v", ns, err)
			return
		}
		// Wait for it to go, so the port slot is free for whoever runs next.
		_ = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			return err != nil, nil
		})
	})
	ep, err := deploy.Install(ctx, client, opts)
	if err != nil {
		b.Fatal(err)
	}
	svc, err := client.CoreV1().Services(ns).Get(ctx, ep.TargetService, metav1.GetOptions{})
	if err != nil {
		b.Fatal(err)
	}
	api, err := apiserverCgroup(ctx, client)
	if err != nil {
		b.Fatal(err)
	}
	return &loadBench{
		c: c, client: client, log: log, ns: ns, url: ep.TargetURL + loadMaxPath, clusterIP: svc.Spec.ClusterIP, replicas: int(opts.Replicas),
		apiserver: api, cpuPer1000: map[string]float64{}, hostUse: map[float64]float64{}, agentUse: map[float64]agentUse{},
	}
}

// processCPU is this process's user + system CPU time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// hostBusy is the machine's busy CPU time and total CPU time so far, summed over its CPUs, from
// /proc/stat (0, 0 when it cannot be read): two readings give how busy the machine was between
// them, whoever kept it busy.
func hostBusy() (busy, total uint64) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(data), "\n")
	fields := strings.Fields(line)
	for i, f := range fields[1:] {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return 0, 0
		}
		total += v
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return busy, total
}

// busySince is the fraction of the machine's CPU time busy since the reading b0, t0.
func busySince(b0, t0 uint64) float64 {
	b1, t1 := hostBusy()
	if t1 <= t0 {
		return 0
	}
	return float64(b1-b0) / float64(t1-t0)
}

// perSecond is a CPU time spent over wall as milliseconds per second.
func perSecond(cpu, wall time.Duration) float64 {
	if wall <= 0 {
		return 0
	}
	return float64(cpu.Milliseconds()) / wall.Seconds()
}

// quietBusy and quietWait gate each step: it begins once the machine was less than quietBusy busy
// over a second (the idle cluster and target included), waiting at most quietWait
// (PROBEGATE_BENCH_LOAD_QUIET overrides it). Another job on the machine (a build, a test) would otherwise be measured as the load
// generator's limit; a step that could not wait for quiet says so in its note.
const (
	quietBusy = 0.5
)

var quietWait = 45 * time.Second

// waitTarget waits until every replica of the target is a ready endpoint again: the good
// target's readiness withdraws a saturated pod (and keeps it out for a while), so a step after an
// overloaded one would otherwise measure the target's recovery.
func (lb *loadBench) waitTarget(ctx context.Context) error {
	var ready int
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		slices, err := lb.client.DiscoveryV1().EndpointSlices(lb.ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + deploy.TargetName})
		if err != nil {
			return false, nil
		}
		ready = 0
		for _, sl := range slices.Items {
			for _, e := range sl.Endpoints {
				if e.Conditions.Ready != nil && *e.Conditions.Ready {
					ready++
				}
			}
		}
		return ready >= lb.replicas, nil
	})
	if err != nil {
		return fmt.Errorf("the target has %d of %d endpoints ready two minutes after the last step: %w", ready, lb.replicas, err)
	}
	return nil
}

// waitQuiet waits until the machine was less than quietBusy busy over a second, or quietWait has
// passed, and returns the last second's busy fraction.
func waitQuiet(ctx context.Context) float64 {
	deadline := time.Now().Add(quietWait)
	for {
		b0, t0 := hostBusy()
		if sleepCtx(ctx, time.Second) != nil {
			return 0
		}
		busy := busySince(b0, t0)
		if busy < quietBusy || time.Now().After(deadline) {
			return busy
		}
	}
}

// hostStep runs the harness's host load (the runner's vegetaLoad, as a scenario does) at rate.
func (lb *loadBench) hostStep(ctx context.Context, rate float64) (maxrate.Step, error) {
	quiet, waited, err := lb.ready(ctx)
	if err != nil {
		return maxrate.Step{}, err
	}
	defer sleepCtx(ctx, loadMaxSettle)
	api0, _ := readCgroup(ctx, lb.c, lb.apiserver)
	b0, t0 := hostBusy()
	cpu0 := processCPU()
	run, err := vegetaLoad{Logger: lb.log}.Start(ctx, loadSpec{
		URL: lb.url, Rate: int(rate), Duration: loadMaxStep, KeepAlive: true, Timeout: loadMaxTimeout, MaxWorkers: loadMaxWorkers,
	}, timeline.New(time.Now()))
	if err != nil {
		return maxrate.Step{}, err
	}
	reqs, err := run.Wait()
	cpu := processCPU() - cpu0
	busy := busySince(b0, t0)
	api1, _ := readCgroup(ctx, lb.c, lb.apiserver)
	if err != nil && !errors.Is(err, loadgen.ErrUnrecorded) {
		return maxrate.Step{}, err
	}
	st := maxrate.Fidelity(records(reqs), rate, loadMaxStep, 1, maxrate.DefaultMaxLag)
	st.Waited = waited
	ms := perSecond(cpu, loadMaxStep)
	lb.cpuPer1000[hostKey(rate)] = ms / (rate / 1000)
	lb.hostUse[rate] = perSecond(api1.cpu-api0.cpu, loadMaxStep)
	st.Note = fmt.Sprintf("harness CPU %.0f ms/s (%.0f per 1000 rps); machine %.0f%% busy before, %.0f%% during", ms, ms/(rate/1000), 100*quiet, 100*busy)
	if err != nil {
		st.Note += "; " + err.Error()
	}
	return st, nil
}

// bareStep runs vegeta's own Attacker, defaults but the request timeout and the cap on workers, at
// rate on the same URL.
func (lb *loadBench) bareStep(ctx context.Context, rate float64) (maxrate.Step, error) {
	quiet, waited, err := lb.ready(ctx)
	if err != nil {
		return maxrate.Step{}, err
	}
	defer sleepCtx(ctx, loadMaxSettle)
	b0, t0 := hostBusy()
	cpu0 := processCPU()
	atk := vegeta.NewAttacker(vegeta.Timeout(loadMaxTimeout), vegeta.MaxWorkers(loadMaxWorkers))
	targets := vegeta.NewStaticTargeter(vegeta.Target{Method: http.MethodGet, URL: lb.url})
	recs := make([]maxrate.Record, 0, int(rate*loadMaxStep.Seconds()))
	for res := range atk.Attack(targets, vegeta.ConstantPacer{Freq: int(rate), Per: time.Second}, loadMaxStep, "bare") {
		recs = append(recs, maxrate.Record{Start: res.Timestamp, OK: res.Error == "" && res.Code >= 200 && res.Code < 400})
	}
	cpu := processCPU() - cpu0
	busy := busySince(b0, t0)
	st := maxrate.Fidelity(recs, rate, loadMaxStep, 1, maxrate.DefaultMaxLag)
	st.Waited = waited
	ms := perSecond(cpu, loadMaxStep)
	lb.cpuPer1000[bareKey(rate)] = ms / (rate / 1000)
	st.Note = fmt.Sprintf("vegeta CPU %.0f ms/s (%.0f per 1000 rps); machine %.0f%% busy before, %.0f%% during", ms, ms/(rate/1000), 100*quiet, 100*busy)
	return st, nil
}

// agentStep runs the in-cluster load (the runner's agentLoad: fresh agent pods, one load each) at
// rate, reading the agents' and the API server's cgroups over the load's length.
func (lb *loadBench) agentStep(ctx context.Context, rate float64) (maxrate.Step, error) {
	quiet, waited, err := lb.ready(ctx)
	if err != nil {
		return maxrate.Step{}, err
	}
	defer sleepCtx(ctx, loadMaxSettle)
	cpu0 := processCPU()
	run, err := agentLoad{client: lb.client, n: lb.agents, image: agent.DefaultImage, log: lb.log}.Start(ctx, loadSpec{
		URL: lb.url, Namespace: lb.ns, Service: deploy.TargetName, Path: loadMaxPath,
		Rate: int(rate), Duration: loadMaxStep, KeepAlive: true, Timeout: loadMaxTimeout,
	}, timeline.New(time.Now()))
	if err != nil {
		return maxrate.Step{}, err
	}
	t0 := time.Now()
	var pods []podCgroup
	for _, name := range run.(*agentRun).pods {
		pc, err := podCgroupOf(ctx, lb.client, lb.ns, name)
		if err != nil {
			run.Stop()
			_, _ = run.Wait()
			return maxrate.Step{}, err
		}
		pods = append(pods, pc)
	}
	sample := func() ([]cgroupUse, cgroupUse) {
		var use []cgroupUse
		for _, pc := range pods {
			u, err := readCgroup(ctx, lb.c, pc)
			if err != nil {
				lb.log.Warn("agent cgroup not read", "pod", pc.pod, "err", err)
			}
			use = append(use, u)
		}
		api, _ := readCgroup(ctx, lb.c, lb.apiserver)
		return use, api
	}
	before, api0 := sample()
	busy0, total0 := hostBusy()
	// The load ends loadMaxStep after it started (a little before t0); sample just before.
	if err := sleepCtx(ctx, time.Until(t0.Add(loadMaxStep-300*time.Millisecond))); err != nil {
		run.Stop()
	}
	after, api1 := sample()
	wall := time.Since(t0)
	busy := busySince(busy0, total0)
	reqs, err := run.Wait()
	cpu := processCPU() - cpu0
	if err != nil && !errors.Is(err, loadgen.ErrUnrecorded) {
		return maxrate.Step{}, err
	}
	if gerr := lb.agentsGone(ctx); gerr != nil {
		return maxrate.Step{}, gerr
	}
	st := maxrate.Fidelity(records(reqs), rate, loadMaxStep, lb.agents, maxrate.DefaultMaxLag)
	st.Waited = waited
	u := agentUse{recordBytes: recordBytes(reqs), apiserverCPU: perSecond(api1.cpu-api0.cpu, wall), harnessCPU: perSecond(cpu, loadMaxStep)}
	for i := range after {
		u.agentCPU += perSecond(after[i].cpu-before[i].cpu, wall) / float64(len(after))
		u.agentPeak = max(u.agentPeak, float64(after[i].peak))
	}
	lb.agentUse[rate] = u
	st.Note = fmt.Sprintf("per agent CPU %.0f ms/s, peak memory %.1f MiB; API server CPU %.0f ms/s; harness CPU %.0f ms/s; %.0f bytes per streamed record; machine %.0f%% busy before, %.0f%% during",
		u.agentCPU, u.agentPeak/(1<<20), u.apiserverCPU, u.harnessCPU, u.recordBytes, 100*quiet, 100*busy)
	if err != nil {
		st.Note += "; " + err.Error()
	}
	return st, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// agentsGone waits until the step's agent pods are deleted: the next step creates pods of the
// same names.
func (lb *loadBench) agentsGone(ctx context.Context) error {
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := lb.client.CoreV1().Pods(lb.ns).List(ctx, metav1.ListOptions{LabelSelector: agentLabel + "=true"})
		if err != nil {
			return false, nil
		}
		return len(pods.Items) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("agent pods of the last step still there after a minute: %w", err)
	}
	return nil
}

// records turns recorded requests into what fidelity reads.
func records(reqs []timeline.Request) []maxrate.Record {
	out := make([]maxrate.Record, len(reqs))
	for i, q := range reqs {
		out[i] = maxrate.Record{Source: q.Source, Start: q.Start, OK: q.OK()}
	}
	return out
}

// recordBytes is the mean size of a record stream line, as an agent writes it (the harness adds
// Source after reading it).
func recordBytes(reqs []timeline.Request) float64 {
	if len(reqs) == 0 {
		return 0
	}
	var total int
	for _, q := range reqs {
		q.Source = ""
		line, err := json.Marshal(agent.Line{Request: &q})
		if err != nil {
			return 0
		}
		total += len(line) + 1 // and the newline
	}
	return float64(total) / float64(len(reqs))
}

// podCgroup names a pod's cgroup: the node it runs on and its kubelet UID (a static pod's is its
// config hash, not the mirror pod's UID).
type podCgroup struct {
	pod, node, uid string
}

func podCgroupOf(ctx context.Context, client kubernetes.Interface, ns, name string) (podCgroup, error) {
	p, err := client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return podCgroup{}, fmt.Errorf("pod %s/%s: %w", ns, name, err)
	}
	uid := string(p.UID)
	if h := p.Annotations["kubernetes.io/config.mirror"]; h != "" {
		uid = h
	}
	return podCgroup{pod: ns + "/" + name, node: p.Spec.NodeName, uid: strings.ReplaceAll(uid, "-", "_")}, nil
}

// apiserverCgroup finds the API server's static pod.
func apiserverCgroup(ctx context.Context, client kubernetes.Interface) (podCgroup, error) {
	pods, err := client.CoreV1().Pods(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{LabelSelector: "component=kube-apiserver"})
	if err != nil || len(pods.Items) == 0 {
		return podCgroup{}, fmt.Errorf("find the API server's pod: %d found, %v", len(pods.Items), err)
	}
	return podCgroupOf(ctx, client, metav1.NamespaceSystem, pods.Items[0].Name)
}

// cgroupUse is a pod's cumulative CPU time and its memory now and at its peak.
type cgroupUse struct {
	cpu       time.Duration
	mem, peak uint64
}

// cgroupScript prints a pod's cgroup CPU (ns), memory and peak memory (bytes), from the cgroup v1
// cpuacct and memory hierarchies of a kubelet with the systemd driver, else from cgroup v2.
const cgroupScript = `u=$1
c=$(find /sys/fs/cgroup/cpuacct -maxdepth 5 -type d -name "*pod$u.slice" 2>/dev/null | head -1)
m=$(find /sys/fs/cgroup/memory -maxdepth 5 -type d -name "*pod$u.slice" 2>/dev/null | head -1)
if [ -n "$c" ] && [ -n "$m" ]; then
  echo "$(cat "$c/cpuacct.usage") $(cat "$m/memory.usage_in_bytes") $(cat "$m/memory.max_usage_in_bytes")"
  exit 0
fi
d=$(find /sys/fs/cgroup -maxdepth 5 -type d -name "*pod$u.slice" 2>/dev/null | head -1)
[ -n "$d" ] || { echo "no cgroup for pod $u" >&2; exit 1; }
echo "$(( $(awk '$1 == "usage_usec" { print $2 }' "$d/cpu.stat") * 1000 )) $(cat "$d/memory.current") $(cat "$d/memory.peak" 2>/dev/null || echo 0)"`

// readCgroup reads pc's cgroup in its node's container.
func readCgroup(ctx context.Context, c *cluster.Cluster, pc podCgroup) (cgroupUse, error) {
	out, err := c.NodeExecOn(ctx, pc.node, "sh", "-c", cgroupScript, "cgroup", pc.uid)
	if err != nil {
		return cgroupUse{}, fmt.Errorf("cgroup of pod %s on %s: %w", pc.pod, pc.node, err)
	}
	var cpu int64
	var u cgroupUse
	if _, err := fmt.Sscan(string(out), &cpu, &u.mem, &u.peak); err != nil {
		return cgroupUse{}, fmt.Errorf("cgroup of pod %s on %s: %q: %w", pc.pod, pc.node, out, err)
	}
	u.cpu = time.Duration(cpu)
	return u, nil
}

// ready waits until every target replica is a ready endpoint and the machine is quiet, and returns
// how quiet it got and how long that took (not counted in the step's budget).
func (lb *loadBench) ready(ctx context.Context) (quiet float64, waited time.Duration, err error) {
	w0 := time.Now()
	if err := lb.waitTarget(ctx); err != nil {
		return 0, 0, err
	}
	quiet = waitQuiet(ctx)
	return quiet, time.Since(w0), nil
}
