package runner

import (
	"context"
	"log/slog"

	"github.com/probegate/probegate/internal/timeline"
	"github.com/probegate/probegate/observers/hostcpu"
)

// startHostCPU samples this machine's CPU pressure onto tl when the cluster's nodes run on it (kind):
// verdicts then qualify a FAIL that happened while it was starved (observers/hostcpu). On a remote
// cluster, or a kernel without pressure information, it records nothing.
func (r *Runner) startHostCPU(ctx context.Context, tl *timeline.Timeline, log *slog.Logger) *hostcpu.Watcher {
	if r.kit.nodeExec == nil {
		return nil
	}
	w, err := hostcpu.Start(ctx, tl, 0, log)
	if err != nil {
		log.Warn("no host CPU record: a failure on a starved host will not say so", "err", err)
		return nil
	}
	return w
}
