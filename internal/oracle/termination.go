package oracle

import (
	"fmt"
	"time"
)

// TerminationBudget checks the shutdown protocol's arithmetic:
//
//	grace ≥ routing withdrawal + maximum admitted work + cleanup + safety margin
//
// Each term records where its value came from (a scenario parameter, a pod annotation, the
// preStop sleep, or a default).
type TerminationBudget struct {
	GracePeriod        time.Duration `json:"gracePeriod"`
	Withdrawal         time.Duration `json:"withdrawal"`
	WithdrawalSource   string        `json:"withdrawalSource"`
	AdmittedWork       time.Duration `json:"admittedWork"`
	AdmittedWorkSource string        `json:"admittedWorkSource"`
	Cleanup            time.Duration `json:"cleanup"`
	CleanupSource      string        `json:"cleanupSource"`
	Margin             time.Duration `json:"margin"`
	// Required is Withdrawal + AdmittedWork + Cleanup + Margin.
	Required time.Duration `json:"required"`
	// Fits is Required ≤ GracePeriod: when false, a drain that uses its whole budget is force-killed.
	Fits    bool   `json:"fits"`
	Explain string `json:"explain"`
}

func newTerminationBudget(grace time.Duration, withdrawal, work, cleanup valueSource, margin time.Duration) TerminationBudget {
	b := TerminationBudget{
		GracePeriod:        grace,
		Withdrawal:         withdrawal.d,
		WithdrawalSource:   withdrawal.src,
		AdmittedWork:       work.d,
		AdmittedWorkSource: work.src,
		Cleanup:            cleanup.d,
		CleanupSource:      cleanup.src,
		Margin:             margin,
	}
	b.Required = b.Withdrawal + b.AdmittedWork + b.Cleanup + b.Margin
	b.Fits = b.Required <= b.GracePeriod
	cmp, verdict := "≤", "fits"
	if !b.Fits {
		cmp, verdict = ">", "does NOT fit: a full drain would be force-killed"
	}
	b.Explain = fmt.Sprintf("termination: withdrawal %s (%s) + admitted work %s (%s) + cleanup %s (%s) + margin %s = %s %s grace %s: %s",
		b.Withdrawal, b.WithdrawalSource, b.AdmittedWork, b.AdmittedWorkSource, b.Cleanup, b.CleanupSource,
		b.Margin, b.Required, cmp, b.GracePeriod, verdict)
	return b
}

// valueSource is a duration with where it came from.
type valueSource struct {
	d   time.Duration
	src string
}
