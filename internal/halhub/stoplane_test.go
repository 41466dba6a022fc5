package halhub

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

// valve is a number device with a safe value, 0, whose writes of value
// hold block until release is closed; every write is recorded with who
// made it: "hub" for a safe value the Hub drives (its deadline is the
// stop's, safeDeadline) and "client" for the others (their timeoutMs is
// 20 s).
type valve struct {
	writerDevice
	mu      sync.Mutex
	by      []string
	entered chan struct{}
}

func newValve(hold float64, release <-chan struct{}) *valve {
	v := &valve{writerDevice: numberDevice("bench.valve"), entered: make(chan struct{}, 16)}
	v.desc.Safe = 0.0
	v.writeFn = func(ctx context.Context, req device.WriteRequest) (device.WriteResult, error) {
		who := "client"
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= safeDeadline {
			who = "hub"
		}
		v.mu.Lock()
		v.by = append(v.by, fmt.Sprintf("%s %v", who, req.Value))
		v.mu.Unlock()
		if req.Value == hold {
			v.entered <- struct{}{}
			<-release
		}
		return device.WriteResult{}, nil
	}
	return v
}

func (v *valve) writes() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return strings.Join(v.by, ", ")
}

// valveWrite is a pipelined write of bench.valve that waits up to 20 s.
func valveWrite(id int, value float64) string {
	return request(id, "hal/write", map[string]any{"device": "bench.valve", "value": value, "timeoutMs": 20_000})
}

// Spec §2 and §6: a connection whose writes fill its requests in flight
// still stops everything: hal/stop takes the one stop's room beyond the
// limit (a write past it gets BUSY), a second stop while the first is
// still on its way is refused (stop_in_flight: the first engages the
// stop), and once the answers are out a stop is served again.
func TestStopBeyondInFlightLimit(t *testing.T) {
	t.Parallel()
	const max = 4
	th := newTestHub(t, func(o *Options) { o.Limits.MaxInFlight = max })
	release := make(chan struct{})
	v := newValve(5, release)
	th.addDevice(t, v)
	c := th.dialTCP(t)
	c.init(th.admin)
	th.waitIdle(t)

	for i := range max {
		c.sendRaw(valveWrite(100+i, 5))
	}
	waitChan(t, v.entered, "the first write to reach the device")
	c.sendRaw(request(300, "hal/stop", map[string]any{"reason": "beyond the limit"}))
	c.sendRaw(request(301, "hal/stop", nil))
	c.sendRaw(valveWrite(302, 1))
	busy := c.answers([]int{301, 302})
	wantCode(t, busy[301], openhal.CodeBusy, "stop_in_flight")
	wantCode(t, busy[302], openhal.CodeBusy, "too_many_in_flight")

	close(release) // the write at the device finishes; the safe value follows it
	if res := resultOf[openhal.StopResult](t, c.answers([]int{300})[300]); !res.Stopped || strings.Join(res.SafeApplied, ",") != "bench.valve" {
		t.Fatalf("stop beyond the limit: %+v", res)
	}
	for id, m := range c.answers([]int{101, 102, 103}) {
		wantCode(t, m, openhal.CodeStopped, "stopped")
		_ = id
	}
	th.waitIdle(t)
	if res := resultOf[openhal.StopResult](t, c.call("hal/stop", nil)); !res.Stopped || !res.AlreadyStopped {
		t.Fatalf("a stop once the answers are out: %+v", res)
	}
}

// The bytes the requests in flight hold do not keep a stop out either: a
// stop whose message would take them past MaxMessageBytes is served.
func TestStopBeyondByteBound(t *testing.T) {
	t.Parallel()
	th := newTestHub(t, func(o *Options) { o.Limits.MaxMessageBytes = 4096 })
	release := make(chan struct{})
	v := newValve(5, release)
	th.addDevice(t, v)
	c := th.dialTCP(t)
	c.init(th.admin)
	th.waitIdle(t)

	reason := strings.Repeat("r", 900)
	for i := range 4 { // 4 writes of ~1 KiB: the fifth would pass the bound
		c.sendRaw(request(100+i, "hal/write", map[string]any{"device": "bench.valve", "value": 5, "timeoutMs": 20_000, "reason": reason}))
	}
	waitChan(t, v.entered, "the first write to reach the device")
	c.sendRaw(request(200, "hal/write", map[string]any{"device": "bench.valve", "value": 5, "reason": reason}))
	wantCode(t, c.answers([]int{200})[200], openhal.CodeBusy, "too_many_in_flight")
	// A stop of the same size: its safe value waits behind the write at
	// the device, so its answer comes after the release; it is not BUSY.
	c.sendRaw(request(300, "hal/stop", map[string]any{"reason": reason}))
	c.sendRaw(request(1, "hal/ping", nil)) // answered once the stop was taken (or refused)
	c.answers([]int{1})
	for _, m := range c.received() {
		if string(m.ID) == "300" {
			t.Fatalf("the stop answered before the write at the device finished: %s", m.raw)
		}
	}
	close(release)
	if res := resultOf[openhal.StopResult](t, c.answers([]int{300})[300]); !res.Stopped {
		t.Fatalf("stop beyond the byte bound: %+v", res)
	}
}

