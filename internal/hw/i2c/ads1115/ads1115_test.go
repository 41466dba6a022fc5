package ads1115

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/hw/sensor"

	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/i2c/i2ctest"
)

// Register traffic as SBAS444 (Programming, Reading and Writing Registers)
// draws it: a write is the pointer byte then MSB and LSB in one frame; a
// read is a pointer write, then a repeated start and MSB, LSB.
func writeConfig(v uint16) i2ctest.IO {
	return i2ctest.IO{Addr: 0x48, W: []byte{0x01, byte(v >> 8), byte(v)}}
}

func readConfig(v uint16) i2ctest.IO {
	return i2ctest.IO{Addr: 0x48, W: []byte{0x01}, R: []byte{byte(v >> 8), byte(v)}}
}

func readConversion(v uint16) i2ctest.IO {
	return i2ctest.IO{Addr: 0x48, W: []byte{0x00}, R: []byte{byte(v >> 8), byte(v)}}
}

// fakeSleep records the waits and returns at once, or ctx's error.
type fakeSleep struct{ waits []time.Duration }

func (f *fakeSleep) sleep(ctx context.Context, d time.Duration) error {
	f.waits = append(f.waits, d)
	return ctx.Err()
}

// newDev makes a device with the default options (AIN0 first: 0x4583)
// whose bus then plays ops.
func newDev(t *testing.T, opts *Opts, first uint16, ops ...i2ctest.IO) (*Dev, *i2ctest.Playback, *fakeSleep) {
	t.Helper()
	bus := &i2ctest.Playback{DontPanic: true, Ops: append([]i2ctest.IO{writeConfig(first), readConfig(first | 0x8000)}, ops...)}
	d, err := New(bus, 0x48, opts)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeSleep{}
	d.sleep = f.sleep
	return d, bus, f
}

