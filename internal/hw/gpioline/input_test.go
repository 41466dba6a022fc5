package gpioline

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpiotest"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock/clocktest"
)

const deadline = 5 * time.Second

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func inDesc() device.Descriptor {
	return device.Descriptor{ID: "bench.stop", Kind: device.KindGPIOInput, Access: device.AccessRead,
		Risk: device.RiskLow, Schema: device.Schema{Type: "boolean"}}
}

// spyPin is a gpiotest pin that records its In calls, tells when it starts
// waiting for an edge (by then Run has handled the edge before), can make
// its waits fail at once, and whose Halt interrupts a wait, as a gpioioctl
// line's does.
type spyPin struct {
	*gpiotest.Pin
	waiting chan struct{}
	waits   atomic.Int32
	fail    atomic.Bool
	halted  chan struct{}
	halt    sync.Once

	mu    sync.Mutex
	ins   []inCall
	inErr error
}

type inCall struct {
	pull gpio.Pull
	edge gpio.Edge
}

func newSpyPin(l gpio.Level) *spyPin {
	return &spyPin{
		Pin:     &gpiotest.Pin{N: "BUTTON", Num: 5, L: l, EdgesChan: make(chan gpio.Level)},
		waiting: make(chan struct{}, 64),
		halted:  make(chan struct{}),
	}
}

func (p *spyPin) In(pull gpio.Pull, edge gpio.Edge) error {
	p.mu.Lock()
	p.ins = append(p.ins, inCall{pull, edge})
	err := p.inErr
	p.mu.Unlock()
	if err != nil {
		return err
	}
	return p.Pin.In(pull, edge)
}

func (p *spyPin) calls() []inCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]inCall(nil), p.ins...)
}

func (p *spyPin) setInErr(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inErr = err
}

func (p *spyPin) setLevel(l gpio.Level) {
	p.Lock()
	defer p.Unlock()
	p.L = l
}

func (p *spyPin) WaitForEdge(timeout time.Duration) bool {
	p.waits.Add(1)
	if p.fail.Load() {
		return false
	}
	p.waiting <- struct{}{}
	var expired <-chan time.Time
	if timeout >= 0 {
		tm := time.NewTimer(timeout)
		defer tm.Stop()
		expired = tm.C
	}
	select {
	case l := <-p.EdgesChan:
		_ = p.Pin.Out(l)
		return true
	case <-p.halted:
		return false
	case <-expired:
		return false
	}
}

func (p *spyPin) Halt() error {
	p.halt.Do(func() { close(p.halted) })
	return nil
}

// event is one call to a recorder.
type event struct {
	state device.State // "" for a value
	fault string
	value any
	ts    time.Time
}

type recorder chan event

func (r recorder) Value(v any, ts time.Time)          { r <- event{value: v, ts: ts} }
func (r recorder) State(s device.State, fault string) { r <- event{state: s, fault: fault} }

func (r recorder) next(t *testing.T) event {
	t.Helper()
	select {
	case e := <-r:
		return e
	case <-time.After(deadline):
		t.Fatal("no report")
		return event{}
	}
}

func (r recorder) wantValue(t *testing.T, v bool, ts time.Time) {
	t.Helper()
	e := r.next(t)
	if e.state != "" || e.value != v || !e.ts.Equal(ts) {
		t.Fatalf("got %+v, want value %v at %v", e, v, ts)
	}
}

func (r recorder) wantState(t *testing.T, s device.State, faultHas string) {
	t.Helper()
	e := r.next(t)
	if e.state != s || !strings.Contains(e.fault, faultHas) || (s == device.StateOK && e.fault != "") {
		t.Fatalf("got %+v, want state %s with a fault containing %q", e, s, faultHas)
	}
}

func (r recorder) wantNone(t *testing.T) {
	t.Helper()
	select {
	case e := <-r:
		t.Fatalf("unexpected report %+v", e)
	default:
	}
}

