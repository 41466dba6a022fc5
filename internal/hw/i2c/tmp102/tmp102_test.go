package tmp102

import (
	"context"
	"errors"
	"strings"
	"testing"

	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/i2c/i2ctest"
)

// Register traffic as SBOS397/SLLS648 draw it: a pointer byte, then data
// MSB first; a read is a pointer write and a repeated-start read.
func readConfig102(msb, lsb byte) i2ctest.IO {
	return i2ctest.IO{Addr: 0x48, W: []byte{0x01}, R: []byte{msb, lsb}}
}

func writeConfig102(msb, lsb byte) i2ctest.IO {
	return i2ctest.IO{Addr: 0x48, W: []byte{0x01, msb, lsb}}
}

func readConfig105(v byte) i2ctest.IO {
	return i2ctest.IO{Addr: 0x48, W: []byte{0x01}, R: []byte{v}}
}

func writeConfig105(v byte) i2ctest.IO {
	return i2ctest.IO{Addr: 0x48, W: []byte{0x01, v}}
}

func readTemp(msb, lsb byte) i2ctest.IO {
	return i2ctest.IO{Addr: 0x48, W: []byte{0x00}, R: []byte{msb, lsb}}
}

// TMP102 power-up configuration (SBOS397 Table 7): 0x60 0xA0 — 12-bit
// R1:R0, 4 Hz, AL=1, EM=0.
var tmp102Config = readConfig102(0x60, 0xA0)

