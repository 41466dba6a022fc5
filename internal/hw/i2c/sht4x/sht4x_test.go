package sht4x

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

// initOps is New's traffic: soft reset, then the serial number 0x12345678
// as two words with their CRCs (computed independently of the driver).
func initOps(addr uint16) []i2ctest.IO {
	return []i2ctest.IO{
		{Addr: addr, W: []byte{0x94}},
		{Addr: addr, W: []byte{0x89}},
		{Addr: addr, R: []byte{0x12, 0x34, 0x37, 0x56, 0x78, 0x7D}},
	}
}

// measureOps is one measurement: the command, then a plain 6-byte read.
func measureOps(addr uint16, cmd byte, data []byte) []i2ctest.IO {
	return []i2ctest.IO{{Addr: addr, W: []byte{cmd}}, {Addr: addr, R: data}}
}

// T raw 0x6666 (= 0.4·65535: 25 °C, CRC 0x93), RH raw 0x8000 (56.501 %RH,
// CRC 0xA2).
var exampleData = []byte{0x66, 0x66, 0x93, 0x80, 0x00, 0xA2}

func TestNewAndSense(t *testing.T) {
	tests := []struct {
		name     string
		addr     uint16
		opts     *Opts
		cmd      byte
		measWait time.Duration
	}{
		{"default high", 0x44, nil, 0xFD, 10 * time.Millisecond},
		{"high at 0x45", 0x45, &Opts{Precision: High}, 0xFD, 10 * time.Millisecond},
		{"medium at 0x46", 0x46, &Opts{Precision: Medium}, 0xF6, 5 * time.Millisecond},
		{"low", 0x44, &Opts{Precision: Low}, 0xE0, 2 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bus := &i2ctest.Playback{Ops: slices.Concat(initOps(tt.addr), measureOps(tt.addr, tt.cmd, exampleData))}
			rec := &recorder{}
			d, err := newDev(bus, tt.addr, tt.opts, rec.wait)
			if err != nil {
				t.Fatal(err)
			}
			if got := d.Serial(); got != 0x12345678 {
				t.Errorf("Serial() = 0x%08X, want 0x12345678", got)
			}
			got, err := d.Sense(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]float64{
				"temperature": 25,
				"humidity":    -6 + 125*32768.0/65535,
			}
			if len(got) != len(want) || got["temperature"] != want["temperature"] || got["humidity"] != want["humidity"] {
				t.Errorf("Sense = %v, want %v", got, want)
			}
			if err := bus.Close(); err != nil {
				t.Error(err)
			}
			want2 := []time.Duration{2 * time.Millisecond, 10 * time.Millisecond, tt.measWait}
			if !slices.Equal(rec.waits, want2) {
				t.Errorf("waits = %v, want %v", rec.waits, want2)
			}
		})
	}
}

