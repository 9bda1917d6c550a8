package pause

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestForWaitsOrStopsWithTheContext(t *testing.T) {
	start := time.Now()
	if err := For(context.Background(), 20*time.Millisecond); err != nil || time.Since(start) < 20*time.Millisecond {
		t.Fatalf("For(20ms) = %v after %v", err, time.Since(start))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start = time.Now()
	if err := For(ctx, time.Hour); !errors.Is(err, context.Canceled) || time.Since(start) > time.Second {
		t.Fatalf("For(cancelled, 1h) = %v after %v", err, time.Since(start))
	}
}