// run starts in.Run and returns its cancel and a channel closed when it
// returns; the test's cleanup stops it and fails if it does not return.
func run(t *testing.T, in *Input) (recorder, context.CancelFunc, <-chan struct{}) {
	t.Helper()
	rep := make(recorder, 64)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		in.Run(ctx, rep)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(deadline):
			t.Error("Run did not return after its ctx ended")
		}
	})
	return rep, cancel, done
}

// send gives p an edge to level l.
func send(t *testing.T, p *gpiotest.Pin, l gpio.Level) {
	t.Helper()
	select {
	case p.EdgesChan <- l:
	case <-time.After(deadline):
		t.Fatalf("nobody waited for the edge to %s", l)
	}
}

// wait waits until Run is back in WaitForEdge, having handled what
// came before.
func (p *spyPin) wait(t *testing.T) {
	t.Helper()
	select {
	case <-p.waiting:
	case <-time.After(deadline):
		t.Fatal("Run did not wait for an edge")
	}
}

// edge gives p an edge to l and waits until Run has handled it.
func (p *spyPin) edge(t *testing.T, l gpio.Level) {
	t.Helper()
	send(t, p.Pin, l)
	p.wait(t)
}

func TestNewInputRequestsLine(t *testing.T) {
	tests := []struct {
		pull     gpio.Pull
		edge     gpio.Edge
		wantEdge gpio.Edge
	}{
		{gpio.PullUp, gpio.FallingEdge, gpio.FallingEdge},
		{gpio.PullDown, gpio.RisingEdge, gpio.RisingEdge},
		{gpio.Float, gpio.BothEdges, gpio.BothEdges},
		{gpio.PullNoChange, gpio.NoEdge, gpio.BothEdges},
	}
	for _, tt := range tests {
		t.Run(tt.pull.String()+"/"+tt.edge.String(), func(t *testing.T) {
			p := newSpyPin(gpio.Low)
			if _, err := NewInput(inDesc(), p, InputOpts{Pull: tt.pull, Edge: tt.edge}, clocktest.NewFake(t0)); err != nil {
				t.Fatal(err)
			}
			want := []inCall{{tt.pull, tt.wantEdge}}
			if got := p.calls(); len(got) != 1 || got[0] != want[0] {
				t.Errorf("In calls = %v, want %v", got, want)
			}
		})
	}
}

func TestNewInputErrors(t *testing.T) {
	clk := clocktest.NewFake(t0)
	noEdges := &gpiotest.Pin{N: "BUTTON", Num: 5} // gpiotest refuses edges without EdgesChan
	_, err := NewInput(inDesc(), noEdges, InputOpts{}, clk)
	if err == nil {
		t.Fatal("NewInput succeeded though In failed")
	}
	for _, want := range []string{"bench.stop", "BUTTON", "EdgesChan"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}

	if _, err := NewInput(inDesc(), nil, InputOpts{}, clk); !errors.Is(err, errNoPin) {
		t.Errorf("NewInput(nil pin) = %v, want errNoPin", err)
	}
	if _, err := NewInput(inDesc(), newSpyPin(gpio.Low), InputOpts{}, nil); err == nil {
		t.Error("NewInput(nil clock) succeeded")
	}
	if _, err := NewInput(inDesc(), newSpyPin(gpio.Low), InputOpts{Debounce: -time.Millisecond}, clk); err == nil {
		t.Error("NewInput(negative debounce) succeeded")
	}
}

func TestInputRead(t *testing.T) {
	tests := []struct {
		level  gpio.Level
		invert bool
		want   bool
	}{
		{gpio.High, false, true},
		{gpio.Low, false, false},
		{gpio.High, true, false},
		{gpio.Low, true, true},
	}
	for _, tt := range tests {
		p := newSpyPin(tt.level)
		in, err := NewInput(inDesc(), p, InputOpts{Pull: gpio.Float, Invert: tt.invert}, clocktest.NewFake(t0))
		if err != nil {
			t.Fatal(err)
		}
		got, err := in.Read(t.Context())
		if err != nil || got.Value != tt.want || !got.TS.Equal(t0) {
			t.Errorf("line %s, invert %v: Read = %+v, %v; want %v at %v", tt.level, tt.invert, got, err, tt.want, t0)
		}
	}

	in, err := NewInput(inDesc(), newSpyPin(gpio.Low), InputOpts{}, clocktest.NewFake(t0))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := in.Read(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Read with a done ctx = %v, want context.Canceled", err)
	}
}

