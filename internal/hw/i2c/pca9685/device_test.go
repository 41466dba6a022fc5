package pca9685

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/i2c/i2ctest"
	"periph.io/x/conn/v3/physic"

	"github.com/openhal/gateway/device"
)

// led is the write of channel ch's four registers, LEDn_ON_L to
// LEDn_OFF_H at 0x06+4n (datasheet §7.3.3), turned on at step 0 and off
// at off (the full-off bit is 0x1000, full on is on = 0x1000).
func led(ch int, on, off uint16) i2ctest.IO {
	return i2ctest.IO{Addr: 0x40, W: []byte{byte(0x06 + 4*ch), byte(on), byte(on >> 8), byte(off), byte(off >> 8)}}
}

// bus is a playback bus that can be made to fail every transfer, as an
// unplugged chip's bus does (no acknowledge), and counts its opens.
type bus struct {
	*i2ctest.Playback
	mu   sync.Mutex
	fail bool
}

func (b *bus) Tx(addr uint16, w, r []byte) error {
	b.mu.Lock()
	fail := b.fail
	b.mu.Unlock()
	if fail {
		return errors.New("remote I/O error")
	}
	return b.Playback.Tx(addr, w, r)
}

func (b *bus) SetSpeed(f physic.Frequency) error { return b.Playback.SetSpeed(f) }

func (b *bus) failing(f bool) {
	b.mu.Lock()
	b.fail = f
	b.mu.Unlock()
}

func newShared(t *testing.T, ops ...i2ctest.IO) (*Shared, *bus) {
	t.Helper()
	b := &bus{Playback: &i2ctest.Playback{Ops: ops, DontPanic: true}}
	s, err := NewShared("chips.servos (pca9685 at 0x40 on I2C bus 1)", func() (i2c.BusCloser, error) { return b, nil }, 0x40, 50)
	if err != nil {
		t.Fatal(err)
	}
	return s, b
}

// reporter records a device's states.
type reporter struct {
	mu     sync.Mutex
	states []string
}

func (r *reporter) Value(any, time.Time) {}
func (r *reporter) State(s device.State, fault string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.states = append(r.states, string(s)+" "+fault)
}

// run runs d's Run on a context already done: it applies the initial
// value and returns.
func run(t *testing.T, d device.Runner, r device.Reporter) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d.Run(ctx, r)
}

