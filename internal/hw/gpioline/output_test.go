package gpioline

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpiotest"

	"github.com/openhal/gateway/device"
)

// countPin counts the Reads of a gpiotest pin, which an output must never
// make, and can fail its Outs.
type countPin struct {
	*gpiotest.Pin
	reads  atomic.Int32
	outErr error
}

func (p *countPin) Read() gpio.Level {
	p.reads.Add(1)
	return p.Pin.Read()
}

func (p *countPin) Out(l gpio.Level) error {
	if p.outErr != nil {
		return p.outErr
	}
	return p.Pin.Out(l)
}

func newCountPin(l gpio.Level) *countPin {
	return &countPin{Pin: &gpiotest.Pin{N: "GPIO17", Num: 17, L: l}}
}

func (p *countPin) level() gpio.Level {
	p.Lock()
	defer p.Unlock()
	return p.L
}

func outDesc() device.Descriptor {
	return device.Descriptor{ID: "bench.heater", Kind: device.KindGPIOOutput, Access: device.AccessReadWrite,
		Risk: device.RiskHigh, Schema: device.Schema{Type: "boolean"}, Safe: false}
}

func TestOutputInitialAndWrites(t *testing.T) {
	tests := []struct {
		name           string
		initial        bool
		invert         bool
		writes         []bool
		atStart, atEnd gpio.Level
	}{
		{"initial false", false, false, []bool{true}, gpio.Low, gpio.High},
		{"initial true", true, false, []bool{false}, gpio.High, gpio.Low},
		{"inverted initial false", false, true, []bool{true}, gpio.High, gpio.Low},
		{"inverted initial true", true, true, []bool{false}, gpio.Low, gpio.High},
		{"safe value written back", false, false, []bool{true, false}, gpio.Low, gpio.Low},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Start the line at the opposite of what initial should drive.
			p := newCountPin(!tt.atStart)
			o, err := NewOutput(outDesc(), p, tt.initial, tt.invert)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.level(); got != tt.atStart {
				t.Errorf("after NewOutput line is %s, want %s", got, tt.atStart)
			}
			for _, v := range tt.writes {
				res, err := o.Write(t.Context(), device.WriteRequest{Value: v})
				if err != nil {
					t.Fatalf("Write(%v): %v", v, err)
				}
				if res.Keep || res.Reply != nil {
					t.Errorf("Write(%v) = %+v, want the zero result", v, res)
				}
			}
			if got := p.level(); got != tt.atEnd {
				t.Errorf("after writes line is %s, want %s", got, tt.atEnd)
			}
			if n := p.reads.Load(); n != 0 {
				t.Errorf("output read its pin %d times, want never", n)
			}
		})
	}
}

func TestOutputDescriptor(t *testing.T) {
	o, err := NewOutput(outDesc(), newCountPin(gpio.Low), false, false)
	if err != nil {
		t.Fatal(err)
	}
	d := o.Descriptor()
	if d.ID != "bench.heater" || d.Safe != false {
		t.Errorf("Descriptor() = %+v, want the one given", d)
	}
}

func TestOutputInitialFails(t *testing.T) {
	p := newCountPin(gpio.Low)
	p.outErr = errors.New("line busy")
	_, err := NewOutput(outDesc(), p, true, false)
	if err == nil {
		t.Fatal("NewOutput succeeded on a pin whose Out fails")
	}
	for _, want := range []string{"bench.heater", "GPIO17", "line busy"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if !errors.Is(err, p.outErr) {
		t.Errorf("error %q does not wrap the pin's", err)
	}
}

func TestOutputWriteErrors(t *testing.T) {
	p := newCountPin(gpio.Low)
	o, err := NewOutput(outDesc(), p, false, false)
	if err != nil {
		t.Fatal(err)
	}

	if _, err := o.Write(t.Context(), device.WriteRequest{Value: 1.0}); err == nil {
		t.Error("Write(1.0) succeeded, want a type error")
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := o.Write(ctx, device.WriteRequest{Value: true}); !errors.Is(err, context.Canceled) {
		t.Errorf("Write with a done ctx = %v, want context.Canceled", err)
	}
	if got := p.level(); got != gpio.Low {
		t.Errorf("a refused write set the line %s", got)
	}

	p.outErr = errors.New("EIO")
	_, err = o.Write(t.Context(), device.WriteRequest{Value: true})
	if !errors.Is(err, p.outErr) || !strings.Contains(err.Error(), "bench.heater") || !strings.Contains(err.Error(), "GPIO17") {
		t.Errorf("Write on a failing pin = %v, want the pin's error naming device and pin", err)
	}
	if n := p.reads.Load(); n != 0 {
		t.Errorf("output read its pin %d times, want never", n)
	}
}

func TestOutputNoPin(t *testing.T) {
	if _, err := NewOutput(outDesc(), nil, false, false); !errors.Is(err, errNoPin) {
		t.Errorf("NewOutput(nil pin) = %v, want errNoPin", err)
	}
}

func TestPinNameUnnamed(t *testing.T) {
	if got := pinName(&gpiotest.Pin{Num: 4}); got != "line 4" {
		t.Errorf("pinName(unnamed line 4) = %q", got)
	}
}