// TestRunPublishesEdges runs on a plain gpiotest pin, whose WaitForEdge
// is periph's own.
func TestRunPublishesEdges(t *testing.T) {
	for _, invert := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "inverted"}[invert], func(t *testing.T) {
			p := &gpiotest.Pin{N: "BUTTON", Num: 5, EdgesChan: make(chan gpio.Level)}
			in, err := NewInput(inDesc(), p, InputOpts{Pull: gpio.PullDown, Invert: invert}, clocktest.NewFake(t0))
			if err != nil {
				t.Fatal(err)
			}
			in.edgeWait = 10 * time.Millisecond // gpiotest's Halt cannot end a wait
			rep, _, _ := run(t, in)
			rep.wantValue(t, invert, t0) // pulled down
			send(t, p, gpio.High)
			rep.wantValue(t, !invert, t0)
			send(t, p, gpio.Low)
			rep.wantValue(t, invert, t0)
		})
	}
}

func TestRunPublishesChangesOnly(t *testing.T) {
	p := newSpyPin(gpio.Low)
	in, err := NewInput(inDesc(), p, InputOpts{Pull: gpio.Float, Edge: gpio.RisingEdge}, clocktest.NewFake(t0))
	if err != nil {
		t.Fatal(err)
	}
	in.edgeWait = time.Hour
	rep, _, _ := run(t, in)
	rep.wantValue(t, false, t0)
	p.wait(t)
	p.edge(t, gpio.High)
	rep.wantValue(t, true, t0)
	p.edge(t, gpio.High) // a rising edge whose fall went unreported
	rep.wantNone(t)
	p.edge(t, gpio.Low) // a rising edge that has fallen again by the read
	rep.wantValue(t, false, t0)
}

func TestRunDebounce(t *testing.T) {
	const window = 10 * time.Millisecond
	type setup struct {
		p      *spyPin
		clk    *clocktest.Fake
		rep    recorder
		cancel context.CancelFunc
		done   <-chan struct{}
	}
	start := func(t *testing.T) setup {
		p := newSpyPin(gpio.Low)
		clk := clocktest.NewFake(t0)
		in, err := NewInput(inDesc(), p, InputOpts{Pull: gpio.Float, Debounce: window}, clk)
		if err != nil {
			t.Fatal(err)
		}
		in.edgeWait = time.Hour
		rep, cancel, done := run(t, in)
		rep.wantValue(t, false, t0)
		p.wait(t)
		return setup{p, clk, rep, cancel, done}
	}

	t.Run("bounces publish one value", func(t *testing.T) {
		s := start(t)
		s.p.edge(t, gpio.High)
		s.clk.Advance(3 * time.Millisecond)
		s.p.edge(t, gpio.Low)
		s.clk.Advance(3 * time.Millisecond)
		s.p.edge(t, gpio.High)
		s.clk.Advance(window - time.Millisecond)
		s.rep.wantNone(t) // 9 ms since the last edge
		s.clk.Advance(time.Millisecond)
		s.rep.wantValue(t, true, t0.Add(16*time.Millisecond))
		s.clk.Advance(time.Second)
		s.rep.wantNone(t)
	})

	t.Run("a pulse shorter than the window publishes nothing", func(t *testing.T) {
		s := start(t)
		s.p.edge(t, gpio.High)
		s.clk.Advance(window - time.Millisecond)
		s.p.edge(t, gpio.Low)
		s.clk.Advance(time.Second)
		s.rep.wantNone(t)

		s.p.edge(t, gpio.High) // a real press still counts
		s.clk.Advance(window)
		s.rep.wantValue(t, true, t0.Add(time.Second+2*window-time.Millisecond))
	})

	t.Run("nothing once Run has returned", func(t *testing.T) {
		s := start(t)
		s.p.edge(t, gpio.High) // the debounce timer is pending
		s.cancel()
		waitDone(t, s.done)
		if n := s.clk.Pending(); n != 0 {
			t.Errorf("%d timers pending after Run returned", n)
		}
		s.clk.Advance(time.Second)
		s.rep.wantNone(t)
	})
}

