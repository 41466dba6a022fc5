package sht3x

import (
	"context"
	"errors"
	"github.com/openhal/gateway/internal/clock"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/hw/i2c/internal/sensirion"

	"periph.io/x/conn/v3/i2c/i2ctest"
)

// recorder stands in for the sleep between commands: it records what the
// driver asked to wait and returns at once.
type recorder struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (r *recorder) wait(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waits = append(r.waits, d)
	return ctx.Err()
}

func resetOp(addr uint16) i2ctest.IO {
	return i2ctest.IO{Addr: addr, W: []byte{0x30, 0xA2}}
}

// measureOps is one single-shot measurement: the command, then a plain
// 6-byte read. The CRC bytes were computed independently of the driver.
func measureOps(addr uint16, cmd []byte, data []byte) []i2ctest.IO {
	return []i2ctest.IO{{Addr: addr, W: cmd}, {Addr: addr, R: data}}
}

// T raw 0x6666 (= 0.4·65535: 25 °C, CRC 0x93), RH raw 0x8000 (50.0008 %RH, CRC 0xA2).
var exampleData = []byte{0x66, 0x66, 0x93, 0x80, 0x00, 0xA2}

func TestNewAndSense(t *testing.T) {
	tests := []struct {
		name     string
		addr     uint16
		opts     *Opts
		cmd      []byte
		measWait time.Duration
	}{
		{"default high", 0x44, nil, []byte{0x24, 0x00}, 16 * time.Millisecond},
		{"high at 0x45", 0x45, &Opts{Repeatability: High}, []byte{0x24, 0x00}, 16 * time.Millisecond},
		{"medium", 0x44, &Opts{Repeatability: Medium}, []byte{0x24, 0x0B}, 7 * time.Millisecond},
		{"low", 0x44, &Opts{Repeatability: Low}, []byte{0x24, 0x16}, 5 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ops := slices.Concat([]i2ctest.IO{resetOp(tt.addr)}, measureOps(tt.addr, tt.cmd, exampleData))
			bus := &i2ctest.Playback{Ops: ops}
			rec := &recorder{}
			d, err := newDev(bus, tt.addr, tt.opts, rec.wait)
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.Sense(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]float64{
				"temperature": -45 + 175*26214.0/65535,
				"humidity":    100 * 32768.0 / 65535,
			}
			if len(got) != len(want) || got["temperature"] != want["temperature"] || got["humidity"] != want["humidity"] {
				t.Errorf("Sense = %v, want %v", got, want)
			}
			if err := bus.Close(); err != nil {
				t.Error(err)
			}
			if want := []time.Duration{2 * time.Millisecond, tt.measWait}; !slices.Equal(rec.waits, want) {
				t.Errorf("waits = %v, want %v", rec.waits, want)
			}
		})
	}
}

func TestConversions(t *testing.T) {
	tests := []struct {
		raw         uint16
		temp, humid float64
	}{
		{0x0000, -45, 0},
		{0xFFFF, 130, 100},
		{0x6666, 25, 40},
		{0x8000, 42.50134, 50.00076},
	}
	for _, tt := range tests {
		if got := sensirion.Celsius(tt.raw); !near(got, tt.temp, 1e-5) {
			t.Errorf("Celsius(0x%04X) = %v, want %v", tt.raw, got, tt.temp)
		}
		if got := humidity(tt.raw); !near(got, tt.humid, 1e-5) {
			t.Errorf("humidity(0x%04X) = %v, want %v", tt.raw, got, tt.humid)
		}
	}
}

func near(a, b, eps float64) bool { return a-b < eps && b-a < eps }

