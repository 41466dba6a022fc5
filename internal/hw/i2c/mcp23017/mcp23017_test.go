package mcp23017

import (
	"strings"
	"testing"

	"periph.io/x/conn/v3/i2c/i2ctest"
)

func w(b ...byte) i2ctest.IO { return i2ctest.IO{Addr: 0x20, W: b} }

// New on an MCP23017 (DS20001952 table 3-1, BANK = 0): IOCON with
// MIRROR and ODR (0x0A, and its twin 0x0B), no inverted inputs, no
// interrupts, compare with the previous value, outputs latched low, no
// pull-up, every pin an input, none watched.
var start17 = []i2ctest.IO{
	w(0x0A, 0x44, 0x44), w(0x02, 0, 0), w(0x04, 0, 0), w(0x06, 0, 0), w(0x08, 0, 0),
	w(0x14, 0, 0), w(0x0C, 0, 0), w(0x00, 0xff, 0xff), w(0x04, 0, 0),
}

// The MCP23008's (DS21919 table 1-3): no MIRROR, ODR alone.
var start08 = []i2ctest.IO{
	w(0x05, 0x04), w(0x01, 0), w(0x02, 0), w(0x03, 0), w(0x04, 0),
	w(0x0A, 0), w(0x06, 0), w(0x00, 0xff), w(0x02, 0),
}