// Two outputs on one chip: the first Run sets the chip up (MODE1 asleep,
// the prescaler for 50 Hz, totem-pole outputs, awake; datasheet §7.3.1,
// §7.3.5) and writes its channel; the second writes only its own; writes
// of 0 %, 50 %, 100 % are full off, 2048 steps, full on; a release turns
// the channel full off.
func TestOutputsShareTheChip(t *testing.T) {
	ops := append(start(121), led(3, 0, 1024)) // 25 % initial
	ops = append(ops,
		led(4, 0, 0x1000), // 0 % initial: full off
		led(3, 0, 2048),   // 50 %
		led(4, 0x1000, 0), // 100 %: full on
		led(4, 0, 0x1000), // 0 %
		led(3, 0, 4095),   // 99.99 %: the last step
		led(3, 0, 0x1000), // released
		led(4, 0, 0x1000), // released
	)
	s, b := newShared(t, ops...)
	a, err := NewOutput(device.Descriptor{ID: "arm.led"}, s, 3, 25)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewOutput(device.Descriptor{ID: "arm.lamp"}, s, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := &reporter{}
	run(t, a, r)
	run(t, c, r)
	for _, w := range []struct {
		o *Output
		v float64
	}{{a, 50}, {c, 100}, {c, 0}, {a, 99.97}} {
		if _, err := w.o.Write(context.Background(), device.WriteRequest{Value: w.v}); err != nil {
			t.Fatalf("write %v: %v", w.v, err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Write(context.Background(), device.WriteRequest{Value: 10.0}); err == nil || !strings.Contains(err.Error(), "released") {
		t.Errorf("a write after the release: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Playback.Close(); err != nil { // every op played
		t.Error(err)
	}
	if len(r.states) != 0 {
		t.Errorf("states %v, want none (no fault)", r.states)
	}
}

// A chip that does not answer is no start failure: Run puts the device
// in fault with what failed, writes fail the same way, and once the chip
// answers a write sets it up and writes every channel's last duty back
// before its own.
func TestChipNotAnsweringIsAFault(t *testing.T) {
	ops := append(start(121), led(0, 0, 2048), led(1, 0, 1024))
	ops = append(ops, led(1, 0, 3072))
	ops = append(ops, start(121)...) // after a failed transfer: set up again
	ops = append(ops, led(0, 0, 2048), led(1, 0, 1024))
	s, b := newShared(t, ops...)
	b.failing(true)
	o0, _ := NewOutput(device.Descriptor{ID: "a"}, s, 0, 50)
	o1, _ := NewOutput(device.Descriptor{ID: "b"}, s, 1, 30)
	r := &reporter{}
	run(t, o0, r)
	want := "fault pwm a on channel 0: initial value: chips.servos (pca9685 at 0x40 on I2C bus 1): set up: pca9685: read MODE1: remote I/O error"
	if len(r.states) != 1 || r.states[0] != want {
		t.Fatalf("states %q, want %q", r.states, want)
	}
	_, err := o1.Write(context.Background(), device.WriteRequest{Value: 25.0})
	if err == nil || err.Error() != "pwm b on channel 1: chips.servos (pca9685 at 0x40 on I2C bus 1): set up: pca9685: read MODE1: remote I/O error" {
		t.Fatalf("write to an absent chip: %v", err)
	}
	b.failing(false)
	if _, err := o1.Write(context.Background(), device.WriteRequest{Value: 25.0}); err != nil {
		t.Fatal(err) // set up, channel 0's 50 %, then channel 1's 25 %
	}
	if _, err := o1.Write(context.Background(), device.WriteRequest{Value: 75.0}); err != nil {
		t.Fatal(err)
	}
	// The bus fails once: the write fails, and the next sets the chip up
	// again (it may have lost its power) with both channels' duties.
	b.failing(true)
	if _, err := o1.Write(context.Background(), device.WriteRequest{Value: 25.0}); err == nil || !strings.Contains(err.Error(), "set channel 1: remote I/O error") {
		t.Fatalf("write on a failing bus: %v", err)
	}
	b.failing(false)
	if _, err := o0.Write(context.Background(), device.WriteRequest{Value: 50.0}); err != nil {
		t.Fatal(err)
	}
	if err := b.Playback.Close(); err != nil {
		t.Error(err)
	}
}

// A bus that cannot be opened fails the writes with the open's error;
// releasing a channel of a chip that never answered sends nothing.
func TestBusNotThere(t *testing.T) {
	s, err := NewShared("chips.servos (pca9685 at 0x40 on I2C bus 1)", func() (i2c.BusCloser, error) {
		return nil, errors.New("no I2C bus on this machine")
	}, 0x40, 50)
	if err != nil {
		t.Fatal(err)
	}
	o, _ := NewOutput(device.Descriptor{ID: "a"}, s, 0, 0)
	_, err = o.Write(context.Background(), device.WriteRequest{Value: 10.0})
	if err == nil || !strings.Contains(err.Error(), "open its bus: no I2C bus on this machine") {
		t.Fatalf("write: %v", err)
	}
	if err := o.Close(); err != nil {
		t.Error(err)
	}
	if err := s.Close(); err != nil {
		t.Error(err)
	}
}

// What no channel can take is refused before any traffic.
func TestOutputRefuses(t *testing.T) {
	s, b := newShared(t)
	if _, err := NewOutput(device.Descriptor{ID: "a"}, s, 16, 0); err == nil || !strings.Contains(err.Error(), "has no channel 16") {
		t.Errorf("channel 16: %v", err)
	}
	if _, err := NewOutput(device.Descriptor{ID: "a"}, s, 0, 101); err == nil || !strings.Contains(err.Error(), "outside 0..100") {
		t.Errorf("initial 101: %v", err)
	}
	o, _ := NewOutput(device.Descriptor{ID: "a"}, s, 0, 0)
	for _, v := range []any{-1.0, "50", true} {
		if _, err := o.Write(context.Background(), device.WriteRequest{Value: v}); err == nil {
			t.Errorf("write %v accepted", v)
		}
	}
	if _, err := NewShared("x", nil, 0x40, 2000); err == nil {
		t.Error("2000 Hz accepted")
	}
	if err := b.Playback.Close(); err != nil {
		t.Error(err)
	}
}

// PulseSteps: 1.5 ms at 50.03 Hz is 307 steps, as Dev.SetPulse rounds.
func TestPulseSteps(t *testing.T) {
	s, _ := newShared(t)
	for _, tc := range []struct {
		w    time.Duration
		want int
	}{{1500 * time.Microsecond, 307}, {time.Millisecond, 205}, {2 * time.Millisecond, 410}, {0, 0}} {
		if got, err := s.PulseSteps(tc.w); err != nil || got != tc.want {
			t.Errorf("PulseSteps(%v) = %d, %v; want %d", tc.w, got, err, tc.want)
		}
	}
	if _, err := s.PulseSteps(25 * time.Millisecond); err == nil {
		t.Error("25 ms accepted at 50 Hz")
	}
}