func TestCRCMismatch(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"temperature", []byte{0x66, 0x66, 0x92, 0x80, 0x00, 0xA2}, "sht3x: read measurement: temperature word 0x6666: crc mismatch: got 0x92, want 0x93"},
		{"humidity", []byte{0x66, 0x66, 0x93, 0x80, 0x01, 0xA2}, "sht3x: read measurement: humidity word 0x8001: crc mismatch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ops := slices.Concat([]i2ctest.IO{resetOp(0x44)}, measureOps(0x44, []byte{0x24, 0x00}, tt.data))
			d, err := newDev(&i2ctest.Playback{Ops: ops}, 0x44, nil, (&recorder{}).wait)
			if err != nil {
				t.Fatal(err)
			}
			_, err = d.Sense(t.Context())
			if !errors.Is(err, ErrCRC) || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("Sense error = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestBusErrors cuts the expected traffic short at every step.
func TestBusErrors(t *testing.T) {
	all := slices.Concat([]i2ctest.IO{resetOp(0x44)}, measureOps(0x44, []byte{0x24, 0x00}, exampleData))
	want := []string{"sht3x: soft reset: ", "sht3x: start measurement: ", "sht3x: read measurement: "}
	for n, prefix := range want {
		bus := &i2ctest.Playback{Ops: all[:n], DontPanic: true}
		d, err := newDev(bus, 0x44, nil, (&recorder{}).wait)
		if err == nil {
			_, err = d.Sense(t.Context())
		}
		if err == nil || !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), "i2ctest: unexpected Tx()") {
			t.Errorf("bus failing at op %d: error = %v, want prefix %q", n, err, prefix)
		}
	}
}

// TestWrongTraffic: a driver sending anything but the datasheet's command
// is caught by Playback, and the error names the step.
func TestWrongTraffic(t *testing.T) {
	ops := []i2ctest.IO{resetOp(0x44), {Addr: 0x44, W: []byte{0x2C, 0x06}}} // the clock-stretching command
	d, err := newDev(&i2ctest.Playback{Ops: ops, DontPanic: true}, 0x44, nil, (&recorder{}).wait)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Sense(t.Context()); err == nil || !strings.Contains(err.Error(), "sht3x: start measurement: i2ctest: unexpected write") {
		t.Errorf("Sense error = %v", err)
	}
}

func TestSenseHonoursContext(t *testing.T) {
	ops := slices.Concat([]i2ctest.IO{resetOp(0x44)}, measureOps(0x44, []byte{0x24, 0x00}, exampleData)[:1])
	bus := &i2ctest.Playback{Ops: ops}
	d, err := newDev(bus, 0x44, nil, (&recorder{}).wait)
	if err != nil {
		t.Fatal(err)
	}
	d.wait = clock.SleepReal
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := d.Sense(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Sense error = %v, want context.Canceled", err)
	}
	if err := bus.Close(); err != nil {
		t.Error(err)
	}
}

func TestBadArguments(t *testing.T) {
	tests := []struct {
		addr uint16
		opts *Opts
		want string
	}{
		{0x76, nil, "sht3x: address 0x76: want 0x44 or 0x45"},
		{0x44, &Opts{Repeatability: 3}, "sht3x: invalid repeatability 3"},
	}
	for _, tt := range tests {
		_, err := newDev(&i2ctest.Playback{}, tt.addr, tt.opts, (&recorder{}).wait)
		if err == nil || err.Error() != tt.want {
			t.Errorf("New(0x%02X, %+v) error = %v, want %q", tt.addr, tt.opts, err, tt.want)
		}
	}
}

func TestQuantitiesAndString(t *testing.T) {
	d, err := newDev(&i2ctest.Playback{Ops: []i2ctest.IO{resetOp(0x45)}}, 0x45, nil, (&recorder{}).wait)
	if err != nil {
		t.Fatal(err)
	}
	q := d.Quantities()
	if len(q) != 2 || q[0].Name != "temperature" || q[0].Unit != "Cel" || q[1].Name != "humidity" || q[1].Unit != "%RH" {
		t.Errorf("Quantities = %v", q)
	}
	if s := d.String(); s != "SHT3x{playback(69)}" {
		t.Errorf("String() = %q", s)
	}
}

func TestPublicNew(t *testing.T) {
	bus := &i2ctest.Playback{Ops: []i2ctest.IO{resetOp(0x44)}}
	d, err := New(bus, 0x44, nil) // waits the real 2 ms reset time
	if err != nil || d == nil {
		t.Fatalf("New: %v", err)
	}
	if err := bus.Close(); err != nil {
		t.Error(err)
	}
}

func TestRepeatabilityString(t *testing.T) {
	tests := map[Repeatability]string{High: "high", Medium: "medium", Low: "low", 3: "Repeatability(3)"}
	for r, want := range tests {
		if got := r.String(); got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
	}
}