func newDev(t *testing.T, m Model, ops ...i2ctest.IO) *Dev {
	t.Helper()
	bus := &i2ctest.Playback{Ops: ops, DontPanic: true}
	t.Cleanup(func() {
		if err := bus.Close(); err != nil {
			t.Error(err)
		}
	})
	d, err := New(bus, 0x20, m)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// An output latches its level before it drives: OLAT, then GPINTEN off,
// then IODIR; an input with a pull-up, watched; a read of both ports.
func TestPins17(t *testing.T) {
	ops := append(append([]i2ctest.IO{}, start17...),
		w(0x14, 0x00, 0x02), w(0x04, 0, 0), w(0x00, 0xff, 0xfd), // pin 9 (GPB1) an output, high
		w(0x0C, 0x01, 0x00), w(0x00, 0xff, 0xfd), // pin 0 (GPA0) pulled up
		w(0x04, 0x01, 0x00), // watched
		i2ctest.IO{Addr: 0x20, W: []byte{0x12}, R: []byte{0x00, 0x02}},
		w(0x14, 0x00, 0x00), // pin 9 low
	)
	d := newDev(t, MCP23017, ops...)
	if err := d.Output(9, true); err != nil {
		t.Fatal(err)
	}
	if err := d.Input(0, true); err != nil {
		t.Fatal(err)
	}
	if err := d.Watch(0, true); err != nil {
		t.Fatal(err)
	}
	if v, err := d.Read(); err != nil || v != 0x0200 {
		t.Fatalf("Read = %#04x, %v; want 0x0200 (pin 0 low, pin 9 high)", v, err)
	}
	if err := d.Set(9, false); err != nil {
		t.Fatal(err)
	}
}

func TestPins08(t *testing.T) {
	ops := append(append([]i2ctest.IO{}, start08...),
		w(0x0A, 0x80), w(0x02, 0), w(0x00, 0x7f), // pin 7 an output, high
		i2ctest.IO{Addr: 0x20, W: []byte{0x09}, R: []byte{0x81}},
	)
	d := newDev(t, MCP23008, ops...)
	if err := d.Output(7, true); err != nil {
		t.Fatal(err)
	}
	if v, err := d.Read(); err != nil || v != 0x81 {
		t.Fatalf("Read = %#02x, %v", v, err)
	}
}

// What the chip cannot do is refused before any traffic, and a failed
// write leaves the driver's view of the chip as it was.
func TestRefused(t *testing.T) {
	d := newDev(t, MCP23008, start08...)
	for _, tc := range []struct {
		err  error
		want string
	}{
		{d.Output(8, true), "MCP23008 has no pin 8 (0 to 7)"},
		{d.Input(-1, false), "no pin -1"},
		{d.Watch(8, true), "no pin 8"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%v, want %q", tc.err, tc.want)
		}
	}
	for _, addr := range []uint16{0x1f, 0x28} {
		if _, err := New(&i2ctest.Playback{DontPanic: true}, addr, MCP23017); err == nil || !strings.Contains(err.Error(), "0x20..0x27") {
			t.Errorf("address %#x: %v", addr, err)
		}
	}

	failing := &i2ctest.Playback{Ops: append(append([]i2ctest.IO{}, start17...), w(0x14, 0x01, 0x00)), DontPanic: true}
	f, err := New(failing, 0x20, MCP23017)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Output(0, true); err == nil || !strings.Contains(err.Error(), "pin 0: stop watching it") {
		t.Fatalf("a failed write: %v", err)
	}
	if f.dir != 0xffff || f.watch != 0 {
		t.Errorf("after a failed write: IODIR %#04x, GPINTEN %#04x; want them unchanged", f.dir, f.watch)
	}
	if err := f.Watch(0, true); err == nil {
		t.Error("watching an input after a failed Output: no error from the bus that has no more traffic")
	}
}

// An output is not watched.
func TestWatchOutput(t *testing.T) {
	d := newDev(t, MCP23008, append(append([]i2ctest.IO{}, start08...), w(0x0A, 0x01), w(0x02, 0), w(0x00, 0xfe))...)
	if err := d.Output(0, true); err != nil {
		t.Fatal(err)
	}
	if err := d.Watch(0, true); err == nil || !strings.Contains(err.Error(), "is an output") {
		t.Fatalf("watch an output: %v", err)
	}
}

// Open writes a whole setup in Restore's order: the outputs' levels
// before their direction, the watched inputs last. Here GPA0 a relay
// driven high, GPB1 a button with its pull-up, watched.
func TestOpen(t *testing.T) {
	bus := &i2ctest.Playback{Ops: []i2ctest.IO{
		w(0x0A, 0x44, 0x44), w(0x02, 0, 0), w(0x04, 0, 0), w(0x06, 0, 0), w(0x08, 0, 0),
		w(0x14, 0x01, 0x00), // OLAT: GPA0 high
		w(0x0C, 0x00, 0x02), // GPPU: GPB1
		w(0x00, 0xfe, 0xff), // IODIR: GPA0 an output
		w(0x04, 0x00, 0x02), // GPINTEN: GPB1
	}, DontPanic: true}
	d, err := Open(bus, 0x20, MCP23017, Setup{Outputs: 1, Levels: 1, PullUps: 1 << 9, Watch: 1 << 9})
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.Close(); err != nil {
		t.Error(err)
	}
	if d.dir != 0xfffe || d.latch != 1 || d.pull != 0x200 || d.watch != 0x200 {
		t.Errorf("shadows: IODIR %#04x OLAT %#04x GPPU %#04x GPINTEN %#04x", d.dir, d.latch, d.pull, d.watch)
	}
	if _, err := Open(&i2ctest.Playback{DontPanic: true}, 0x20, MCP23017, Setup{Outputs: 1, Watch: 1}); err == nil || !strings.Contains(err.Error(), "only inputs are watched") {
		t.Errorf("watching an output: %v", err)
	}
}

// A chip that lost power answers IOCON 0: Configured says so, and
// Restore writes the setup again, the latched levels included.
func TestRestoreAfterReset(t *testing.T) {
	ops := append(append([]i2ctest.IO{}, start08...),
		w(0x0A, 0x01), w(0x02, 0), w(0x00, 0xfe), // GP0 an output, high
		i2ctest.IO{Addr: 0x20, W: []byte{0x05}, R: []byte{0x04}}, // configured
		i2ctest.IO{Addr: 0x20, W: []byte{0x05}, R: []byte{0x00}}, // reset
		w(0x05, 0x04), w(0x01, 0), w(0x02, 0), w(0x03, 0), w(0x04, 0),
		w(0x0A, 0x01), w(0x06, 0), w(0x00, 0xfe), w(0x02, 0),
	)
	d := newDev(t, MCP23008, ops...)
	if err := d.Output(0, true); err != nil {
		t.Fatal(err)
	}
	for _, want := range []bool{true, false} {
		if ok, err := d.Configured(); err != nil || ok != want {
			t.Fatalf("Configured = %v, %v; want %v", ok, err, want)
		}
	}
	if err := d.Restore(); err != nil {
		t.Fatal(err)
	}
}

// ReadInterrupt reads INTF, INTCAP and GPIO in one transaction: from
// INTFA (0x0E) on the MCP23017, six bytes; from INTF (0x07) on the
// MCP23008, three.
func TestReadInterrupt(t *testing.T) {
	d17 := newDev(t, MCP23017, append(append([]i2ctest.IO{}, start17...),
		i2ctest.IO{Addr: 0x20, W: []byte{0x0E}, R: []byte{0x00, 0x02, 0xff, 0xfd, 0xff, 0xff}})...)
	c, err := d17.ReadInterrupt()
	if want := (Capture{Flags: 0x0200, Captured: 0xfdff, Levels: 0xffff}); err != nil || c != want {
		t.Errorf("MCP23017: %+v, %v; want %+v (GPB1 pressed and let go before the read)", c, err, want)
	}
	d08 := newDev(t, MCP23008, append(append([]i2ctest.IO{}, start08...),
		i2ctest.IO{Addr: 0x20, W: []byte{0x07}, R: []byte{0x01, 0xfe, 0xfe}})...)
	c, err = d08.ReadInterrupt()
	if want := (Capture{Flags: 1, Captured: 0xfe, Levels: 0xfe}); err != nil || c != want {
		t.Errorf("MCP23008: %+v, %v; want %+v", c, err, want)
	}
	failing := newDev(t, MCP23008, start08...)
	if _, err := failing.ReadInterrupt(); err == nil || !strings.Contains(err.Error(), "read INTF, INTCAP, GPIO") {
		t.Errorf("a failed read: %v", err)
	}
}

func TestPinNames(t *testing.T) {
	for _, tc := range []struct {
		m    Model
		in   string
		pin  int
		name string
	}{
		{MCP23017, "GPA0", 0, "GPA0"}, {MCP23017, "gpb7", 15, "GPB7"}, {MCP23017, "9", 9, "GPB1"},
		{MCP23017, "15", 15, "GPB7"}, {MCP23008, "GP3", 3, "GP3"}, {MCP23008, "7", 7, "GP7"},
	} {
		pin, err := tc.m.ParsePin(tc.in)
		if err != nil || pin != tc.pin || tc.m.PinName(pin) != tc.name {
			t.Errorf("%v %q = %d (%s), %v; want %d (%s)", tc.m, tc.in, pin, tc.m.PinName(pin), err, tc.pin, tc.name)
		}
	}
	for _, tc := range []struct {
		m  Model
		in string
	}{
		{MCP23017, "GPA8"}, {MCP23017, "GP3"}, {MCP23017, "16"}, {MCP23017, "-1"}, {MCP23017, "GPC0"},
		{MCP23008, "GPA0"}, {MCP23008, "8"}, {MCP23008, "GP10"}, {MCP23017, "+1"}, {MCP23017, ""}, {MCP23017, "007"},
	} {
		if pin, err := tc.m.ParsePin(tc.in); err == nil {
			t.Errorf("%v %q = %d, want an error", tc.m, tc.in, pin)
		}
	}
	if _, err := MCP23008.ParsePin("GPA0"); err == nil || err.Error() != `the MCP23008 has no pin "GPA0" (GP0..GP7 or 0..7)` {
		t.Errorf("error: %v", err)
	}
}
