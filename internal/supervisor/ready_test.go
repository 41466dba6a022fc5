package supervisor

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/supervisor/restart"
)

// Started waits for every service to leave starting — running for a good
// one, backoff for one whose start fails — and says which one it is still
// waiting for when its context ends first. Nothing here waits for a time:
// mute never answers its handshake and has a deadline far beyond the
// test, so it is starting until the test kills it, which ends its start.
func TestStarted(t *testing.T) {
	timing := shortTiming()
	timing.Conn.Handshake = time.Hour
	b := newBenchTimed(t, timing,
		spec{name: "good", args: []string{"--values", "{}"}},
		spec{name: "mute", args: []string{"--silent"}},
	)
	var changes atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := make(chan struct{}, 64)
	b.sup.Watch(ctx, func() {
		changes.Add(1)
		select { // under the adapter's lock: never block
		case seen <- struct{}{}:
		default:
		}
	})
	b.start()
	b.waitState("good", restart.Running)
	mute := b.waitState("mute", restart.Starting)
	ended, cancelEnded := context.WithCancel(context.Background())
	cancelEnded()
	err := b.sup.Started(ended)
	if err == nil || !strings.Contains(err.Error(), "adapter mute still starting") || !errors.Is(err, context.Canceled) {
		t.Fatalf("Started while mute's handshake is due: %v", err)
	}
	started := make(chan error, 1)
	go func() { started <- b.sup.Started(ctxWait(t)) }()
	if err := syscall.Kill(waitPid(t, b, "mute", mute.Pid), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-started; err != nil {
		t.Fatalf("Started after mute's start failed: %v", err)
	}
	for _, st := range b.sup.Status() {
		if st.Name == "good" && st.State != restart.Running {
			t.Errorf("good is %s after Started", st.State)
		}
	}
	select {
	case <-seen:
	case <-time.After(wait):
		t.Fatal("Watch did not report a state change")
	}
	if changes.Load() < 3 {
		t.Errorf("Watch saw %d changes; at least starting and running of good, and mute's", changes.Load())
	}
}

// waitPid returns the pid of adapter name's process, once it has one:
// starting is set just before the process is started.
func waitPid(t *testing.T, b *bench, name string, pid int) int {
	t.Helper()
	a := b.adapter(name)
	deadline := time.After(wait)
	for pid == 0 {
		a.mu.Lock()
		changed := a.changed
		pid = a.pid
		a.mu.Unlock()
		if pid != 0 {
			break
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("adapter %s has no process after %v", name, wait)
		}
	}
	return pid
}

// Probe answers while nothing is wedged, names an adapter whose lock is
// held, and fails on the supervisor's own lock held for good.
func TestProbe(t *testing.T) {
	b := newBench(t, spec{name: "ta", args: []string{"--values", "{}"}}, spec{name: "tb", args: []string{"--values", "{}"}})
	b.start()
	b.waitState("ta", restart.Running)
	probe := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		return b.sup.Probe(ctx)
	}
	if err := probe(); err != nil {
		t.Fatalf("healthy: %v", err)
	}
	a := b.adapter("tb")
	a.mu.Lock()
	err := probe()
	a.mu.Unlock()
	if err == nil || !strings.Contains(err.Error(), "adapter tb") || strings.Contains(err.Error(), "ta") {
		t.Fatalf("tb's lock held: %v", err)
	}
	if err := probe(); err != nil {
		t.Fatalf("after release: %v", err)
	}
	b.sup.mu.Lock()         // as HoldLockForTest does (hang_testhang.go)
	defer b.sup.mu.Unlock() // the bench's cleanup stops the supervisor
	if err := probe(); err == nil || !strings.Contains(err.Error(), "supervisor lock") {
		t.Fatalf("supervisor lock held: %v", err)
	}
}

// A start that fails and begins again before the waiter looks still ends
// the wait: a service in a fast crash loop (backoff of a few
// milliseconds) must not hold the gateway's readiness back until it
// gives up.
func TestStartedSeesAStartThatFailedAndRestarted(t *testing.T) {
	a := &adapter{s: &Supervisor{}, name: "loop", log: slog.New(slog.DiscardHandler), changed: make(chan struct{})}
	a.mu.Lock()
	a.setStateLocked(restart.Starting, restart.NoReason, "")
	a.mu.Unlock()
	waiting := make(chan error, 1)
	go func() { waiting <- a.waitStarted(ctxWait(t)) }()
	a.mu.Lock()
	a.setStateLocked(restart.Backoff, restart.NoReason, "crashed")
	a.setStateLocked(restart.Starting, restart.NoReason, "")
	a.mu.Unlock()
	if err := <-waiting; err != nil {
		t.Fatalf("waitStarted after a failed start began again: %v", err)
	}
}
