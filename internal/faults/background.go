package faults

import "context"

// background is a proof of effect measured after Inject has returned, so that a slow measurement
// (a pod booting) does not hold up the fault schedule. stop ends it early and waits until it has
// recorded what it saw, so its observe action lands before the fault's revert.
type background struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// goProof runs measure in the background with a context that ends with ctx or with stop.
func goProof(ctx context.Context, measure func(context.Context)) *background {
	ctx, cancel := context.WithCancel(ctx)
	b := &background{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(b.done)
		defer cancel()
		measure(ctx)
	}()
	return b
}

// stop ends the measurement and waits for it to record; nil does nothing.
func (b *background) stop() {
	if b == nil {
		return
	}
	b.cancel()
	<-b.done
}

// wait blocks until the measurement has recorded by itself.
func (b *background) wait() {
	if b != nil {
		<-b.done
	}
}
