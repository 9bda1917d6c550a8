package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/probegate/probegate/internal/verdict"
	"github.com/probegate/probegate/reports"
)

// TestIntegrationGRPCGoaway is the gRPC control (issue #28): the bundled app serving gRPC, as a
// user's target file (fixtures/grpc), under rolling-update-under-load with calls held 1 s on
// pinned connections. good stops with GracefulStop (GOAWAY: the client moves its calls to another
// connection) and PASSes every verdict; no-goaway calls Stop (the connection is cut) and must FAIL
// failed-requests-budget with UNAVAILABLE calls. Run together, the two go side by side, staggered,
// so the pair costs one run's time; make test runs each in its own lane (-run .../good).
func TestIntegrationGRPCGoaway(t *testing.T) {
	bin, root := clusterProbegate(t)
	for _, tc := range []struct {
		target string
		code   int
		fail   string // the rule that must FAIL; every other verdict of good must PASS
	}{
		{"good", ExitOK, ""},
		{"no-goaway", ExitFail, "failed-requests-budget"},
	} {
		t.Run(tc.target, func(t *testing.T) {
			t.Parallel()
			stagger()
			out := filepath.Join(t.TempDir(), "out")
			code, stdout, stderr := runBuilt(t, bin, root, "run", "--target", filepath.Join("fixtures", "grpc", tc.target+".target.yaml"),
				"--scenario", "rolling-update-under-load", "--out", out)
			t.Logf("stdout:\n%s\nstderr (tail): %s", stdout, tail(stderr, 2000))
			rep, err := reports.LoadDir(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Scenarios) != 1 {
				t.Fatalf("%d scenarios in the report, want 1", len(rep.Scenarios))
			}
			sc := rep.Scenarios[0]
			if len(sc.Connections) == 0 {
				t.Errorf("no gRPC connection in the report: the calls were not attributed to connections")
			}
			found := tc.fail == ""
			for _, v := range sc.Verdicts {
				switch {
				case v.Rule == tc.fail:
					found = true
					unavailable := 0
					for _, q := range sc.Requests {
						if !q.OK() && q.GRPC == "UNAVAILABLE" {
							unavailable++
						}
					}
					if v.Status != verdict.Fail || unavailable == 0 {
						t.Errorf("%s: %s (%s), %d calls UNAVAILABLE; want FAIL with UNAVAILABLE calls", v.Rule, v.Status, v.Observed, unavailable)
					}
				case tc.fail == "" && v.Status != verdict.Pass:
					t.Errorf("%s: %s, want PASS (%s %v)", v.Rule, v.Status, v.Observed, v.Unshown)
				}
			}
			if !found {
				t.Errorf("no %s verdict", tc.fail)
			}
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
		})
	}
}

// TestIntegrationGRPCPinnedWithdrawal is the control of no-traffic-after-withdrawal's gRPC branch:
// fixtures/grpc/stall-pinned.yaml stalls the pod the one client's connection is pinned to, readiness
// withdraws it while it runs, and the bundled app sends no GOAWAY when its readiness fails, so the
// calls it keeps taking on that connection must FAIL the rule with the pinned evidence (on the
// cluster 2026-12-07: 29 calls, the first 2.022 s after the withdrawal). After the pair above, alone.
func TestIntegrationGRPCPinnedWithdrawal(t *testing.T) {
	bin, root := clusterProbegate(t)
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runBuilt(t, bin, root, "run", "--target", filepath.Join("fixtures", "grpc", "good.target.yaml"),
		"--scenario", filepath.Join("fixtures", "grpc", "stall-pinned.yaml"), "--out", out)
	t.Logf("stdout:\n%s\nstderr (tail): %s", stdout, tail(stderr, 2000))
	rep, err := reports.LoadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Scenarios) != 1 {
		t.Fatalf("%d scenarios in the report, want 1", len(rep.Scenarios))
	}
	found := false
	for _, v := range rep.Scenarios[0].Verdicts {
		if v.Rule != "no-traffic-after-withdrawal" {
			continue
		}
		found = true
		pinned := 0
		for _, ev := range v.Evidence {
			if strings.Contains(ev.Note, "pinned to it") {
				pinned++
			}
		}
		if v.Status != verdict.Fail || pinned == 0 {
			t.Errorf("%s: %s (%s), %d pinned-call evidence; want FAIL on calls pinned to the withdrawn pod", v.Rule, v.Status, v.Observed, pinned)
		}
	}
	if !found {
		t.Error("no no-traffic-after-withdrawal verdict")
	}
	if code != ExitFail {
		t.Errorf("exit %d, want %d", code, ExitFail)
	}
}
