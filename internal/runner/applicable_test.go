package runner

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/probegate/probegate/internal/scenario"
	"github.com/probegate/probegate/internal/verdict"
)

// What a target file declares decides, before any deploy, which scenarios apply.
func TestNotApplicableByDeclaration(t *testing.T) {
	bare := &scenario.TargetSpec{Name: "web", Workload: scenario.WorkloadRef{Kind: "Deployment", Name: "web"},
		Requests: scenario.Requests{Default: "/"}}
	withDB := *bare
	withDB.Dependencies = []scenario.Dependency{{Name: "db", Service: "db", Port: 5432, Protocol: "postgres"}}
	withTakes := *bare
	withTakes.Requests.Takes = "/delay/{seconds}"
	sts := *bare
	sts.Workload.Kind = "StatefulSet"
	ds := *bare
	ds.Workload.Kind = "DaemonSet"

	db := &scenario.Scenario{Name: "db-outage", Faults: []scenario.Fault{{Type: "db-down"}}}
	dbNamed := &scenario.Scenario{Name: "db-x", Faults: []scenario.Fault{{Type: "db-latency", Params: map[string]string{"dependency": "cache"}}}}
	stall := &scenario.Scenario{Name: "event-loop-stall", Faults: []scenario.Fault{{Type: "stall"}}}
	long := &scenario.Scenario{Name: "long-request-drain", Load: scenario.Load{Takes: 20e9}, Faults: []scenario.Fault{{Type: "pod-delete"}}}
	roll := &scenario.Scenario{Name: "rolling-update", Faults: []scenario.Fault{{Type: "rolling-update"}}}
	freeze := &scenario.Scenario{Name: "process-freeze", Faults: []scenario.Fault{{Type: "freeze"}}}

	for _, tc := range []struct {
		sc     *scenario.Scenario
		target *scenario.TargetSpec
		want   string // "" applies
	}{
		{db, nil, ""}, // the bundled target declares everything
		{db, bare, "declares no dependency"},
		{db, &withDB, ""},
		{dbNamed, &withDB, `declares no dependency "cache" (it declares db)`},
		{stall, bare, "declares no stall endpoint"},
		{long, bare, "names none (set requests.takes"},
		{long, &withTakes, ""},
		{roll, &sts, ""}, // StatefulSets roll too (one registration: faults/workload_statefulset.go)
		{roll, &ds, "is a DaemonSet: rollouts are built for Deployment and StatefulSet"},
		{roll, bare, ""},
		{freeze, bare, ""}, // node access is the cluster's, not a declaration: decided at run time
	} {
		got := notApplicable(tc.sc, tc.target)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			name := "bundled"
			if tc.target != nil {
				name = tc.target.Name + "/" + tc.target.Workload.Kind
			}
			t.Errorf("%s on %s: %q, want %q", tc.sc.Name, name, got, tc.want)
		}
	}
}

func TestRunNotApplicableDeploysNothing(t *testing.T) {
	r, j, d, _ := newTestRunner(t)
	r.Opts.Custom = &scenario.TargetSpec{Name: "web", Workload: scenario.WorkloadRef{Kind: "Deployment", Name: "web"},
		Requests: scenario.Requests{Default: "/"}}
	rep, err := r.Run(context.Background(), testScenario("db-slowness"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.requests) != 0 || j.String() != "" || rep.Namespace != "" {
		t.Errorf("deployed %d, faults %q, namespace %q; want nothing", len(d.requests), j.String(), rep.Namespace)
	}
	if rep.Status() != verdict.NotApplicable || !strings.Contains(rep.NotApplicable, "faults[0] db-latency: target web declares no dependency") {
		t.Errorf("status %s, why %q", rep.Status(), rep.NotApplicable)
	}
	for _, v := range rep.Verdicts {
		if v.Status != verdict.NotApplicable {
			t.Errorf("verdict %s: %s", v.Rule, v.Status)
		}
	}
}

// The front door's route check asks for the target's default request, never a long one (podinfo's
// /delay/20 through an ingress outlasted every check: drain-exceeds-grace erred, 2026-12-04).
func TestRoutePathIsTheDefaultRequest(t *testing.T) {
	custom := &scenario.TargetSpec{Requests: scenario.Requests{Default: "/", Takes: "/delay/{seconds}"}}
	sc := &scenario.Scenario{Load: scenario.Load{Takes: 20 * time.Second}}
	long, _ := loadPath(sc, custom)
	if long != "/delay/20" || routePath(long, custom) != "/" {
		t.Errorf("load path %q, route path %q; want /delay/20 and /", long, routePath(long, custom))
	}
	if got := routePath("/work", nil); got != "/work" {
		t.Errorf("bundled target: route path %q, want /work", got)
	}
}
