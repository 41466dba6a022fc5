package servo

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock/clocktest"
)

// pulses records the pulses a servo is sent, and fails them on demand.
type pulses struct {
	mu   sync.Mutex
	sent []time.Duration
	fail error
}

func (p *pulses) SetPulse(w time.Duration) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fail != nil {
		return p.fail
	}
	p.sent = append(p.sent, w)
	return nil
}

func (p *pulses) last() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.sent) == 0 {
		return 0
	}
	return p.sent[len(p.sent)-1]
}

func (p *pulses) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.sent)
}

type states struct {
	mu  sync.Mutex
	got []string
}

func (s *states) Value(any, time.Time) {}
func (s *states) State(st device.State, fault string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, strings.TrimSpace(string(st)+" "+fault))
}

var start = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// A servo of 0..180° on 1..2 ms; rate 0 is none.
func newServo(t *testing.T, rate, initial float64) (*Device, *pulses, *clocktest.Fake) {
	t.Helper()
	clk := clocktest.NewFake(start)
	out := &pulses{}
	c := Config{MinPulse: time.Millisecond, MaxPulse: 2 * time.Millisecond, MinAngle: 0, MaxAngle: 180, Rate: rate}
	d, err := NewDevice(device.Descriptor{ID: "arm.base", Kind: device.KindServo}, c, out, initial, 20*time.Millisecond, clk)
	if err != nil {
		t.Fatal(err)
	}
	return d, out, clk
}

func write(t *testing.T, d *Device, angle float64, safe bool) {
	t.Helper()
	if _, err := d.Write(context.Background(), device.WriteRequest{Value: angle, Safe: safe}); err != nil {
		t.Fatal(err)
	}
}

// us is a pulse in whole microseconds.
func us(n int) time.Duration { return time.Duration(n) * time.Microsecond }

// At 90 °/s, 0° to 90° takes a second, in steps of a frame (20 ms): 50
// pulses after the write's first, the last at the target; then the
// timer is gone (idle means idle).
func TestMoveAtRate(t *testing.T) {
	d, out, clk := newServo(t, 90, 0)
	write(t, d, 90, false)
	if out.count() != 1 || out.last() != us(1000) || clk.Pending() != 1 {
		t.Fatalf("after the write: %v sent, %d timers; want the start (1 ms) and one timer", out.sent, clk.Pending())
	}
	clk.Advance(500 * time.Millisecond)
	if got := out.last(); got != us(1250) {
		t.Errorf("after 0.5 s the pulse is %v, want 1.25 ms (45°)", got)
	}
	clk.Advance(500 * time.Millisecond)
	if out.last() != us(1500) || out.count() != 51 {
		t.Errorf("after 1 s: %d pulses, the last %v; want 51, 1.5 ms (90°)", out.count(), out.last())
	}
	if clk.Pending() != 0 || d.Moving() {
		t.Errorf("at the target: %d timers pending, moving %v; want none", clk.Pending(), d.Moving())
	}
	clk.Advance(time.Minute)
	if out.count() != 51 {
		t.Errorf("at rest it sent %d more pulses", out.count()-51)
	}
}

// Without a rate a write jumps: one pulse, no timer.
func TestNoRateJumps(t *testing.T) {
	d, out, clk := newServo(t, 0, 90)
	write(t, d, 180, false)
	if out.count() != 1 || out.last() != us(2000) || clk.Pending() != 0 {
		t.Errorf("sent %v, %d timers; want one 2 ms pulse and none", out.sent, clk.Pending())
	}
}

// An emergency stop mid-move (the Hub's safe value, WriteRequest.Safe)
// goes to the safe angle at once and ends the move; a client's write of
// the same angle is paced as any other.
func TestStopIsNotSlowed(t *testing.T) {
	d, out, clk := newServo(t, 90, 0)
	write(t, d, 180, false)
	clk.Advance(time.Second) // at 90°
	write(t, d, 18, true)
	if out.last() != us(1100) || clk.Pending() != 0 || d.Moving() {
		t.Fatalf("after the stop: pulse %v, %d timers; want 18° (1.1 ms) at once and no move", out.last(), clk.Pending())
	}
	n := out.count()
	clk.Advance(time.Minute)
	if out.count() != n {
		t.Errorf("the stopped move sent %d more pulses", out.count()-n)
	}
	write(t, d, 100, false)
	clk.Advance(500 * time.Millisecond) // 45° of 82 done
	write(t, d, 18, false)              // the safe angle, written by a client: paced
	if got := out.last(); got != us(1350) || !d.Moving() {
		t.Errorf("a client's write of the safe angle sent %v (moving %v), want 63° (1.35 ms) and a move", got, d.Moving())
	}
}

