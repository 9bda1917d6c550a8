// Package pause waits for a duration unless a context ends first, the one copy of that helper the
// runner, the faults and deploy's readiness polls share.
package pause

import (
	"context"
	"time"
)

// For waits d, or returns ctx.Err() as soon as ctx ends.
func For(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
