package supervisor

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openhal/gateway/supervisor/restart"
)

// Started waits for every service to leave starting — running for a good
// one, backoff for one that never answers its handshake — and says which
// one it is still waiting for when its context ends first.
func TestStarted(t *testing.T) {
	b := newBench(t,
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
	// mute's handshake takes its whole 2 s deadline: still starting now.
	short, cancelShort := context.WithTimeout(context.Background(), 300*time.Millisecond)
	err := b.sup.Started(short)
	cancelShort()
	if err == nil || !strings.Contains(err.Error(), "adapter mute still starting") || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Started before the handshake deadline: %v", err)
	}
	if err := b.sup.Started(ctxWait(t)); err != nil {
		t.Fatal(err)
	}
	for _, st := range b.sup.Status() {
		switch st.Name {
		case "good":
			if st.State != restart.Running {
				t.Errorf("good is %s after Started", st.State)
			}
		case "mute":
			if st.State == restart.Starting || st.State == restart.Running {
				t.Errorf("mute is %s after Started", st.State)
			}
		}
	}
	select {
	case <-seen:
	case <-time.After(wait):
		t.Fatal("Watch did not report a state change")
	}
	if changes.Load() < 2 {
		t.Errorf("Watch saw %d changes; at least starting and running of good, and mute's", changes.Load())
	}
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
	b.sup.HoldLockForTest()
	defer b.sup.mu.Unlock() // the bench's cleanup stops the supervisor
	if err := probe(); err == nil || !strings.Contains(err.Error(), "supervisor lock") {
		t.Fatalf("supervisor lock held: %v", err)
	}
}
