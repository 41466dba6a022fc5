package pca9685

import (
	"math"
	"strings"
	"testing"
	"time"

	"periph.io/x/conn/v3/i2c/i2ctest"
)

// start is the traffic of New at 0x40 from MODE1's power-on value 0x11
// (SLEEP, ALLCALL; datasheet table 5): asleep, the prescaler, totem-pole
// outputs, awake with auto-increment.
func start(prescale byte) []i2ctest.IO {
	return []i2ctest.IO{
		{Addr: 0x40, W: []byte{0x00}, R: []byte{0x11}},
		{Addr: 0x40, W: []byte{0x00, 0x11}},
		{Addr: 0x40, W: []byte{0xFE, prescale}},
		{Addr: 0x40, W: []byte{0x01, 0x04}},
		{Addr: 0x40, W: []byte{0x00, 0x21}},
	}
}

func newDev(t *testing.T, hz float64, ops ...i2ctest.IO) *Dev {
	t.Helper()
	bus := &i2ctest.Playback{Ops: ops, DontPanic: true}
	t.Cleanup(func() {
		if err := bus.Close(); err != nil {
			t.Error(err)
		}
	})
	d, err := New(bus, 0x40, hz)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The prescaler is round(25 MHz / (4096 × f)) − 1 (datasheet §7.3.5).
func TestFrequency(t *testing.T) {
	for _, tc := range []struct {
		hz       float64
		prescale byte
		actual   float64
	}{
		{50, 121, 50.0288},
		{200, 30, 196.8876},
		{1000, 5, 1017.2526},
		{MaxFrequency, 3, 1525.8789},
		{MinFrequency, 255, 23.8419},
	} {
		d := newDev(t, tc.hz, start(tc.prescale)...)
		if math.Abs(d.Frequency()-tc.actual) > 1e-4 {
			t.Errorf("%g Hz: runs at %.4f Hz, want %.4f", tc.hz, d.Frequency(), tc.actual)
		}
	}
}

// A running chip (MODE1 0xA1: RESTART, AI, ALLCALL) goes to sleep without
// writing RESTART back, and wakes with it clear.
func TestStartFromRunning(t *testing.T) {
	newDev(t, 50,
		i2ctest.IO{Addr: 0x40, W: []byte{0x00}, R: []byte{0xA1}},
		i2ctest.IO{Addr: 0x40, W: []byte{0x00, 0x31}},
		i2ctest.IO{Addr: 0x40, W: []byte{0xFE, 121}},
		i2ctest.IO{Addr: 0x40, W: []byte{0x01, 0x04}},
		i2ctest.IO{Addr: 0x40, W: []byte{0x00, 0x21}},
	)
}

// A channel's four registers in one write: on at step 0, off at the
// duty; full off and full on by their bits (datasheet §7.3.3).
func TestSetDuty(t *testing.T) {
	ops := append(start(121),
		i2ctest.IO{Addr: 0x40, W: []byte{0x06, 0x00, 0x00, 0x00, 0x08}},
		i2ctest.IO{Addr: 0x40, W: []byte{0x42, 0x00, 0x00, 0x00, 0x10}},
		i2ctest.IO{Addr: 0x40, W: []byte{0x0A, 0x00, 0x10, 0x00, 0x00}},
		i2ctest.IO{Addr: 0x40, W: []byte{0x0E, 0x00, 0x00, 0xFF, 0x0F}},
		// 1.5 ms at 50.0288 Hz: 307.4 steps.
		i2ctest.IO{Addr: 0x40, W: []byte{0x12, 0x00, 0x00, 0x33, 0x01}},
	)
	d := newDev(t, 50, ops...)
	for _, step := range []struct {
		ch, duty int
	}{{0, 2048}, {15, 0}, {1, Steps}, {2, Steps - 1}} {
		if err := d.SetDuty(step.ch, step.duty); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.SetPulse(3, 1500*time.Microsecond); err != nil {
		t.Fatal(err)
	}
}

// What the chip cannot do is refused before any traffic.
func TestRefused(t *testing.T) {
	d := newDev(t, 50, start(121)...)
	for _, tc := range []struct {
		err  error
		want string
	}{
		{d.SetDuty(16, 0), "no channel 16"},
		{d.SetDuty(-1, 0), "no channel -1"},
		{d.SetDuty(0, Steps+1), "duty 4097 is not 0 to 4096"},
		{d.SetPulse(0, 25*time.Millisecond), "does not fit a period of 19.98"},
		{d.SetPulse(0, -time.Millisecond), "does not fit"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%v, want %q", tc.err, tc.want)
		}
	}
	for _, tc := range []struct {
		addr uint16
		hz   float64
		want string
	}{
		{0x3F, 50, "answers at 0x40..0x7f"},
		{0x70, 50, "LED All Call"},
		{0x40, 20, "runs at 23.8 to 1525.9 Hz"},
		{0x40, 2000, "runs at"},
		{0x40, math.NaN(), "runs at"},
	} {
		if _, err := New(&i2ctest.Playback{DontPanic: true}, tc.addr, tc.hz); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%#x, %g): %v, want %q", tc.addr, tc.hz, err, tc.want)
		}
	}
}