// A target changed mid-way turns the servo from where it is, no jump.
func TestRetargetMidMove(t *testing.T) {
	d, out, clk := newServo(t, 90, 0)
	write(t, d, 180, false)
	clk.Advance(time.Second) // at 90°
	write(t, d, 0, false)
	if out.last() != us(1500) {
		t.Errorf("the turn sent %v, want 90° (1.5 ms) where it was", out.last())
	}
	clk.Advance(500 * time.Millisecond)
	if out.last() != us(1250) {
		t.Errorf("0.5 s after the turn: %v, want 45°", out.last())
	}
	clk.Advance(500 * time.Millisecond)
	if out.last() != us(1000) || clk.Pending() != 0 {
		t.Errorf("at 0°: %v, %d timers", out.last(), clk.Pending())
	}
}

// Run sends the initial angle; a write before it wins. An output that
// fails puts the device in fault; a move goes on through a failing
// step, and the fault clears when a step gets through.
func TestRunAndFaults(t *testing.T) {
	d, out, clk := newServo(t, 90, 45)
	st := &states{}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d.Run(ctx, st) // sends the initial 45°, returns (ctx done), and closes
	if out.last() != us(1250) {
		t.Errorf("Run sent %v, want 45° (1.25 ms)", out.last())
	}
	if _, err := d.Write(context.Background(), device.WriteRequest{Value: 50.0}); err == nil {
		t.Error("a write after Run ended was accepted")
	}

	// A write whose first pulse fails is refused and moves nothing.
	d, out, clk = newServo(t, 90, 45)
	d.rep = st
	d.started = true
	out.fail = errors.New("pca9685: set channel 0: remote I/O error")
	if _, err := d.Write(context.Background(), device.WriteRequest{Value: 135.0}); err == nil ||
		!strings.Contains(err.Error(), "servo arm.base: 45° (1.25ms): pca9685: set channel 0: remote I/O error") {
		t.Fatalf("write on a failing output: %v", err)
	}
	if clk.Pending() != 0 {
		t.Fatal("a refused write started a move")
	}
	clk.Advance(time.Second)
	out.fail = nil
	write(t, d, 135, false)
	if out.last() != us(1250) {
		t.Fatalf("the move after a refused one starts at %v, want 45° (1.25 ms), where it was", out.last())
	}
	out.mu.Lock()
	out.fail = errors.New("pca9685: set channel 0: remote I/O error")
	out.mu.Unlock()
	clk.Advance(20 * time.Millisecond) // a step fails: fault
	out.mu.Lock()
	out.fail = nil
	out.mu.Unlock()
	clk.Advance(20 * time.Millisecond) // the next gets through: ok
	clk.Advance(time.Second)
	if out.last() != us(1750) || clk.Pending() != 0 {
		t.Errorf("the move ended at %v with %d timers, want 135° (1.75 ms), none", out.last(), clk.Pending())
	}
	want := []string{"fault servo arm.base: 46.8° (1.26ms): pca9685: set channel 0: remote I/O error", "ok"}
	if strings.Join(st.got, "|") != strings.Join(want, "|") {
		t.Errorf("states %q, want %q", st.got, want)
	}

	d, out, _ = newServo(t, 90, 45)
	out.fail = errors.New("no ack")
	st = &states{}
	d.Run(ctx, st)
	if len(st.got) != 1 || !strings.Contains(st.got[0], "fault servo arm.base: initial angle: servo arm.base: 45° (1.25ms): no ack") {
		t.Errorf("Run on a failing output: %q", st.got)
	}
}

// What the servo cannot do is refused, and moves nothing.
func TestWriteRefused(t *testing.T) {
	d, out, clk := newServo(t, 90, 0)
	for _, v := range []any{181.0, -1.0, "90", nil} {
		if _, err := d.Write(context.Background(), device.WriteRequest{Value: v}); err == nil {
			t.Errorf("write %v accepted", v)
		}
	}
	if out.count() != 0 || clk.Pending() != 0 {
		t.Errorf("refused writes sent %v, %d timers", out.sent, clk.Pending())
	}
	if _, err := NewDevice(device.Descriptor{ID: "x"}, Config{MinPulse: 2 * time.Millisecond, MaxPulse: time.Millisecond, MaxAngle: 180}, out, 0, 0, clk); err == nil {
		t.Error("a servo with minPulse > maxPulse was made")
	}
}
