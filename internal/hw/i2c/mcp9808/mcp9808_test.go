package mcp9808

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/openhal/gateway/internal/hw/sensor"

	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/i2c/i2ctest"
)

// Register traffic as DS25095 Figures 5-5 to 5-7 draw it: a register
// pointer, then a repeated start and the data, MSB first.
var (
	readManuf  = i2ctest.IO{Addr: 0x18, W: []byte{0x06}, R: []byte{0x00, 0x54}}
	readDevice = i2ctest.IO{Addr: 0x18, W: []byte{0x07}, R: []byte{0x04, 0x00}}
)

func writeRes(v byte) i2ctest.IO { return i2ctest.IO{Addr: 0x18, W: []byte{0x08, v}} }

func readTA(v uint16) i2ctest.IO {
	return i2ctest.IO{Addr: 0x18, W: []byte{0x05}, R: []byte{byte(v >> 8), byte(v)}}
}

func TestNewConfigures(t *testing.T) {
	tests := []struct {
		name string
		opts *Opts
		reg  byte
	}{
		{"nil opts", nil, 0x03},
		{"0.0625", &Opts{Resolution: Sixteenth}, 0x03},
		{"0.125", &Opts{Resolution: Eighth}, 0x02},
		{"0.25", &Opts{Resolution: Quarter}, 0x01},
		{"0.5", &Opts{Resolution: Half}, 0x00},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bus := &i2ctest.Playback{DontPanic: true, Ops: []i2ctest.IO{readManuf, readDevice, writeRes(tt.reg)}}
			if _, err := New(bus, 0x18, tt.opts); err != nil {
				t.Fatal(err)
			}
			if err := bus.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestSense(t *testing.T) {
	tests := []struct {
		reg  uint16
		want float64
	}{
		{0x0190, 25},
		{0x0000, 0},
		{0x0001, 0.0625},
		{0x0004, 0.25},
		{0x07FF, 127.9375},
		{0x0FFF, 255.9375},
		{0x1FFF, -0.0625},
		{0x1FFC, -0.25},
		{0x1E70, -25},
		{0x1D80, -40},
		{0x1C90, -55},
		{0x1000, -256},
		// Alert flags (bits 15..13) are not temperature.
		{0x8190, 25},
		{0x4190, 25},
		{0x2190, 25},
		{0xFE70, -25},
	}
	for _, tt := range tests {
		bus := &i2ctest.Playback{DontPanic: true, Ops: []i2ctest.IO{readManuf, readDevice, writeRes(3), readTA(tt.reg)}}
		d, err := New(bus, 0x18, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := d.Sense(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got["temperature"] != tt.want {
			t.Errorf("TA %#04x: Sense() = %v, want temperature %v", tt.reg, got, tt.want)
		}
		if err := bus.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// example51 is DS25095 Example 5-1 and Equation 5-1 as written: clear the
// flags, test the sign, combine the bytes; the negative branch with the
// sign the equation means (the value minus 256).
func example51(upper, lower byte) float64 {
	upper &= 0x1F
	if upper&0x10 == 0x10 {
		upper &= 0x0F
		return float64(upper)*16 + float64(lower)/16 - 256
	}
	return float64(upper)*16 + float64(lower)/16
}

func TestCelsiusMatchesDatasheetCode(t *testing.T) {
	for v := 0; v <= 0xFFFF; v++ {
		if got, want := celsius(uint16(v)), example51(byte(v>>8), byte(v)); got != want {
			t.Fatalf("celsius(%#04x) = %v, Example 5-1 gives %v", v, got, want)
		}
	}
}

func TestNewWrongID(t *testing.T) {
	tests := []struct {
		name string
		ops  []i2ctest.IO
		want string
	}{
		{"nothing there reads zero", []i2ctest.IO{{Addr: 0x18, W: []byte{0x06}, R: []byte{0x00, 0x00}}},
			"mcp9808: manufacturer ID 0x0000, want 0x0054: not an MCP9808"},
		{"byte-swapped", []i2ctest.IO{{Addr: 0x18, W: []byte{0x06}, R: []byte{0x54, 0x00}}},
			"mcp9808: manufacturer ID 0x5400, want 0x0054: not an MCP9808"},
		{"MCP9804", []i2ctest.IO{readManuf, {Addr: 0x18, W: []byte{0x07}, R: []byte{0x02, 0x01}}},
			"mcp9808: device ID 0x02 (revision 0x01), want 0x04: not an MCP9808"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bus := &i2ctest.Playback{DontPanic: true, Ops: tt.ops}
			_, err := New(bus, 0x18, nil)
			if !errors.Is(err, ErrWrongID) || err.Error() != tt.want {
				t.Fatalf("New() error = %v, want %q", err, tt.want)
			}
			if err := bus.Close(); err != nil {
				t.Fatal(err) // and no resolution written to a stranger
			}
		})
	}
}

func TestNewAcceptsRevisions(t *testing.T) {
	rev := i2ctest.IO{Addr: 0x1F, W: []byte{0x07}, R: []byte{0x04, 0x01}}
	manuf := i2ctest.IO{Addr: 0x1F, W: []byte{0x06}, R: []byte{0x00, 0x54}}
	bus := &i2ctest.Playback{DontPanic: true, Ops: []i2ctest.IO{manuf, rev, {Addr: 0x1F, W: []byte{0x08, 0x00}}}}
	if _, err := New(bus, 0x1F, &Opts{Resolution: Half}); err != nil {
		t.Fatal(err)
	}
}

func TestNewRejects(t *testing.T) {
	tests := []struct {
		addr uint16
		opts Opts
		want string
	}{
		{0x17, Opts{}, "address 0x17"},
		{0x20, Opts{}, "address 0x20"},
		{0x18, Opts{Resolution: 4}, "resolution 4"},
	}
	for _, tt := range tests {
		bus := &i2ctest.Playback{DontPanic: true}
		_, err := New(bus, tt.addr, &tt.opts)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%#x, %+v) error = %v, want one mentioning %q", tt.addr, tt.opts, err, tt.want)
		}
		if bus.Count != 0 {
			t.Errorf("New(%#x, %+v) made %d transfers", tt.addr, tt.opts, bus.Count)
		}
	}
}

var errBus = errors.New("remote I/O error")

// failingBus fails the transfer numbered failAt (from 0) and plays the rest.
type failingBus struct {
	i2c.Bus
	failAt, n int
}

func (b *failingBus) Tx(addr uint16, w, r []byte) error {
	b.n++
	if b.n-1 == b.failAt {
		return errBus
	}
	return b.Bus.Tx(addr, w, r)
}

func TestBusErrors(t *testing.T) {
	ops := []i2ctest.IO{readManuf, readDevice, writeRes(3)}
	for i, want := range []string{
		"mcp9808: read manufacturer ID",
		"mcp9808: read device ID",
		"mcp9808: write resolution",
		"mcp9808: read temperature",
	} {
		t.Run(want, func(t *testing.T) {
			bus := &failingBus{Bus: &i2ctest.Playback{Ops: ops, DontPanic: true}, failAt: i}
			d, err := New(bus, 0x18, nil)
			if err == nil {
				_, err = d.Sense(context.Background())
			}
			if !errors.Is(err, errBus) || !strings.HasPrefix(err.Error(), want+": ") {
				t.Fatalf("error = %v, want %q wrapping the bus error", err, want)
			}
		})
	}
}

func TestSenseCancelled(t *testing.T) {
	bus := &i2ctest.Playback{DontPanic: true, Ops: []i2ctest.IO{readManuf, readDevice, writeRes(3)}}
	d, err := New(bus, 0x18, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Sense(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sense() error = %v, want context.Canceled", err)
	}
	if err := bus.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := d.String(), "MCP9808{playback(24)}"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if q := d.Quantities(); len(q) != 1 || q[0] != (sensor.Quantity{Name: "temperature", Unit: "Cel"}) {
		t.Errorf("Quantities() = %v", q)
	}
}