// Spec §6: the stop's safe value follows the write at the device, ahead
// of the writes queued behind it, safe values among them; those queued
// that are not safe values get STOPPED.
func TestStopAheadOfQueuedWrites(t *testing.T) {
	t.Parallel()
	th := newTestHub(t, func(o *Options) { o.Limits.MaxInFlight = 64 })
	release := make(chan struct{})
	v := newValve(5, release)
	th.addDevice(t, v)
	c := th.dialTCP(t)
	c.init(th.admin)
	stopper := th.dialTCP(t)
	stopper.init(th.admin)

	c.sendRaw(valveWrite(100, 5))
	waitChan(t, v.entered, "the first write to reach the device")
	for i := 1; i <= 20; i++ {
		c.sendRaw(valveWrite(100+i, float64(i%2))) // 1 (refused when stopped) and 0 (a safe value: applied)
	}
	c.sendRaw(request(1, "hal/ping", nil)) // the reader has taken every write's turn
	c.answers([]int{1})
	done := make(chan msg, 1)
	go func() { done <- stopper.callAsync("hal/stop", map[string]any{"reason": "ahead"}) }()
	waitFor(t, 5*time.Second, "the stop's safe value to queue", func() bool {
		th.hub.order.mu.Lock()
		defer th.hub.order.mu.Unlock()
		line := th.hub.order.lines["bench.valve"]
		return len(line) > 1 && line[1].ahead
	})
	close(release)
	if res := resultOf[openhal.StopResult](t, <-done); !res.Stopped {
		t.Fatalf("stop: %+v", res)
	}
	ids := []int{}
	for i := 1; i <= 20; i++ {
		ids = append(ids, 100+i)
	}
	got := c.answers(ids)
	for i := 1; i <= 20; i += 2 {
		wantCode(t, got[100+i], openhal.CodeStopped, "stopped")
	}
	if w := v.writes(); !strings.HasPrefix(w, "client 5, hub 0, client 0") || strings.Contains(w, "client 1") {
		t.Errorf("the valve's writes: %s; want the stop's safe value right after the write at the device, and no 1", w)
	}
}

// writeOrder's turns ahead: each goes behind the turn that holds the
// device and the turns ahead before it, in front of the turns in line.
func TestWriteOrderAhead(t *testing.T) {
	o := newWriteOrder()
	next := func(want *turn, name string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := want.wait(ctx); err != nil {
			t.Fatalf("%s does not hold the device: %v", name, err)
		}
		want.leave()
	}
	alone := o.enterAhead("b")
	next(alone, "a turn ahead on a free device")
	head, queued := o.enter("a"), o.enter("a")
	first, second := o.enterAhead("a"), o.enterAhead("a")
	last := o.enter("a")
	next(head, "the head")
	next(first, "the first turn ahead")
	next(second, "the second turn ahead")
	next(queued, "the turn queued before them")
	next(last, "the last turn")
	if len(o.lines) != 0 {
		t.Fatalf("lines left: %v", o.lines)
	}
}

// simButton is a simulated board's input that an admin may write, as
// the sim board's sim.button.
type simButton struct{ writerDevice }

func (simButton) SimulatedInput() bool { return true }

// On a simulated board an admin plays the outside world: the stop button
// is pressed (the stop engages) and released while stopped — the stop,
// which drives outputs, refuses neither — and then resume lifts the stop.
// Another writer still may not write the input; an output is still
// STOPPED.
func TestSimStopButtonWhileStopped(t *testing.T) {
	b := newBench(t, func(o *Options) { o.StopButtons = []string{"bench.button"}; o.SimInputs = true })
	button := simButton{writerDevice{&testDevice{desc: device.Descriptor{ID: "bench.button", Kind: device.KindGPIOInput, Source: "sim",
		Access: device.AccessRead, Risk: device.RiskLow, Schema: device.Schema{Type: device.TypeBoolean}}}}}
	b.addDevice(t, button)
	b.reg.Publish("bench.button", false, time.Time{})
	admin := b.admin(t)
	wantOK(t, write(admin, "bench.button", true))
	admin.notification("hal/stopped")
	wantCode(t, admin.call("hal/resume", nil), openhal.CodeStopped, "stop_button_pressed")
	wantOK(t, write(admin, "bench.button", true)) // pressed again while stopped: a stop again
	admin.notification("hal/stopped")
	wantCode(t, write(admin, "bench.led", true), openhal.CodeStopped, "stopped")
	agent := b.as(t, "agent", openhal.ScopeControlLow)
	wantCode(t, write(agent, "bench.button", false), openhal.CodeForbidden, "sim_input")
	wantOK(t, write(admin, "bench.button", false))
	wantOK(t, admin.call("hal/resume", nil))
}