func TestNewConfigures(t *testing.T) {
	tests := []struct {
		name string
		opts *Opts
		cfg  uint16 // MUX of the first channel, PGA, MODE=1, DR, COMP_QUE=11
	}{
		{"defaults", nil, 0x4583},
		{"±6.144 V", &Opts{FullScale: FS6144mV}, 0x4183},
		{"±4.096 V", &Opts{FullScale: FS4096mV}, 0x4383},
		{"±2.048 V", &Opts{FullScale: FS2048mV}, 0x4583},
		{"±1.024 V", &Opts{FullScale: FS1024mV}, 0x4783},
		{"±0.512 V", &Opts{FullScale: FS512mV}, 0x4983},
		{"±0.256 V", &Opts{FullScale: FS256mV}, 0x4B83},
		{"8 SPS", &Opts{DataRate: 8}, 0x4503},
		{"16 SPS", &Opts{DataRate: 16}, 0x4523},
		{"32 SPS", &Opts{DataRate: 32}, 0x4543},
		{"64 SPS", &Opts{DataRate: 64}, 0x4563},
		{"128 SPS", &Opts{DataRate: 128}, 0x4583},
		{"250 SPS", &Opts{DataRate: 250}, 0x45A3},
		{"475 SPS", &Opts{DataRate: 475}, 0x45C3},
		{"860 SPS", &Opts{DataRate: 860}, 0x45E3},
		{"AIN2 and AIN3", &Opts{Channels: []int{3, 2}}, 0x6583},
		{"AIN3 ±0.512 V", &Opts{Channels: []int{3}, FullScale: FS512mV}, 0x7983},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The chip reads back idle (OS=1) after a configuration that
			// starts nothing.
			bus := &i2ctest.Playback{DontPanic: true, Ops: []i2ctest.IO{writeConfig(tt.cfg), readConfig(tt.cfg | 0x8000)}}
			if _, err := New(bus, 0x48, tt.opts); err != nil {
				t.Fatal(err)
			}
			if err := bus.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestNewNotADS1115(t *testing.T) {
	// A TMP102 at 0x48 answers pointer 0x01 with its own configuration.
	bus := &i2ctest.Playback{DontPanic: true, Ops: []i2ctest.IO{writeConfig(0x4583), readConfig(0x60A0)}}
	_, err := New(bus, 0x48, nil)
	if !errors.Is(err, ErrNotADS1115) {
		t.Fatalf("New() error = %v, want ErrNotADS1115", err)
	}
	if want := "ads1115: configuration reads back 0x60a0 after writing 0x4583: not an ADS1115"; err.Error() != want {
		t.Errorf("New() error = %q, want %q", err, want)
	}
}

func TestNewRejects(t *testing.T) {
	tests := []struct {
		addr uint16
		opts Opts
		want string
	}{
		{0x47, Opts{}, "address 0x47"},
		{0x4C, Opts{}, "address 0x4c"},
		{0x48, Opts{Channels: []int{4}}, "channel 4"},
		{0x48, Opts{Channels: []int{-1}}, "channel -1"},
		{0x48, Opts{Channels: []int{1, 0, 1}}, "channel 1 listed twice"},
		{0x48, Opts{FullScale: 5000}, "full scale 5000 mV"},
		{0x48, Opts{DataRate: 100}, "data rate 100 SPS"},
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

// TestSenseSequence plays a whole measurement of the four inputs: start
// (OS=1, MUX=1xx), wait, poll OS until idle, read the conversion.
func TestSenseSequence(t *testing.T) {
	d, bus, f := newDev(t, nil, 0x4583,
		writeConfig(0xC583), readConfig(0x4583), readConfig(0xC583), readConversion(0x4000), // busy once
		writeConfig(0xD583), readConfig(0xD583), readConversion(0x2000),
		writeConfig(0xE583), readConfig(0xE583), readConversion(0x0001),
		writeConfig(0xF583), readConfig(0xF583), readConversion(0xFFFF),
	)
	got, err := d.Sense(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"ain0": 1.024, "ain1": 0.512, "ain2": 62.5e-6, "ain3": -62.5e-6}
	if len(got) != len(want) {
		t.Fatalf("Sense() = %v, want %v", got, want)
	}
	for k, v := range want {
		if math.Abs(got[k]-v) > 1e-12 {
			t.Errorf("Sense()[%s] = %v, want %v", k, got[k], v)
		}
	}
	if err := bus.Close(); err != nil {
		t.Fatal(err)
	}
	// 128 SPS: 7.8125 ms a conversion, waited with the oscillator's 10 %,
	// then polled every tenth.
	conv := 7812500 * time.Nanosecond
	wantWaits := []time.Duration{conv + conv/10, conv / 10, conv + conv/10, conv + conv/10, conv + conv/10}
	if !slices.Equal(f.waits, wantWaits) {
		t.Errorf("waits = %v, want %v", f.waits, wantWaits)
	}
}

func TestConversionTime(t *testing.T) {
	for _, tt := range []struct {
		rate int
		cfg  uint16
		conv time.Duration
	}{
		{8, 0x4503, 125 * time.Millisecond},
		{128, 0x4583, 7812500 * time.Nanosecond},
		{860, 0x45E3, 1162790 * time.Nanosecond},
	} {
		d, _, f := newDev(t, &Opts{Channels: []int{0}, DataRate: tt.rate}, tt.cfg,
			writeConfig(tt.cfg|0x8000), readConfig(tt.cfg|0x8000), readConversion(0))
		if _, err := d.Sense(context.Background()); err != nil {
			t.Fatal(err)
		}
		if want := tt.conv + tt.conv/10; len(f.waits) != 1 || f.waits[0] != want {
			t.Errorf("%d SPS: waits = %v, want [%v]", tt.rate, f.waits, want)
		}
	}
}

// TestOutputCodes is SBAS444's ideal output code table at ±2.048 V, and
// the LSB size of every range (Table 3).
func TestOutputCodes(t *testing.T) {
	tests := []struct {
		fs   FullScale
		code uint16
		want float64
	}{
		{FS2048mV, 0x7FFF, 2.048 * 32767 / 32768}, // ≥ +FS·(2¹⁵−1)/2¹⁵
		{FS2048mV, 0x0001, 62.5e-6},               // +FS/2¹⁵
		{FS2048mV, 0x0000, 0},
		{FS2048mV, 0xFFFF, -62.5e-6}, // −FS/2¹⁵
		{FS2048mV, 0x8000, -2.048},   // ≤ −FS
		{FS6144mV, 0x0001, 187.5e-6},
		{FS4096mV, 0x0001, 125e-6},
		{FS1024mV, 0x0001, 31.25e-6},
		{FS512mV, 0x0001, 15.625e-6},
		{FS256mV, 0x0001, 7.8125e-6},
		{FS6144mV, 0x7FFF, 6.144 * 32767 / 32768},
		{FS256mV, 0x8000, -0.256},
	}
	for _, tt := range tests {
		d := &Dev{}
		if err := d.setOpts(Opts{FullScale: tt.fs}); err != nil {
			t.Fatal(err)
		}
		if got := d.volts([2]byte{byte(tt.code >> 8), byte(tt.code)}); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%d mV, code %#04x: %v V, want %v V", tt.fs, tt.code, got, tt.want)
		}
	}
}

func TestConversionNeverFinishes(t *testing.T) {
	busy := make([]i2ctest.IO, maxPolls+1)
	for i := range busy {
		busy[i] = readConfig(0x4583)
	}
	ops := append([]i2ctest.IO{writeConfig(0xC583)}, busy...)
	// The next Sense waits the abandoned conversion out before starting.
	ops = append(ops, readConfig(0xC583), writeConfig(0xC583), readConfig(0xC583), readConversion(0x0010))
	d, bus, f := newDev(t, &Opts{Channels: []int{0}}, 0x4583, ops...)

	_, err := d.Sense(context.Background())
	if err == nil || !strings.HasPrefix(err.Error(), "ads1115: wait for AIN0 conversion: still converting") {
		t.Fatalf("Sense() error = %v, want a conversion that never finished", err)
	}
	if len(f.waits) != 1+maxPolls {
		t.Errorf("%d waits, want %d: the poll is bounded", len(f.waits), 1+maxPolls)
	}
	got, err := d.Sense(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got["ain0"] != 16*62.5e-6 {
		t.Errorf("Sense() = %v", got)
	}
	if err := bus.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestContextDeadline uses the real wait: a 125 ms conversion (8 SPS) must
// give way to a 5 ms deadline.
func TestContextDeadline(t *testing.T) {
	bus := &i2ctest.Playback{DontPanic: true, Ops: []i2ctest.IO{
		writeConfig(0x4503), readConfig(0xC503), writeConfig(0xC503),
	}}
	d, err := New(bus, 0x48, &Opts{DataRate: 8})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = d.Sense(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Sense() error = %v, want context.DeadlineExceeded", err)
	}
	if took := time.Since(start); took >= 125*time.Millisecond {
		t.Errorf("Sense() returned after %v, not at the deadline", took)
	}
	if err := bus.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestSenseCancelledBeforeStart(t *testing.T) {
	d, bus, _ := newDev(t, nil, 0x4583)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Sense(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sense() error = %v, want context.Canceled", err)
	}
	if err := bus.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestCancelledWhilePolling(t *testing.T) {
	d, bus, _ := newDev(t, &Opts{Channels: []int{1}}, 0x5583, writeConfig(0xD583), readConfig(0x5583))
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	d.sleep = func(ctx context.Context, _ time.Duration) error {
		if calls++; calls == 2 {
			cancel()
		}
		return ctx.Err()
	}
	if _, err := d.Sense(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sense() error = %v, want context.Canceled", err)
	}
	if err := bus.Close(); err != nil {
		t.Fatal(err)
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
	ops := []i2ctest.IO{
		writeConfig(0x4583), readConfig(0xC583),
		writeConfig(0xC583), readConfig(0xC583), readConversion(0),
	}
	for i, want := range []string{
		"ads1115: write configuration",
		"ads1115: read configuration back",
		"ads1115: start AIN0 conversion",
		"ads1115: wait for AIN0 conversion: read status",
		"ads1115: read AIN0 conversion",
	} {
		t.Run(want, func(t *testing.T) {
			bus := &failingBus{Bus: &i2ctest.Playback{Ops: ops, DontPanic: true}, failAt: i}
			d, err := New(bus, 0x48, &Opts{Channels: []int{0}})
			if err == nil {
				d.sleep = (&fakeSleep{}).sleep
				_, err = d.Sense(context.Background())
			}
			if !errors.Is(err, errBus) || !strings.HasPrefix(err.Error(), want+": ") {
				t.Fatalf("error = %v, want %q wrapping the bus error", err, want)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	d, _, _ := newDev(t, &Opts{Channels: []int{3, 1}}, 0x5583)
	want := []sensor.Quantity{{Name: "ain1", Unit: "V"}, {Name: "ain3", Unit: "V"}}
	if got := d.Quantities(); !slices.Equal(got, want) {
		t.Errorf("Quantities() = %v, want %v", got, want)
	}
	if got, want := d.String(), "ADS1115{playback(72)}"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