func TestConversions(t *testing.T) {
	tests := []struct {
		raw         uint16
		temp, humid float64
	}{
		{0x0000, -45, 0},   // RH formula gives -6: cropped
		{0xFFFF, 130, 100}, // RH formula gives 119: cropped
		{0x6666, 25, 44},   // 0.4·65535
		{0x8000, 42.50134, 56.50095},
		{0x0C49, -36.60182, 0}, // RH -0.0013: cropped
		{0x0C4A, -36.59915, 0.00061},
		{0xD915, 103.39818, 99.99870},
		{0xD916, 103.40085, 100}, // RH 100.0006: cropped
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
		ops  []i2ctest.IO
		want string
	}{
		{
			"serial number",
			[]i2ctest.IO{{Addr: 0x44, W: []byte{0x94}}, {Addr: 0x44, W: []byte{0x89}}, {Addr: 0x44, R: []byte{0x12, 0x34, 0x37, 0x56, 0x78, 0x7E}}},
			"sht4x: read serial number: serial low word 0x5678: crc mismatch: got 0x7E, want 0x7D",
		},
		{
			"temperature",
			slices.Concat(initOps(0x44), measureOps(0x44, 0xFD, []byte{0x66, 0x67, 0x93, 0x80, 0x00, 0xA2})),
			"sht4x: measure: temperature word 0x6667: crc mismatch",
		},
		{
			"humidity",
			slices.Concat(initOps(0x44), measureOps(0x44, 0xFD, []byte{0x66, 0x66, 0x93, 0x80, 0x00, 0x00})),
			"sht4x: measure: humidity word 0x8000: crc mismatch: got 0x00, want 0xA2",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := newDev(&i2ctest.Playback{Ops: tt.ops}, 0x44, nil, (&recorder{}).wait)
			if err == nil {
				_, err = d.Sense(t.Context())
			}
			if !errors.Is(err, ErrCRC) || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestBusErrors cuts the expected traffic short at every step.
func TestBusErrors(t *testing.T) {
	all := slices.Concat(initOps(0x44), measureOps(0x44, 0xFD, exampleData))
	want := []string{
		"sht4x: soft reset: ",
		"sht4x: read serial number: write command: ",
		"sht4x: read serial number: read: ",
		"sht4x: measure: write command: ",
		"sht4x: measure: read: ",
	}
	if len(want) != len(all) {
		t.Fatalf("%d expectations for %d ops", len(want), len(all))
	}
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

// TestRecordedBusError runs the driver over i2ctest.Record wrapping a bus
// that fails the measurement read (as a sensor NACKing its read header
// does): the error is wrapped, and the traffic before it is the
// datasheet's.
func TestRecordedBusError(t *testing.T) {
	rec := &i2ctest.Record{Bus: &i2ctest.Playback{Ops: slices.Concat(initOps(0x44), measureOps(0x44, 0xFD, exampleData)[:1]), DontPanic: true}}
	d, err := newDev(rec, 0x44, nil, (&recorder{}).wait)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Sense(t.Context()); err == nil || !strings.HasPrefix(err.Error(), "sht4x: measure: read: ") {
		t.Errorf("Sense error = %v", err)
	}
	var writes [][]byte
	for _, op := range rec.Ops {
		if op.W != nil {
			writes = append(writes, op.W)
		}
	}
	want := [][]byte{{0x94}, {0x89}, {0xFD}}
	if !slices.EqualFunc(writes, want, slices.Equal) {
		t.Errorf("writes = % X, want % X", writes, want)
	}
}

func TestSenseHonoursContext(t *testing.T) {
	bus := &i2ctest.Playback{Ops: slices.Concat(initOps(0x44), measureOps(0x44, 0xFD, exampleData)[:1])}
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
		{0x47, nil, "sht4x: address 0x47: want 0x44, 0x45 or 0x46"},
		{0x44, &Opts{Precision: 3}, "sht4x: invalid precision 3"},
	}
	for _, tt := range tests {
		_, err := newDev(&i2ctest.Playback{}, tt.addr, tt.opts, (&recorder{}).wait)
		if err == nil || err.Error() != tt.want {
			t.Errorf("New(0x%02X, %+v) error = %v, want %q", tt.addr, tt.opts, err, tt.want)
		}
	}
}

func TestQuantitiesAndString(t *testing.T) {
	d, err := newDev(&i2ctest.Playback{Ops: initOps(0x44)}, 0x44, nil, (&recorder{}).wait)
	if err != nil {
		t.Fatal(err)
	}
	q := d.Quantities()
	if len(q) != 2 || q[0].Name != "temperature" || q[0].Unit != "Cel" || q[1].Name != "humidity" || q[1].Unit != "%RH" {
		t.Errorf("Quantities = %v", q)
	}
	if s := d.String(); s != "SHT4x{playback(68)}" {
		t.Errorf("String() = %q", s)
	}
}

func TestPublicNew(t *testing.T) {
	bus := &i2ctest.Playback{Ops: initOps(0x44)}
	d, err := New(bus, 0x44, nil) // waits the real 2 + 10 ms
	if err != nil || d.Serial() != 0x12345678 {
		t.Fatalf("New: %v", err)
	}
	if err := bus.Close(); err != nil {
		t.Error(err)
	}
}

func TestPrecisionString(t *testing.T) {
	tests := map[Precision]string{High: "high", Medium: "medium", Low: "low", 3: "Precision(3)"}
	for p, want := range tests {
		if got := p.String(); got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
	}
}