func TestNewConfigures(t *testing.T) {
	tests := []struct {
		name string
		opts *Opts
		ops  []i2ctest.IO
	}{
		{"TMP102 default", nil, []i2ctest.IO{tmp102Config, writeConfig102(0x60, 0xA0)}},
		{"TMP102 extended", &Opts{Extended: true}, []i2ctest.IO{tmp102Config, writeConfig102(0x60, 0xB0)}},
		{"TMP102 12 bits", &Opts{Bits: 12}, []i2ctest.IO{tmp102Config, writeConfig102(0x60, 0xA0)}},
		// Shut down, extended, one-shot bit set, 8 Hz, fault queue 6,
		// POL and TM set: wakes it, leaves extended mode, keeps the rest.
		{"TMP102 from shutdown", nil, []i2ctest.IO{readConfig102(0xFF, 0xF0), writeConfig102(0x7E, 0xE0)}},
		// TMP105 power-up configuration is 0x00: 9 bits.
		{"TMP105 default is 12 bits", &Opts{Model: TMP105}, []i2ctest.IO{readConfig105(0x00), writeConfig105(0x60)}},
		{"TMP105 9 bits", &Opts{Model: TMP105, Bits: 9}, []i2ctest.IO{readConfig105(0x60), writeConfig105(0x00)}},
		{"TMP105 10 bits", &Opts{Model: TMP105, Bits: 10}, []i2ctest.IO{readConfig105(0x00), writeConfig105(0x20)}},
		{"TMP105 11 bits", &Opts{Model: TMP105, Bits: 11}, []i2ctest.IO{readConfig105(0x00), writeConfig105(0x40)}},
		// OS, F1:F0, POL, TM, SD set: OS and SD cleared, alert bits kept.
		{"TMP105 keeps alert settings", &Opts{Model: TMP105, Bits: 12}, []i2ctest.IO{readConfig105(0x9F), writeConfig105(0x7E)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bus := &i2ctest.Playback{Ops: tt.ops, DontPanic: true}
			if _, err := New(bus, 0x48, tt.opts); err != nil {
				t.Fatal(err)
			}
			if err := bus.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// newDev configures a device on a playback of ops after its configuration.
func newDev(t *testing.T, o Opts, ops ...i2ctest.IO) (*Dev, *i2ctest.Playback) {
	t.Helper()
	cfg := []i2ctest.IO{tmp102Config, writeConfig102(0x60, 0xA0)}
	switch {
	case o.Model == TMP105:
		cfg = []i2ctest.IO{readConfig105(0x00), writeConfig105(byte(max(o.Bits, 9)-9) << 5)}
		if o.Bits == 0 {
			cfg[1] = writeConfig105(0x60)
		}
	case o.Extended:
		cfg[1] = writeConfig102(0x60, 0xB0)
	}
	bus := &i2ctest.Playback{Ops: append(cfg, ops...), DontPanic: true}
	d, err := New(bus, 0x48, &o)
	if err != nil {
		t.Fatal(err)
	}
	return d, bus
}

func TestSenseDataFormat(t *testing.T) {
	tests := []struct {
		name     string
		opts     Opts
		msb, lsb byte
		want     float64
	}{
		// SBOS397 Table 5 (and SLLS648 Table 5): 12-bit format.
		{"12-bit 7FF", Opts{}, 0x7F, 0xF0, 127.9375},
		{"12-bit 640", Opts{}, 0x64, 0x00, 100},
		{"12-bit 500", Opts{}, 0x50, 0x00, 80},
		{"12-bit 4B0", Opts{}, 0x4B, 0x00, 75},
		{"12-bit 320", Opts{}, 0x32, 0x00, 50},
		{"12-bit 190", Opts{}, 0x19, 0x00, 25},
		{"12-bit 004", Opts{}, 0x00, 0x40, 0.25},
		{"12-bit 000", Opts{}, 0x00, 0x00, 0},
		{"12-bit FFC", Opts{}, 0xFF, 0xC0, -0.25},
		{"12-bit E70", Opts{}, 0xE7, 0x00, -25},
		{"12-bit C90", Opts{}, 0xC9, 0x00, -55},
		// SBOS397 Table 6: 13-bit format, D0 = 1.
		{"13-bit 0960", Opts{Extended: true}, 0x4B, 0x01, 150},
		{"13-bit 0800", Opts{Extended: true}, 0x40, 0x01, 128},
		{"13-bit 07FF", Opts{Extended: true}, 0x3F, 0xF9, 127.9375},
		{"13-bit 0190", Opts{Extended: true}, 0x0C, 0x81, 25},
		{"13-bit 0004", Opts{Extended: true}, 0x00, 0x21, 0.25},
		{"13-bit 1FFC", Opts{Extended: true}, 0xFF, 0xE1, -0.25},
		{"13-bit 1E70", Opts{Extended: true}, 0xF3, 0x81, -25},
		{"13-bit 1C90", Opts{Extended: true}, 0xE4, 0x81, -55},
		// The last conversion before the switch to extended mode is
		// still in the 12-bit format (D0 = 0).
		{"12-bit result in extended mode", Opts{Extended: true}, 0x19, 0x00, 25},
		// TMP105: the same 12-bit format, unused LSBs zero at lower
		// resolutions (SLLS648); 42.5 °C is what QEMU's model returns for
		// temperature=42500 at 9 bits.
		{"TMP105 12-bit C90", Opts{Model: TMP105}, 0xC9, 0x00, -55},
		{"TMP105 12-bit 7FF", Opts{Model: TMP105}, 0x7F, 0xF0, 127.9375},
		{"TMP105 9-bit 42.5", Opts{Model: TMP105, Bits: 9}, 0x2A, 0x80, 42.5},
		{"TMP105 9-bit -0.5", Opts{Model: TMP105, Bits: 9}, 0xFF, 0x80, -0.5},
		{"TMP105 10-bit -0.25", Opts{Model: TMP105, Bits: 10}, 0xFF, 0xC0, -0.25},
		{"TMP105 11-bit 0.125", Opts{Model: TMP105, Bits: 11}, 0x00, 0x20, 0.125},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, bus := newDev(t, tt.opts, readTemp(tt.msb, tt.lsb))
			got, err := d.Sense(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got["temperature"] != tt.want {
				t.Errorf("Sense() = %v, want temperature %v", got, tt.want)
			}
			if err := bus.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestNewRejects(t *testing.T) {
	tests := []struct {
		name string
		addr uint16
		opts Opts
		want string
	}{
		{"TMP102 below range", 0x47, Opts{}, "address 0x47"},
		{"TMP102 above range", 0x4C, Opts{}, "address 0x4c"},
		{"TMP105 above range", 0x50, Opts{Model: TMP105}, "address 0x50"},
		{"TMP102 resolution", 0x48, Opts{Bits: 9}, "9 bits"},
		{"TMP105 extended", 0x48, Opts{Model: TMP105, Extended: true}, "no extended mode"},
		{"TMP105 8 bits", 0x48, Opts{Model: TMP105, Bits: 8}, "8 bits"},
		{"TMP105 13 bits", 0x48, Opts{Model: TMP105, Bits: 13}, "13 bits"},
		{"unknown model", 0x48, Opts{Model: 7}, "Model(7)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bus := &i2ctest.Playback{DontPanic: true} // no traffic expected
			_, err := New(bus, tt.addr, &tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New() error = %v, want one mentioning %q", err, tt.want)
			}
			if bus.Count != 0 {
				t.Errorf("New() made %d transfers before rejecting its options", bus.Count)
			}
		})
	}
}

func TestTMP105AcceptsEightAddresses(t *testing.T) {
	for addr := uint16(0x48); addr <= 0x4F; addr++ {
		bus := &i2ctest.Playback{DontPanic: true, Ops: []i2ctest.IO{
			{Addr: addr, W: []byte{0x01}, R: []byte{0x00}},
			{Addr: addr, W: []byte{0x01, 0x60}},
		}}
		if _, err := New(bus, addr, &Opts{Model: TMP105}); err != nil {
			t.Fatalf("address %#x: %v", addr, err)
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
	tests := []struct {
		opts   Opts
		ops    []i2ctest.IO
		failAt int
		want   string
	}{
		{Opts{}, []i2ctest.IO{tmp102Config}, 0, "tmp102: read configuration"},
		{Opts{}, []i2ctest.IO{tmp102Config, writeConfig102(0x60, 0xA0)}, 1, "tmp102: write configuration"},
		{Opts{Model: TMP105}, []i2ctest.IO{readConfig105(0)}, 0, "tmp102: read TMP105 configuration"},
		{Opts{Model: TMP105}, []i2ctest.IO{readConfig105(0), writeConfig105(0x60)}, 1, "tmp102: write TMP105 configuration"},
		{Opts{}, []i2ctest.IO{tmp102Config, writeConfig102(0x60, 0xA0)}, 2, "tmp102: read temperature"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			bus := &failingBus{Bus: &i2ctest.Playback{Ops: tt.ops, DontPanic: true}, failAt: tt.failAt}
			d, err := New(bus, 0x48, &tt.opts)
			if err == nil {
				_, err = d.Sense(context.Background())
			}
			if !errors.Is(err, errBus) || !strings.HasPrefix(err.Error(), tt.want+": ") {
				t.Fatalf("error = %v, want %q wrapping the bus error", err, tt.want)
			}
		})
	}
}

func TestSenseCancelled(t *testing.T) {
	d, bus := newDev(t, Opts{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Sense(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sense() error = %v, want context.Canceled", err)
	}
	if err := bus.Close(); err != nil {
		t.Fatal(err) // no transfer after the configuration
	}
}

func TestDescribe(t *testing.T) {
	d, _ := newDev(t, Opts{Model: TMP105})
	if got, want := d.String(), "TMP105{playback(72)}"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	q := d.Quantities()
	if len(q) != 1 || q[0].Name != "temperature" || q[0].Unit != "Cel" {
		t.Errorf("Quantities() = %v", q)
	}
}
