package verdict

import (
	"fmt"
	"strings"
	"time"

	"github.com/probegate/probegate/internal/oracle"
	"github.com/probegate/probegate/internal/timeline"
)

func init() {
	Register(Rule{
		Name:  "withdrawn-after-node-loss",
		Title: "A lost node's pods leave rotation within the cluster's node-health window",
		Doc: "For each node-loss fault, every target pod on the lost node must turn ready=false (or be removed) in the " +
			"EndpointSlices within the window the cluster's own node-health settings allow: from node-monitor-grace-period " +
			"less one Lease renew interval, to grace + node-monitor-period, plus propagation. The settings are read from the " +
			"cluster when the fault starts (kube-controller-manager's flags, the node's Lease) and recorded with it; earlier " +
			"is a withdrawal that was not the node controller's, later or never leaves a dead backend in rotation.",
		Params: []ParamSpec{
			{Name: "fault", Kind: KindList, Doc: "judge only these faults (names or types); default every node-loss fault"},
			{Name: "tolerance", Kind: KindDuration, Default: "250ms", Doc: "clock slack before the window's start", Tolerance: true},
		},
		Allowances: []string{oracle.AllowancePropagation},
		Needs:      NeedsFaultEffect | NeedsEndpoints,
		Judge:      judgeWithdrawnAfterNodeLoss,
	})
}

func judgeWithdrawnAfterNodeLoss(in Input) Result {
	faults, skipped := in.selectedFaults()
	if len(in.Params.List("fault")) == 0 {
		faults, skipped = ofType(faults, "node-loss"), ofType(skipped, "node-loss")
	}
	if len(faults) == 0 && len(skipped) > 0 {
		return skippedResult(skipped)
	}
	r := Result{Status: Pass, Expected: "every pod on the lost node ready=false within the cluster's node-health window"}
	if len(faults) == 0 {
		r.nothingToJudge("no node was lost: nothing to judge")
		return r
	}
	tol := in.Params.Duration("tolerance", 250*time.Millisecond)
	eps := buildEndpoints(in.Entries)
	var observed, expected []string
	var worst float64
	for _, f := range faults {
		h, err := oracle.NodeHealthFromParams(f.Params)
		if err != nil {
			r.unshown(fmt.Sprintf("%s recorded no node-health timing (%v): no window to judge against", f.Type, err))
			continue
		}
		w := h.LossWindow(in.Oracle.Propagation)
		expected = append(expected, fmt.Sprintf("ready=false %s–%s after node %s stopped %s", dur(w.Min), dur(w.Deadline()), f.Params["node"], windowWords(w)))
		if len(f.Pods) == 0 {
			r.unshown(fmt.Sprintf("%s: no target pod seen on the timeline ran on node %s: nothing to judge", f.Type, f.Params["node"]))
			continue
		}
		late := f.Start + w.Deadline()
		inWindow := 0
		for _, pod := range f.Pods {
			r.window("node-loss withdrawal", pod, f.Start+w.Min, late, w.Explain)
			s, ok := eps.withdrawal(pod, f.Start)
			if !ok || (f.Reverted && s.T > f.End) {
				if f.Reverted && f.End < late {
					r.unshown(fmt.Sprintf("node %s was resumed %s after it stopped, before the window's end %s: %s's staying in rotation shows nothing",
						f.Params["node"], dur(f.End-f.Start), dur(w.Deadline()), pod))
					continue
				}
				r.failAt(late)
				r.add(atEntry(f.Start, f.StartSeq, "node %s stopped; %s's endpoint stayed in rotation (deadline %s)", f.Params["node"], pod, dur(w.Deadline())))
				observed = append(observed, pod+": never withdrawn")
				continue
			}
			d := s.T - f.Start
			worst = max(worst, secs(d))
			r.measure("withdrawal after node loss", "s", AtMost, secs(d), secs(w.Deadline()))
			switch {
			case d+tol < w.Min:
				r.failAt(s.T)
				r.add(atEntry(s.T, s.Seq, "%s left rotation %s after node %s stopped: EARLIER than the node controller can act (%s)", pod, dur(d), f.Params["node"], dur(w.Min)))
			case d > w.Deadline():
				r.failAt(s.T)
				r.add(atEntry(s.T, s.Seq, "%s left rotation %s after node %s stopped: LATE (deadline %s)", pod, dur(d), f.Params["node"], dur(w.Deadline())))
			default:
				inWindow++
				r.add(atEntry(s.T, s.Seq, "%s left rotation %s after node %s stopped (in window)", pod, dur(d), f.Params["node"]))
			}
			observed = append(observed, fmt.Sprintf("%s withdrawn after %s", pod, dur(d)))
		}
		observed = append(observed, fmt.Sprintf("node %s: %d of %d pods withdrawn in window", f.Params["node"], inWindow, len(f.Pods)))
	}
	if len(expected) > 0 {
		r.Expected = strings.Join(expected, "; ")
	}
	r.Observed = strings.Join(observed, "; ")
	r.figure("withdrawn_after_node_loss_s", worst)
	return r
}

// ofType keeps the faults of type typ.
func ofType(fs []timeline.FaultWindow, typ string) []timeline.FaultWindow {
	var out []timeline.FaultWindow
	for _, f := range fs {
		if f.Type == typ {
			out = append(out, f)
		}
	}
	return out
}
