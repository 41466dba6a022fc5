package halhub

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
)

// Shutdown answers the write in flight, refuses a request that arrives
// meanwhile, and closes every connection once its answers are written;
// DriveSafeAtShutdown then drives the output to its safe value. The
// OnSessions hook hears connections come and go.
func TestShutdown(t *testing.T) {
	var sessionEvents atomic.Int64
	th := newTestHub(t, func(o *Options) { o.OnSessions = func() { sessionEvents.Add(1) } })
	entered, release := make(chan struct{}, 1), make(chan struct{})
	out := output("bench.relay", device.RiskLow)
	out.desc.Safe = false
	out.writeFn = func(_ context.Context, req device.WriteRequest) (device.WriteResult, error) {
		if req.Value == true {
			entered <- struct{}{}
			<-release
		}
		return device.WriteResult{}, nil
	}
	th.addDevice(t, out)
	slow, other := th.dialTCP(t), th.dialWS(t, th.admin)
	slow.init(th.admin)
	other.init("")
	th.waitConnections(t, 2)
	if n := sessionEvents.Load(); n < 2 {
		t.Errorf("OnSessions called %d times for two connections", n)
	}

	answered := make(chan msg, 1)
	go func() {
		answered <- slow.callAsync("hal/write", map[string]any{"device": "bench.relay", "value": true, "reason": "slow"})
	}()
	waitChan(t, entered, "the write to reach the device")
	done := make(chan struct{})
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		th.hub.Shutdown(ctx)
		close(done)
	}()
	waitFor(t, 5*time.Second, "the shutdown to begin", th.hub.closing.Load)
	other.waitClosed() // nothing in flight there: closed at once
	if m := slow.callAsync("hal/ping", nil); m.reason() != "shutting_down" {
		t.Errorf("a request during the shutdown got %s, want shutting_down", m.raw)
	}
	select {
	case <-done:
		t.Fatal("Shutdown returned with a write in flight")
	default:
	}
	close(release)
	if m := <-answered; m.Error != nil {
		t.Errorf("the write in flight got %s", m.raw)
	}
	slow.waitClosed()
	waitChan(t, done, "Shutdown to return")
	th.waitConnections(t, 0)

	applied, failed := th.hub.DriveSafeAtShutdown()
	if len(applied) != 1 || applied[0] != "bench.relay" || len(failed) != 0 {
		t.Errorf("DriveSafeAtShutdown = %v, %v", applied, failed)
	}
	if w := out.written(); len(w) != 2 || w[1] != false {
		t.Errorf("the relay was written %v, want true then its safe false", w)
	}
}

// A connection whose request never ends is closed when Shutdown's
// context does.
func TestShutdownDeadline(t *testing.T) {
	th := newTestHub(t)
	entered := make(chan struct{}, 1)
	out := output("bench.relay", device.RiskLow)
	out.writeFn = func(ctx context.Context, _ device.WriteRequest) (device.WriteResult, error) {
		entered <- struct{}{}
		select {} // a device that never answers, not even its context
	}
	th.addDevice(t, out)
	c := th.dialTCP(t)
	c.init(th.admin)
	go c.callAsync("hal/write", map[string]any{"device": "bench.relay", "value": true, "timeoutMs": 60000})
	waitChan(t, entered, "the write to reach the device")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	th.hub.Shutdown(ctx)
	c.waitClosed()
}

// hangAtNextRound (HangForTest's, in builds tagged testhang) wedges the
// safety loop: the Hub's probe, which answered before, names the loop
// once it is wedged.
func TestHangAtNextRound(t *testing.T) {
	th := newTestHub(t)
	probe := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		return th.hub.Probe(ctx)
	}
	if err := probe(); err != nil {
		t.Fatalf("before: %v", err)
	}
	th.hub.loop.hangAtNextRound()
	if err := probe(); err == nil || !strings.Contains(err.Error(), "hub safety loop") {
		t.Fatalf("wedged: %v", err)
	}
}