func waitDone(t *testing.T, done <-chan struct{}) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(deadline):
		t.Fatal("Run did not return after its ctx ended")
	}
}

func TestRunEndsWithCtx(t *testing.T) {
	t.Run("Halt cuts the wait short", func(t *testing.T) {
		p := newSpyPin(gpio.Low)
		in, err := NewInput(inDesc(), p, InputOpts{}, clocktest.NewFake(t0))
		if err != nil {
			t.Fatal(err)
		}
		in.edgeWait = time.Hour // only Halt can end it in time
		rep, cancel, done := run(t, in)
		rep.wantValue(t, false, t0)
		p.wait(t)
		cancel()
		waitDone(t, done)
	})

	t.Run("the bounded wait ends it when Halt does nothing", func(t *testing.T) {
		p := &gpiotest.Pin{N: "BUTTON", Num: 5, EdgesChan: make(chan gpio.Level)}
		in, err := NewInput(inDesc(), p, InputOpts{}, clocktest.NewFake(t0))
		if err != nil {
			t.Fatal(err)
		}
		in.edgeWait = 10 * time.Millisecond
		rep, cancel, done := run(t, in)
		rep.wantValue(t, false, t0)
		cancel()
		waitDone(t, done)
	})
}

func TestRunWaitFailure(t *testing.T) {
	p := newSpyPin(gpio.Low)
	p.fail.Store(true)
	clk := clocktest.NewFake(t0)
	in, err := NewInput(inDesc(), p, InputOpts{Pull: gpio.Float}, clk)
	if err != nil {
		t.Fatal(err)
	}
	in.edgeWait = time.Hour
	rep, _, _ := run(t, in)
	rep.wantValue(t, false, t0)
	rep.wantState(t, device.StateFault, "wait for edges on BUTTON failed")

	// Run waits for the retry on its clock instead of spinning.
	ctx, cancel := context.WithTimeout(t.Context(), deadline)
	defer cancel()
	if err := clk.WaitPending(ctx, 1); err != nil {
		t.Fatal("no retry scheduled:", err)
	}
	if n := p.waits.Load(); n != 1 {
		t.Errorf("%d waits before the retry, want 1", n)
	}

	// The first retry cannot request the line: still a fault, with why.
	p.setInErr(errors.New("device or resource busy"))
	clk.Advance(retryDelay)
	rep.wantState(t, device.StateFault, "resource busy")
	if err := clk.WaitPending(ctx, 1); err != nil {
		t.Fatal("no second retry scheduled:", err)
	}

	// The second works; the line is read at once, since edges may have
	// been lost; ok comes with the first wait that works.
	p.setInErr(nil)
	p.fail.Store(false)
	p.setLevel(gpio.High)
	clk.Advance(retryDelay)
	rep.wantValue(t, true, t0.Add(2*retryDelay))
	p.wait(t)
	rep.wantNone(t)
	p.edge(t, gpio.Low)
	rep.wantState(t, device.StateOK, "")
	rep.wantValue(t, false, t0.Add(2*retryDelay))

	want := []inCall{{gpio.Float, gpio.BothEdges}, {gpio.Float, gpio.BothEdges}, {gpio.Float, gpio.BothEdges}}
	if got := p.calls(); !slices.Equal(got, want) {
		t.Errorf("In calls = %v, want %v", got, want)
	}
}
