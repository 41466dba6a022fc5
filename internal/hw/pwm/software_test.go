package pwm

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"periph.io/x/conn/v3/gpio"

	"github.com/openhal/gateway/device"
)

// goroutine returns the Software's goroutine's done channel, nil when the
// line is steady.
func (s *Software) goroutine() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}

func levels(edges []edge) []gpio.Level {
	l := make([]gpio.Level, len(edges))
	for i, e := range edges {
		l[i] = e.l
	}
	return l
}

func lastLevel(t *testing.T, p *recordPin) gpio.Level {
	t.Helper()
	e, _ := p.snapshot()
	if len(e) == 0 {
		t.Fatal("no edge")
	}
	return e[len(e)-1].l
}

func TestSoftwareSteady(t *testing.T) {
	for _, tt := range []struct {
		value float64
		want  gpio.Level
	}{{0, gpio.Low}, {100, gpio.High}, {0.000004, gpio.Low}, {99.999996, gpio.High}} {
		pin := newRecordPin()
		s, err := NewSoftware(pwmDesc(), pin, 100, tt.value) // 0.000004 % of 10 ms is 0.4 ns: 0
		if err != nil {
			t.Fatal(err)
		}
		if e, _ := pin.snapshot(); len(e) != 1 || e[0].l != tt.want {
			t.Errorf("%v %%: edges %v, want one %v", tt.value, levels(e), tt.want)
		}
		if s.goroutine() != nil {
			t.Errorf("%v %%: a goroutine runs for a steady level", tt.value)
		}
		if err := s.Close(); err != nil {
			t.Error(err)
		}
		if l := lastLevel(t, pin); l != gpio.Low {
			t.Errorf("%v %%: after Close the line is %v, want Low", tt.value, l)
		}
	}
}

func TestSoftwareToggles(t *testing.T) {
	pin := newRecordPin()
	s, err := NewSoftware(pwmDesc(), pin, 100, 50)
	if err != nil {
		t.Fatal(err)
	}
	if d := s.Descriptor(); d.Kind != device.KindPWM || d.Schema.Unit != "%" {
		t.Errorf("Descriptor() = %+v", d)
	}
	edges, err := pin.waitEdges(7, 5*time.Second)
	if err != nil {
		t.Fatalf("%d edges: %v", len(edges), err)
	}
	for i, e := range edges {
		if want := gpio.Level(i%2 == 0); e.l != want {
			t.Fatalf("edges %v: edge %d is %v, want alternating from High", levels(edges), i, e.l)
		}
		// Edges are never early: edge i is due at i·5 ms from the first.
		if due := time.Duration(i) * 5 * time.Millisecond; e.at.Sub(edges[0].at) < due {
			t.Errorf("edge %d at %v, before its deadline %v", i, e.at.Sub(edges[0].at), due)
		}
	}

	// A new duty cycle keeps the waveform running.
	done := s.goroutine()
	if err := write(t, s, 25.0); err != nil {
		t.Fatal(err)
	}
	if s.goroutine() != done || s.high.Load() != int64(2500*time.Microsecond) {
		t.Errorf("25 %%: goroutine restarted or high time %v", time.Duration(s.high.Load()))
	}
	// A steady level ends it.
	if err := write(t, s, 100.0); err != nil {
		t.Fatal(err)
	}
	if s.goroutine() != nil || !closed(done) || lastLevel(t, pin) != gpio.High {
		t.Errorf("100 %%: goroutine still running or line %v", lastLevel(t, pin))
	}
	// And back.
	if err := write(t, s, 75.0); err != nil {
		t.Fatal(err)
	}
	done = s.goroutine()
	if done == nil {
		t.Fatal("75 %: no goroutine")
	}
	n, _ := pin.snapshot()
	if _, err := pin.waitEdges(len(n)+2, 5*time.Second); err != nil {
		t.Errorf("75 %%: no toggling: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if !closed(done) || s.goroutine() != nil {
		t.Error("Close left the goroutine running")
	}
	if l := lastLevel(t, pin); l != gpio.Low {
		t.Errorf("after Close the line is %v, want Low", l)
	}
	after, _ := pin.snapshot()
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := write(t, s, 50.0); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Write after Close = %v", err)
	}
	if e, _ := pin.snapshot(); len(e) != len(after) {
		t.Errorf("the line was set after Close: %v", levels(e[len(after):]))
	}
}

func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// A line that cannot be set fails the write that starts the waveform; one
// that fails while toggling ends the goroutine, and the next write tries
// again.
func TestSoftwarePinFails(t *testing.T) {
	errPin := errors.New("line gone")
	pin := newRecordPin()
	pin.fail(errPin)
	if _, err := NewSoftware(pwmDesc(), pin, 100, 50); !errors.Is(err, errPin) || !strings.Contains(err.Error(), "software pwm bench.fan on GPIO22: set High") {
		t.Errorf("NewSoftware on a failing pin = %v", err)
	}

	pin = newRecordPin()
	s, err := NewSoftware(pwmDesc(), pin, 100, 50)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	done := s.goroutine()
	pin.fail(errPin)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the goroutine did not stop when the line failed")
	}
	if err := write(t, s, 40.0); !errors.Is(err, errPin) {
		t.Errorf("Write after the line failed = %v, want %v", err, errPin)
	}
	pin.fail(nil)
	if err := write(t, s, 40.0); err != nil {
		t.Fatal(err)
	}
	if s.goroutine() == nil || closed(s.goroutine()) {
		t.Error("the waveform did not start again")
	}
}

func TestSoftwareRefuses(t *testing.T) {
	for _, tt := range []struct {
		name        string
		pin         gpio.PinOut
		hz, initial float64
		says        string
	}{
		{"above the bound", newRecordPin(), MaxSoftwareHz + 1, 0, "above the software PWM's 100 Hz"},
		{"zero frequency", newRecordPin(), 0, 0, "frequency 0 Hz"},
		{"NaN frequency", newRecordPin(), math.NaN(), 0, "frequency NaN Hz"},
		{"initial above 100", newRecordPin(), 50, 100.5, "initial value"},
		{"no pin", nil, 50, 0, "no pin"},
	} {
		if _, err := NewSoftware(pwmDesc(), tt.pin, tt.hz, tt.initial); err == nil || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: NewSoftware = %v, want an error saying %q", tt.name, err, tt.says)
		}
	}

	pin := newRecordPin()
	s, err := NewSoftware(pwmDesc(), pin, 50, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, v := range []any{-1.0, 100.5, math.NaN(), "50", 50, nil} {
		if err := write(t, s, v); err == nil || !strings.Contains(err.Error(), "bench.fan") {
			t.Errorf("Write(%#v) = %v, want an error naming the device", v, err)
		}
	}
	if e, _ := pin.snapshot(); len(e) != 1 {
		t.Errorf("refused values set the line: %v", levels(e))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Write(ctx, device.WriteRequest{Value: 30.0}); !errors.Is(err, context.Canceled) {
		t.Errorf("Write with a cancelled context = %v", err)
	}
}
