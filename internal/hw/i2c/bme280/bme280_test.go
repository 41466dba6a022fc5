package bme280

import (
	"context"
	"errors"
	"github.com/openhal/gateway/internal/clock"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"periph.io/x/conn/v3/i2c/i2ctest"
)

// The worked example. Temperature and pressure trimming values and raw
// readings are the compensation example of the BMP280 datasheet
// (BST-BMP280-DS001 §3.12: dig_T1 = 27504 ... dig_P9 = 6000, adc_T =
// 519888, adc_P = 415148 → 25.08 °C, t_fine = 128422), whose formulas the
// BME280 shares. The BME280 datasheet gives no humidity example, so the
// humidity trimming values (H1 = 75, H2 = 362, H3 = 0, H4 = 313, H5 = 50,
// H6 = 30) and adc_H = 30000 are our own, chosen in the range real parts
// carry; the integer result is cross-checked against the datasheet's
// double-precision formula below.
var (
	// 0x88..0xA1, little-endian words, 0xA0 reserved, 0xA1 = dig_H1.
	exampleCalib1 = []byte{
		0x70, 0x6B, 0x43, 0x67, 0x18, 0xFC, 0x7D, 0x8E, 0x43, 0xD6, 0xD0, 0x0B, 0x27,
		0x0B, 0x8C, 0x00, 0xF9, 0xFF, 0x8C, 0x3C, 0xF8, 0xC6, 0x70, 0x17, 0x00, 0x4B,
	}
	// 0xE1..0xE7: H2 = 362, H3 = 0, then H4 = 0x139 and H5 = 0x032 packed
	// as 0xE4 = 0x13, 0xE5 = 0x2|0x9, 0xE6 = 0x03, and H6 = 30.
	exampleCalib2 = []byte{0x6A, 0x01, 0x00, 0x13, 0x29, 0x03, 0x1E}
	// 0xF7..0xFE: adc_P = 0x655AC, adc_T = 0x7EED0, adc_H = 0x7530.
	exampleData = []byte{0x65, 0x5A, 0xC0, 0x7E, 0xED, 0x00, 0x75, 0x30}

	exampleCal = calibration{
		t1: 27504, t2: 26435, t3: -1000,
		p1: 36477, p2: -10685, p3: 3024, p4: 2855, p5: 140, p6: -7, p7: 15500, p8: -14600, p9: 6000,
		h1: 75, h2: 362, h3: 0, h4: 313, h5: 50, h6: 30,
	}
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

// initOps is the traffic New must produce with default options at addr.
func initOps(addr uint16) []i2ctest.IO {
	return []i2ctest.IO{
		{Addr: addr, W: []byte{0xD0}, R: []byte{0x60}},  // chip id
		{Addr: addr, W: []byte{0xE0, 0xB6}},             // soft reset
		{Addr: addr, W: []byte{0xF3}, R: []byte{0x00}},  // status: NVM copied
		{Addr: addr, W: []byte{0x88}, R: exampleCalib1}, // calibration 1
		{Addr: addr, W: []byte{0xE1}, R: exampleCalib2}, // calibration 2
		{Addr: addr, W: []byte{0xF2, 0x01}},             // ctrl_hum: osrs_h ×1
		{Addr: addr, W: []byte{0xF5, 0x00}},             // config: filter off
		{Addr: addr, W: []byte{0xF4, 0x24}},             // ctrl_meas: osrs_t ×1, osrs_p ×1, sleep
	}
}

// senseOps is the traffic of one forced measurement with default options.
func senseOps(addr uint16, data []byte) []i2ctest.IO {
	return []i2ctest.IO{
		{Addr: addr, W: []byte{0xF4, 0x25}},            // ctrl_meas: forced mode
		{Addr: addr, W: []byte{0xF3}, R: []byte{0x00}}, // status: done
		{Addr: addr, W: []byte{0xF7}, R: data},         // burst read
	}
}

func TestNewAndSenseWorkedExample(t *testing.T) {
	for _, addr := range []uint16{0x76, 0x77} {
		bus := &i2ctest.Playback{Ops: slices.Concat(initOps(addr), senseOps(addr, exampleData))}
		rec := &recorder{}
		d, err := newDev(bus, addr, nil, rec.wait)
		if err != nil {
			t.Fatalf("New(0x%02X): %v", addr, err)
		}
		got, err := d.Sense(t.Context())
		if err != nil {
			t.Fatalf("Sense: %v", err)
		}
		want := map[string]float64{
			"temperature": 25.08,            // the datasheet's result
			"pressure":    25767233.0 / 256, // int64 formula: 100653.25 Pa
			"humidity":    56317.0 / 1024,   // 54.997 %RH
		}
		for k, w := range want {
			if got[k] != w {
				t.Errorf("%s = %v, want %v", k, got[k], w)
			}
		}
		if len(got) != len(want) {
			t.Errorf("Sense returned %v, want keys of %v", got, want)
		}
		if err := bus.Close(); err != nil {
			t.Error(err)
		}
		// 2 ms start-up after the reset; 9.3 ms, the maximum measurement
		// time at ×1/×1/×1, before the status read.
		if want := []time.Duration{2 * time.Millisecond, 9300 * time.Microsecond}; !slices.Equal(rec.waits, want) {
			t.Errorf("waits = %v, want %v", rec.waits, want)
		}
	}
}

func TestOptsReachRegisters(t *testing.T) {
	const addr = 0x76
	ops := initOps(addr)
	ops[5].W = []byte{0xF2, 0x03} // osrs_h ×4
	ops[6].W = []byte{0xF5, 0x10} // filter 16
	ops[7].W = []byte{0xF4, 0x54} // osrs_t ×2 (010), osrs_p ×16 (101), sleep
	sense := senseOps(addr, exampleData)
	sense[0].W = []byte{0xF4, 0x55}
	bus := &i2ctest.Playback{Ops: slices.Concat(ops, sense)}
	rec := &recorder{}
	opts := &Opts{Temperature: O2x, Pressure: O16x, Humidity: O4x, Filter: Filter16}
	d, err := newDev(bus, addr, opts, rec.wait)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Sense(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := bus.Close(); err != nil {
		t.Error(err)
	}
	// 1.25 + 2.3·2 + (2.3·16 + 0.575) + (2.3·4 + 0.575) = 53 ms
	if got, want := rec.waits[len(rec.waits)-1], 53*time.Millisecond; got != want {
		t.Errorf("measurement wait = %v, want %v", got, want)
	}
}

func TestMeasureTime(t *testing.T) {
	tests := []struct {
		opts Opts
		want time.Duration
	}{
		{Opts{}, 9300 * time.Microsecond},
		// The maximum: the datasheet's 112.8 ms for ×16 everywhere.
		{Opts{Temperature: O16x, Pressure: O16x, Humidity: O16x}, 112800 * time.Microsecond},
		{Opts{Temperature: O8x}, 25400 * time.Microsecond},
	}
	for _, tt := range tests {
		o, err := tt.opts.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		if got := o.measureTime(); got != tt.want {
			t.Errorf("%+v: measureTime = %v, want %v", tt.opts, got, tt.want)
		}
	}
}

func TestStatusPolling(t *testing.T) {
	const addr = 0x77
	t.Run("NVM copy still running after reset", func(t *testing.T) {
		ops := initOps(addr)
		busy := i2ctest.IO{Addr: addr, W: []byte{0xF3}, R: []byte{0x01}}
		ops = slices.Insert(ops, 2, busy, busy)
		bus := &i2ctest.Playback{Ops: ops}
		rec := &recorder{}
		if _, err := newDev(bus, addr, nil, rec.wait); err != nil {
			t.Fatal(err)
		}
		if err := bus.Close(); err != nil {
			t.Error(err)
		}
		want := []time.Duration{2 * time.Millisecond, time.Millisecond, time.Millisecond}
		if !slices.Equal(rec.waits, want) {
			t.Errorf("waits = %v, want %v", rec.waits, want)
		}
	})
	t.Run("measurement still running", func(t *testing.T) {
		sense := senseOps(addr, exampleData)
		sense = slices.Insert(sense, 1, i2ctest.IO{Addr: addr, W: []byte{0xF3}, R: []byte{0x08}})
		bus := &i2ctest.Playback{Ops: slices.Concat(initOps(addr), sense)}
		rec := &recorder{}
		d, err := newDev(bus, addr, nil, rec.wait)
		if err != nil {
			t.Fatal(err)
		}
		got, err := d.Sense(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if got["temperature"] != 25.08 {
			t.Errorf("temperature = %v", got["temperature"])
		}
		if err := bus.Close(); err != nil {
			t.Error(err)
		}
	})
	t.Run("measurement never finishes", func(t *testing.T) {
		ops := initOps(addr)
		ops = append(ops, i2ctest.IO{Addr: addr, W: []byte{0xF4, 0x25}})
		for range maxPolls {
			ops = append(ops, i2ctest.IO{Addr: addr, W: []byte{0xF3}, R: []byte{0x08}})
		}
		bus := &i2ctest.Playback{Ops: ops}
		d, err := newDev(bus, addr, nil, (&recorder{}).wait)
		if err != nil {
			t.Fatal(err)
		}
		_, err = d.Sense(t.Context())
		if err == nil || !strings.Contains(err.Error(), "bme280: wait for measurement: status 0x08 still busy") {
			t.Errorf("Sense error = %v", err)
		}
		if err := bus.Close(); err != nil {
			t.Error(err)
		}
	})
}

func TestWrongChip(t *testing.T) {
	tests := []struct {
		id   byte
		want string
	}{
		{0x58, "bme280: wrong chip id 0x58: a BMP280, which has no humidity sensor"},
		{0x61, "bme280: wrong chip id 0x61, want 0x60"}, // a BME680
		{0x00, "bme280: wrong chip id 0x00, want 0x60"},
	}
	for _, tt := range tests {
		bus := &i2ctest.Playback{Ops: []i2ctest.IO{{Addr: 0x76, W: []byte{0xD0}, R: []byte{tt.id}}}}
		_, err := newDev(bus, 0x76, nil, (&recorder{}).wait)
		if !errors.Is(err, ErrWrongChip) || err.Error() != tt.want {
			t.Errorf("id 0x%02X: error = %v, want %q", tt.id, err, tt.want)
		}
		// Nothing is written to a chip that is not a BME280.
		if err := bus.Close(); err != nil {
			t.Error(err)
		}
	}
}

// TestBusErrors cuts the expected traffic short at every step: each
// failure must come back wrapped with what the driver was doing.
func TestBusErrors(t *testing.T) {
	const addr = 0x76
	all := slices.Concat(initOps(addr), senseOps(addr, exampleData))
	want := []string{
		"bme280: read chip id: ",
		"bme280: soft reset: ",
		"bme280: soft reset: read status: ",
		"bme280: read calibration: ",
		"bme280: read calibration: ",
		"bme280: configure: write ctrl_hum: ",
		"bme280: configure: write config: ",
		"bme280: configure: write ctrl_meas: ",
		"bme280: start measurement: ",
		"bme280: wait for measurement: read status: ",
		"bme280: read measurement: ",
	}
	if len(want) != len(all) {
		t.Fatalf("%d expectations for %d ops", len(want), len(all))
	}
	for n, prefix := range want {
		bus := &i2ctest.Playback{Ops: all[:n], DontPanic: true}
		d, err := newDev(bus, addr, nil, (&recorder{}).wait)
		if err == nil {
			_, err = d.Sense(t.Context())
		}
		if err == nil || !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), "i2ctest: unexpected Tx()") {
			t.Errorf("bus failing at op %d: error = %v, want prefix %q", n, err, prefix)
		}
	}
}

func TestSenseHonoursContext(t *testing.T) {
	const addr = 0x76
	bus := &i2ctest.Playback{Ops: slices.Concat(initOps(addr), senseOps(addr, exampleData)[:1])}
	d, err := newDev(bus, addr, nil, (&recorder{}).wait)
	if err != nil {
		t.Fatal(err)
	}
	d.wait = clock.SleepReal // the real wait, which must give up when ctx does
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := d.Sense(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Sense error = %v, want context.Canceled", err)
	}
	if err := bus.Close(); err != nil {
		t.Error(err)
	}
}

func TestNoDataMarker(t *testing.T) {
	const addr = 0x76
	reset := []byte{0x80, 0x00, 0x00, 0x80, 0x00, 0x00, 0x80, 0x00}
	bus := &i2ctest.Playback{Ops: slices.Concat(initOps(addr), senseOps(addr, reset))}
	d, err := newDev(bus, addr, nil, (&recorder{}).wait)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Sense(t.Context()); err == nil || !strings.Contains(err.Error(), "no data") {
		t.Errorf("Sense error = %v, want no data", err)
	}
}

func TestBadArguments(t *testing.T) {
	tests := []struct {
		addr uint16
		opts *Opts
		want string
	}{
		{0x44, nil, "bme280: address 0x44: want 0x76 or 0x77"},
		{0x76, &Opts{Humidity: 6}, "bme280: invalid oversampling 6"},
		{0x76, &Opts{Filter: 5}, "bme280: invalid filter 5"},
	}
	for _, tt := range tests {
		bus := &i2ctest.Playback{} // no traffic expected: it would panic
		_, err := newDev(bus, tt.addr, tt.opts, (&recorder{}).wait)
		if err == nil || err.Error() != tt.want {
			t.Errorf("New(0x%02X, %+v) error = %v, want %q", tt.addr, tt.opts, err, tt.want)
		}
	}
}

func TestParseCalibration(t *testing.T) {
	tests := []struct {
		name string
		b    []byte
		want calibration
	}{
		{"worked example", exampleCalib2, exampleCal},
		{
			// H4 = -349 (0xEA3), H5 = -30 (0xFE2): the sign lives in
			// 0xE4 and 0xE6, 0xE5 holds H5's low nibble high, H4's low.
			"negative H2, H4, H5, H6",
			[]byte{0xD4, 0xFE, 0x07, 0xEA, 0x23, 0xFE, 0xFB},
			func() calibration {
				c := exampleCal
				c.h2, c.h3, c.h4, c.h5, c.h6 = -300, 7, -349, -30, -5
				return c
			}(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseCalibration([calib1Len]byte(exampleCalib1), [calib2Len]byte(tt.b))
			if got != tt.want {
				t.Errorf("parseCalibration =\n%+v, want\n%+v", got, tt.want)
			}
		})
	}
}

func TestCompensationDatasheetExample(t *testing.T) {
	temp, tFine := exampleCal.temperature(519888)
	if temp != 2508 || tFine != 128422 {
		t.Errorf("temperature = %d, t_fine = %d; datasheet: 2508, 128422", temp, tFine)
	}
}

// TestIntegerMatchesDouble checks the integer formulas, as transcribed,
// against the datasheet's double-precision ones (BST-BME280-DS002 §8.1),
// written out independently here, over the range of raw values.
func TestIntegerMatchesDouble(t *testing.T) {
	c := exampleCal
	for _, adcT := range []int32{400000, 470000, 519888, 560000, 620000} {
		temp, tFine := c.temperature(adcT)
		wantT, wantFine := doubleTemperature(c, adcT)
		// t_fine may differ by the double's truncation.
		if math.Abs(float64(temp)/100-wantT) > 0.01 || tFine-wantFine > 1 || wantFine-tFine > 1 {
			t.Errorf("adc_T %d: %d (t_fine %d), double %.4f (t_fine %d)", adcT, temp, tFine, wantT, wantFine)
		}
		for _, adcP := range []int32{300000, 415148, 500000} {
			p := float64(c.pressure(adcP, tFine)) / 256
			if want := doublePressure(c, adcP, tFine); math.Abs(p-want) > 0.05 {
				t.Errorf("adc_T %d adc_P %d: pressure %.3f Pa, double %.3f", adcT, adcP, p, want)
			}
		}
		for _, adcH := range []int32{0, 20000, 25000, 30000, 35000, 65535} {
			h := float64(c.humidity(adcH, tFine)) / 1024
			if want := doubleHumidity(c, adcH, tFine); math.Abs(h-want) > 0.01 {
				t.Errorf("adc_T %d adc_H %d: humidity %.4f %%RH, double %.4f", adcT, adcH, h, want)
			}
		}
	}
}

func doubleTemperature(c calibration, adcT int32) (float64, int32) {
	a := float64(adcT)
	v1 := (a/16384 - float64(c.t1)/1024) * float64(c.t2)
	d := a/131072 - float64(c.t1)/8192
	v2 := d * d * float64(c.t3)
	return (v1 + v2) / 5120, int32(v1 + v2)
}

func doublePressure(c calibration, adcP, tFine int32) float64 {
	v1 := float64(tFine)/2 - 64000
	v2 := v1 * v1 * float64(c.p6) / 32768
	v2 += v1 * float64(c.p5) * 2
	v2 = v2/4 + float64(c.p4)*65536
	v1 = (float64(c.p3)*v1*v1/524288 + float64(c.p2)*v1) / 524288
	v1 = (1 + v1/32768) * float64(c.p1)
	p := 1048576 - float64(adcP)
	p = (p - v2/4096) * 6250 / v1
	v1 = float64(c.p9) * p * p / 2147483648
	v2 = p * float64(c.p8) / 32768
	return p + (v1+v2+float64(c.p7))/16
}

func doubleHumidity(c calibration, adcH, tFine int32) float64 {
	v := float64(tFine) - 76800
	v = (float64(adcH) - (float64(c.h4)*64 + float64(c.h5)/16384*v)) *
		(float64(c.h2) / 65536 * (1 + float64(c.h6)/67108864*v*(1+float64(c.h3)/67108864*v)))
	v *= 1 - float64(c.h1)*v/524288
	return min(max(v, 0), 100)
}

func TestQuantitiesMatchSense(t *testing.T) {
	const addr = 0x76
	bus := &i2ctest.Playback{Ops: slices.Concat(initOps(addr), senseOps(addr, exampleData))}
	d, err := newDev(bus, addr, nil, (&recorder{}).wait)
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.Sense(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	units := map[string]string{"temperature": "Cel", "humidity": "%RH", "pressure": "Pa"}
	q := d.Quantities()
	if len(q) != len(got) {
		t.Fatalf("Quantities %v, Sense %v", q, got)
	}
	for _, q := range q {
		if _, ok := got[q.Name]; !ok || units[q.Name] != q.Unit {
			t.Errorf("quantity %+v: in Sense %v, want unit %q", q, ok, units[q.Name])
		}
	}
	if s := d.String(); s != "BME280{playback(118)}" {
		t.Errorf("String() = %q", s)
	}
}

func TestPublicNew(t *testing.T) {
	bus := &i2ctest.Playback{Ops: initOps(0x76)}
	d, err := New(bus, 0x76, nil) // waits the real 2 ms start-up
	if err != nil || d == nil {
		t.Fatalf("New: %v", err)
	}
	if err := bus.Close(); err != nil {
		t.Error(err)
	}
}

func TestPressureDivisionGuard(t *testing.T) {
	c := exampleCal
	c.p1 = 0 // a blank NVM: the reference returns 0 instead of dividing by zero
	if got := c.pressure(415148, 128422); got != 0 {
		t.Errorf("pressure with dig_P1 = 0: %d, want 0", got)
	}
}

func TestSettingStrings(t *testing.T) {
	tests := map[Oversampling]string{O1x: "1x", O2x: "2x", O4x: "4x", O8x: "8x", O16x: "16x", 0: "Oversampling(0)", 6: "Oversampling(6)"}
	for o, want := range tests {
		if got := o.String(); got != want {
			t.Errorf("Oversampling(%d).String() = %q, want %q", uint8(o), got, want)
		}
	}
}
