package supervisor

import (
	"context"
	"time"

	"github.com/openhal/gateway/adapterproto"
	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/supervisor/conn"
	"github.com/openhal/gateway/internal/supervisor/restart"
)

// loop runs the adapter until ctx ends, then stops its run.
func (a *adapter) loop(ctx context.Context) {
	if a.man == nil {
		<-ctx.Done() // failed at load: only a reinstall helps
		return
	}
	if a.isTool() {
		a.toolLoop(ctx)
	} else {
		a.serviceLoop(ctx)
	}
}

// serviceLoop keeps a service running (section 7): started at once,
// restarted after a crash with a growing delay, failed after the last
// allowed crash until an operator resets it.
func (a *adapter) serviceLoop(ctx context.Context) {
	for a.waitRunnable(ctx, func() bool { return true }) {
		r, err := a.start(ctx)
		if err == nil {
			if err = a.await(ctx, r); err == nil {
				a.stop(r, "the gateway is stopping", nil)
				return
			}
			a.kill(r) // a crash: what is left of it goes at once
		}
		if ctx.Err() != nil {
			return
		}
		if f, ok := err.(*failure); ok {
			a.fail(f.reason, f.detail)
			continue
		}
		delay, failed := a.crashed(err)
		if failed {
			continue
		}
		a.mu.Lock()
		a.setStateLocked(restart.Backoff, restart.NoReason, "restart in "+delay.String()+" after: "+err.Error())
		a.restarts++
		a.mu.Unlock()
		if !a.sleep(ctx, delay) {
			return
		}
	}
}

// toolLoop starts a tool for requests (section 4): one process for
// concurrent first requests, kept warm after its last answer, then stopped
// with the stop sequence; a request during the stop waits and gets a fresh
// process.
func (a *adapter) toolLoop(ctx context.Context) {
	wanted := func() bool { return a.wantRun }
	for a.waitRunnable(ctx, wanted) {
		r, err := a.start(ctx)
		a.mu.Lock()
		a.wantRun = false
		a.mu.Unlock()
		if err == nil {
			a.touch()
			if err = a.await(ctx, r); err == nil {
				if ctx.Err() != nil {
					a.stop(r, "the gateway is stopping", nil)
					return
				}
				a.stop(r, "idle", func() { // a clean run ends the series
					a.tracker.CleanIdleStop()
					a.consecutive = 0
				})
				continue
			}
			a.kill(r)
		}
		if ctx.Err() != nil {
			return
		}
		if f, ok := err.(*failure); ok {
			a.fail(f.reason, f.detail)
			continue
		}
		// The next request starts it again, under the same count.
		if _, failed := a.crashed(err); !failed {
			a.mu.Lock()
			a.restarts++
			a.setStateLocked(restart.Stopped, restart.NoReason, "crashed: "+err.Error())
			a.mu.Unlock()
		}
	}
}

// waitRunnable waits until the adapter is not failed and want() holds
// (checked under a.mu). An operator's reset clears the crash count here,
// on the loop that owns it. It returns false once ctx ends.
func (a *adapter) waitRunnable(ctx context.Context, want func() bool) bool {
	for {
		a.mu.Lock()
		if a.resetPending {
			a.resetPending = false
			a.tracker.Reset()
			a.consecutive = 0
		}
		ready := a.state != restart.Failed && want()
		a.mu.Unlock()
		if ready {
			return ctx.Err() == nil
		}
		select {
		case <-ctx.Done():
			return false
		case <-a.wake:
		}
	}
}

// touch marks the tool used now and arms its warm timer.
func (a *adapter) touch() {
	a.mu.Lock()
	a.lastUsed = a.s.clk.Now()
	a.mu.Unlock()
	a.s.clk.AfterFunc(a.s.opt.Timing.Warm, a.kick)
}

// sleep waits d on the clock; false when ctx ended first.
func (a *adapter) sleep(ctx context.Context, d time.Duration) bool {
	done := make(chan struct{})
	t := a.s.clk.AfterFunc(d, func() { close(done) })
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

// acquire returns the running connection for one request, starting a tool
// first when it is not running; release must follow. A service that is
// not running, or a failed adapter, is E_ADAPTER_FAILED; a tool whose start
// this request waited for and that crashed is E_ADAPTER_CRASHED.
func (a *adapter) acquire(ctx context.Context) (*conn.Conn, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	target := uint64(0) // the start this request waits for
	for {
		switch {
		case a.state == restart.Failed:
			return nil, a.failedError()
		case a.state == restart.Running && a.cur != nil:
			a.inUse++
			return a.cur.conn, nil
		case !a.isTool():
			return nil, a.failedError()
		case target != 0 && a.gen >= target && a.state != restart.Starting:
			return nil, &device.CodedError{Code: adapterproto.EAdapterCrashed, Msg: "adapter " + a.name + " did not start: " + a.detail}
		}
		if target == 0 {
			target = a.gen + 1
			if a.state == restart.Starting {
				target = a.gen
			}
		}
		a.wantRun = true
		a.kick()
		changed := a.changed
		a.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			a.mu.Lock()
			return nil, ctx.Err()
		}
		a.mu.Lock()
	}
}

// release ends a request's hold on the run; a tool's warm time starts
// again from its last answer.
func (a *adapter) release() {
	a.mu.Lock()
	a.inUse--
	idle := a.inUse == 0
	a.mu.Unlock()
	if idle && a.isTool() {
		a.touch()
	}
}

func (a *adapter) failedError() error {
	msg := "adapter " + a.name + " is " + a.state.String()
	if a.reason != restart.NoReason {
		msg += " (" + a.reason.String() + ")"
	}
	if a.detail != "" {
		msg += ": " + a.detail
	}
	return &device.CodedError{Code: adapterproto.EAdapterFailed, Msg: msg}
}
