package expander

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/i2c/i2ctest"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock"
	"github.com/openhal/gateway/internal/hw/gpioline"
	"github.com/openhal/gateway/internal/hw/i2c/mcp23017"
)

const deadline = 10 * time.Second

// event is one report of a device.
type event struct {
	state device.State // "" for a value
	fault string
	value any
}

// recorder is a device.Reporter that the test reads in order.
type recorder chan event

func (r recorder) Value(v any, _ time.Time)           { r <- event{value: v} }
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

func (r recorder) wantValue(t *testing.T, v bool) {
	t.Helper()
	if e := r.next(t); e.state != "" || e.value != v {
		t.Fatalf("got %+v, want value %v", e, v)
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

// run starts d's Run; the test's cleanup ends it and fails if it does
// not return.
func run(t *testing.T, d device.Runner) recorder {
	t.Helper()
	rep := make(recorder, 4096)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Run(ctx, rep)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(deadline):
			t.Error("Run did not return after its ctx ended")
		}
	})
	return rep
}

func desc(id, kind, pin string) device.Descriptor {
	return device.Descriptor{ID: id, Kind: kind, Pin: pin}
}

func input(t *testing.T, c *Chip, id string, pin int, opts gpioline.InputOpts) *Input {
	t.Helper()
	in, err := c.Input(desc(id, device.KindGPIOInput, c.cfg.Name+":"+c.cfg.Model.PinName(pin)), pin, opts)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func output(t *testing.T, c *Chip, id string, pin int, initial bool) *Output {
	t.Helper()
	o, err := c.Output(desc(id, device.KindGPIOOutput, c.cfg.Name+":"+c.cfg.Model.PinName(pin)), pin, initial, false)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// start starts c; the test's cleanup closes it.
func start(t *testing.T, c *Chip) {
	t.Helper()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	})
}

func write(t *testing.T, o *Output, v bool) error {
	t.Helper()
	_, err := o.Write(context.Background(), device.WriteRequest{Value: v})
	return err
}

// hooked is a playback bus that calls after[n] once its nth transfer
// is done (the first is 1): what the chip does between two transfers.
type hooked struct {
	*i2ctest.Playback
	mu    sync.Mutex
	n     int
	after map[int]func()
}

func (h *hooked) Tx(addr uint16, w, r []byte) error {
	err := h.Playback.Tx(addr, w, r)
	h.mu.Lock()
	h.n++
	f := h.after[h.n]
	h.mu.Unlock()
	if f != nil {
		f()
	}
	return err
}

// at has f called once the nth transfer is done, and returns a channel
// closed then.
func (h *hooked) at(n int, f func()) <-chan struct{} {
	done := make(chan struct{})
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.after == nil {
		h.after = map[int]func(){}
	}
	h.after[n] = func() {
		if f != nil {
			f()
		}
		close(done)
	}
	return done
}

func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(deadline):
		t.Fatalf("no %s", what)
	}
}

func newChip(t *testing.T, m mcp23017.Model, bus i2c.Bus, intr gpio.PinIn, clk clock.Clock) *Chip {
	t.Helper()
	c, err := NewChip(Config{Name: "ex1", Model: m, Bus: bus, BusName: "/dev/i2c-1", Addr: 0x20, INT: intr, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
