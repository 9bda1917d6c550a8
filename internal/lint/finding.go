package lint

import "sort"

// Finding is one rule's complaint about one workload (and container, when it is about one).
type Finding struct {
	RuleID    string   `json:"ruleId"`
	RuleName  string   `json:"rule"`
	Severity  Severity `json:"severity"`
	Object    string   `json:"object"` // "deployment/api"
	Namespace string   `json:"namespace,omitempty"`
	Container string   `json:"container,omitempty"`
	// Probe is the probe the finding is about ("liveness"), when it is about one.
	Probe   string   `json:"probe,omitempty"`
	Message string   `json:"message"`
	Pos     Position `json:"position"`
	// Fix is the change that removes the finding, with this manifest's numbers.
	Fix string `json:"fix"`
	// Confirm is the command that shows the finding on a real cluster, given only when it can run
	// as printed (a --target was named, or the workload is a bundled fixture variant).
	Confirm string `json:"confirm,omitempty"`
	// Variant is the bundled fixture variant the workload is ("" for any other workload): the
	// finding's scenario can run it with --variant.
	Variant string `json:"variant,omitempty"`
	// Confirmation is what running the finding's scenario showed (lint --confirm).
	Confirmation *Confirmation `json:"confirmation,omitempty"`
	// PassShowsLittle, when set, says why a PASS of the finding's scenario cannot refute this
	// finding (its problem may or may not show in one run): lint --confirm then calls such a run
	// inconclusive, not refuted.
	PassShowsLittle string `json:"-"`
	// Suppressed says who silenced the finding; suppressed findings never fail a run.
	Suppressed *Suppression `json:"suppressed,omitempty"`
}

// Suppression records why a finding is silenced.
type Suppression struct {
	// Kind is "flag" (--disable), "config" (the config file) or "annotation" (probegate.dev/ignore).
	Kind   string `json:"kind"`
	Reason string `json:"reason,omitempty"`
}

// sortFindings orders findings by file, line, rule and message so output is stable.
func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Pos.File != b.Pos.File {
			return a.Pos.File < b.Pos.File
		}
		if a.Pos.Line != b.Pos.Line {
			return a.Pos.Line < b.Pos.Line
		}
		if a.RuleID != b.RuleID {
			return a.RuleID < b.RuleID
		}
		return a.Message < b.Message
	})
}

// AtOrAbove counts the findings whose severity is at least min.
func AtOrAbove(fs []Finding, min Severity) int {
	n := 0
	for _, f := range fs {
		if f.Severity >= min {
			n++
		}
	}
	return n
}
