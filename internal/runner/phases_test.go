package runner

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/probegate/probegate/internal/cluster"
	"github.com/probegate/probegate/internal/deploy"
	"github.com/probegate/probegate/internal/faults"
	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/timeline"
)

// cleaningDeployer installs like fakeDeployer and journals its target's Cleanup.
type cleaningDeployer struct {
	fakeDeployer
	j *journal
}

func (d *cleaningDeployer) Install(ctx context.Context, c *cluster.Conn, req deploy.Request) (*deploy.Target, error) {
	t, err := d.fakeDeployer.Install(ctx, c, req)
	if t != nil {
		t.Cleanup = func(context.Context) error { d.j.add("cleanup-target"); return nil }
	}
	return t, err
}

// journalObservers journal their Stop.
type journalObservers struct{ j *journal }

func (o journalObservers) Start(context.Context, *cluster.Conn, *deploy.Target, *timeline.Timeline) (observation, error) {
	return o, nil
}
func (o journalObservers) ReadyEndpoints() int { return 3 }
func (o journalObservers) Stop()               { o.j.add("stop-observers") }

type panickingLoad struct{}

func (panickingLoad) Start(context.Context, loadSpec, *timeline.Timeline) (loadRun, error) {
	panic("load generator bug")
}

// A panic in a phase is the scenario's error, and everything started before it is undone, the
// latest first: watchers, then the target, then the namespace.
func TestRunPanicIsTheErrorAndUndoesLatestFirst(t *testing.T) {
	r, _, _, _ := newTestRunner(t)
	j := &journal{}
	r.kit.deployer = &cleaningDeployer{j: j}
	r.kit.observers = journalObservers{j: j}
	r.kit.load = panickingLoad{}
	rep, err := r.Run(context.Background(), testScenario("db-slowness"), 0)
	if err == nil || err.Error() != "scenario db-slowness panicked: load generator bug" {
		t.Fatalf("err = %v", err)
	}
	if rep == nil || rep.Error != err.Error() || rep.Finished.IsZero() {
		t.Fatalf("report = %+v", rep)
	}
	if got := j.String(); got != "stop-observers cleanup-target" {
		t.Errorf("teardown = %q, want the observers stopped before the target's cleanup", got)
	}
	namespaceGone(t, r, rep.Namespace)
}

// failingRevertFaults build faults whose Revert fails.
type failingRevertFaults struct{}

func (failingRevertFaults) Build(spec scenario.Fault, env faultEnv) (faults.Fault, string, error) {
	return failingRevert{name: spec.Type}, "", nil
}

type failingRevert struct{ name string }

func (f failingRevert) Type() string               { return f.name }
func (failingRevert) Inject(context.Context) error { return nil }
func (failingRevert) Revert(context.Context) error { return errors.New("toxiproxy gone") }

// A fault that cannot be reverted stops the run before judging: no verdicts, and the revert's
// error is the scenario's.
func TestRunUnrevertedFaultIsNotJudged(t *testing.T) {
	r, _, _, _ := newTestRunner(t)
	r.kit.faults = failingRevertFaults{}
	sc := testScenario("db-slowness")
	sc.Faults = sc.Faults[2:] // pod-delete: one-shot, reverted when the schedule ends
	rep, err := r.Run(context.Background(), sc, 0)
	if err == nil || !strings.Contains(err.Error(), "revert faults[0] pod-delete: toxiproxy gone") {
		t.Fatalf("err = %v", err)
	}
	if len(rep.Verdicts) != 0 || rep.Oracle != nil {
		t.Errorf("judged after a failed revert: %+v", rep.Verdicts)
	}
	if strings.Count(err.Error(), "toxiproxy gone") != 1 {
		t.Errorf("the revert was tried more than once: %v", err)
	}
}
