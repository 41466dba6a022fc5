// Package bme280 drives the Bosch BME280 temperature, humidity and pressure
// sensor over I²C, from the datasheet BST-BME280-DS002.
//
// The sensor is used in forced mode: each Sense starts one measurement,
// waits for it and reads it, and the sensor sleeps in between. That keeps
// self-heating negligible at the gateway's polling rates and makes every
// reading fresh.
package bme280

import (
	"context"
	"errors"
	"fmt"
	"github.com/openhal/gateway/internal/clock"
	"sync"
	"time"

	"github.com/openhal/gateway/internal/hw/sensor"

	"periph.io/x/conn/v3/i2c"
)

// Registers (datasheet §5.3, Table 18).
const (
	regCalib1   = 0x88 // 0x88..0xA1
	regChipID   = 0xD0
	regReset    = 0xE0
	regCalib2   = 0xE1 // 0xE1..0xE7
	regCtrlHum  = 0xF2
	regStatus   = 0xF3
	regCtrlMeas = 0xF4
	regConfig   = 0xF5
	regData     = 0xF7 // 0xF7..0xFE: press[19:0], temp[19:0], hum[15:0]

	dataLen = 0xFE - regData + 1
)

const (
	chipIDBME280 = 0x60
	chipIDBMP280 = 0x58
	resetWord    = 0xB6 // written to 0xE0, anything else is ignored

	statusMeasuring = 1 << 3 // a conversion is running
	statusImUpdate  = 1 << 0 // NVM data are being copied to image registers

	modeForced = 0b01

	// startup is the datasheet's start-up time (Table 1, t_startup max
	// 2 ms), which a soft reset goes through as well.
	startup = 2 * time.Millisecond
	// poll is the step between status reads when the sensor is still busy
	// after the time it should have needed, and maxPolls bounds them.
	poll     = time.Millisecond
	maxPolls = 10
)

// ErrWrongChip reports a chip at the address that is not a BME280.
var ErrWrongChip = errors.New("wrong chip id")

// Oversampling is a measurement's oversampling setting; its value is the
// register code (datasheet Tables 20, 22, 23). More oversampling means
// less noise and a longer measurement. The zero value selects ×1.
type Oversampling uint8

// Oversampling settings. Skipping a measurement (code 0) is not offered:
// the driver always reports all three quantities.
const (
	O1x  Oversampling = 1
	O2x  Oversampling = 2
	O4x  Oversampling = 3
	O8x  Oversampling = 4
	O16x Oversampling = 5
)

// factor is the number of samples the setting takes.
func (o Oversampling) factor() int { return 1 << (o - 1) }

func (o Oversampling) String() string {
	if o < O1x || o > O16x {
		return fmt.Sprintf("Oversampling(%d)", uint8(o))
	}
	return fmt.Sprintf("%dx", o.factor())
}

// Filter is the IIR filter coefficient applied to temperature and
// pressure (datasheet §3.4.4, Table 28); its value is the register code.
type Filter uint8

// Filter settings.
const (
	FilterOff Filter = 0
	Filter2   Filter = 1
	Filter4   Filter = 2
	Filter8   Filter = 3
	Filter16  Filter = 4
)

// Opts configures the sensor. The zero value (and nil) means oversampling
// ×1 for each quantity and no filter: the datasheet's "weather
// monitoring" setting.
type Opts struct {
	Temperature Oversampling
	Pressure    Oversampling
	Humidity    Oversampling
	Filter      Filter
}

// withDefaults fills unset oversampling and checks the values fit their
// register fields.
func (o Opts) withDefaults() (Opts, error) {
	for _, p := range []*Oversampling{&o.Temperature, &o.Pressure, &o.Humidity} {
		if *p == 0 {
			*p = O1x
		}
		if *p > O16x {
			return o, fmt.Errorf("invalid oversampling %d", uint8(*p))
		}
	}
	if o.Filter > Filter16 {
		return o, fmt.Errorf("invalid filter %d", uint8(o.Filter))
	}
	return o, nil
}

// measureTime is the datasheet's maximum measurement time (§9.1):
// 1.25 ms + 2.3 ms·T + (2.3 ms·P + 0.575 ms) + (2.3 ms·H + 0.575 ms),
// with T, P, H the oversampling factors.
func (o Opts) measureTime() time.Duration {
	us := 1250 + 2300*o.Temperature.factor() +
		2300*o.Pressure.factor() + 575 +
		2300*o.Humidity.factor() + 575
	return time.Duration(us) * time.Microsecond
}

// Dev is a BME280 on an I²C bus. It is safe for concurrent use.
type Dev struct {
	mu       sync.Mutex
	d        i2c.Dev
	cal      calibration
	ctrlMeas byte          // osrs_t, osrs_p; the mode bits are added per measurement
	measure  time.Duration // the maximum time one measurement takes
	wait     func(context.Context, time.Duration) error
}

// New checks the chip at addr (0x76 or 0x77, set by the SDO pin) is a
// BME280, resets it, reads its calibration and configures it per opts
// (nil for the defaults), leaving it asleep until the first Sense.
func New(b i2c.Bus, addr uint16, opts *Opts) (*Dev, error) {
	return newDev(b, addr, opts, clock.SleepReal)
}

// newDev is New with the wait between commands injected, so tests run
// without sleeping.
func newDev(b i2c.Bus, addr uint16, opts *Opts, wait func(context.Context, time.Duration) error) (*Dev, error) {
	if addr != 0x76 && addr != 0x77 {
		return nil, fmt.Errorf("bme280: address 0x%02X: want 0x76 or 0x77", addr)
	}
	var o Opts
	if opts != nil {
		o = *opts
	}
	o, err := o.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("bme280: %w", err)
	}
	d := &Dev{
		d:        i2c.Dev{Bus: b, Addr: addr},
		ctrlMeas: byte(o.Temperature)<<5 | byte(o.Pressure)<<2,
		measure:  o.measureTime(),
		wait:     wait,
	}
	if err := d.init(o); err != nil {
		return nil, err
	}
	return d, nil
}

// init runs the start-up sequence: identify, reset, calibration, config.
func (d *Dev) init(o Opts) error {
	ctx := context.Background()
	var id [1]byte
	if err := d.d.Tx([]byte{regChipID}, id[:]); err != nil {
		return fmt.Errorf("bme280: read chip id: %w", err)
	}
	switch id[0] {
	case chipIDBME280:
	case chipIDBMP280:
		return fmt.Errorf("bme280: %w 0x%02X: a BMP280, which has no humidity sensor", ErrWrongChip, id[0])
	default:
		return fmt.Errorf("bme280: %w 0x%02X, want 0x%02X", ErrWrongChip, id[0], chipIDBME280)
	}
	if err := d.d.Tx([]byte{regReset, resetWord}, nil); err != nil {
		return fmt.Errorf("bme280: soft reset: %w", err)
	}
	if err := d.wait(ctx, startup); err != nil {
		return fmt.Errorf("bme280: soft reset: %w", err)
	}
	if err := d.waitStatus(ctx, statusImUpdate); err != nil {
		return fmt.Errorf("bme280: soft reset: %w", err)
	}
	var a [calib1Len]byte
	var b [calib2Len]byte
	if err := d.d.Tx([]byte{regCalib1}, a[:]); err != nil {
		return fmt.Errorf("bme280: read calibration: %w", err)
	}
	if err := d.d.Tx([]byte{regCalib2}, b[:]); err != nil {
		return fmt.Errorf("bme280: read calibration: %w", err)
	}
	d.cal = parseCalibration(a, b)
	// ctrl_hum takes effect only at the next write of ctrl_meas
	// (datasheet §5.4.3), so it goes first; config is written while the
	// sensor sleeps, where writes to it are sure to be taken.
	writes := []struct {
		name     string
		reg, val byte
	}{
		{"ctrl_hum", regCtrlHum, byte(o.Humidity)},
		{"config", regConfig, byte(o.Filter) << 2},
		{"ctrl_meas", regCtrlMeas, d.ctrlMeas},
	}
	for _, w := range writes {
		if err := d.d.Tx([]byte{w.reg, w.val}, nil); err != nil {
			return fmt.Errorf("bme280: configure: write %s: %w", w.name, err)
		}
	}
	return nil
}

// waitStatus reads the status register until the bits in mask are clear,
// waiting poll between reads.
func (d *Dev) waitStatus(ctx context.Context, mask byte) error {
	var st [1]byte
	for range maxPolls {
		if err := d.d.Tx([]byte{regStatus}, st[:]); err != nil {
			return fmt.Errorf("read status: %w", err)
		}
		if st[0]&mask == 0 {
			return nil
		}
		if err := d.wait(ctx, poll); err != nil {
			return err
		}
	}
	return fmt.Errorf("status 0x%02X still busy after %d reads", st[0], maxPolls)
}

// Quantities implements sensor.Sensor.
func (d *Dev) Quantities() []sensor.Quantity { return Quantities() }

// Quantities are what the sensor measures, known without the chip: the
// gateway describes a sensor that does not answer yet.
func Quantities() []sensor.Quantity {
	return []sensor.Quantity{
		{Name: "temperature", Unit: "Cel"},
		{Name: "humidity", Unit: "%RH"},
		{Name: "pressure", Unit: "Pa"},
	}
}

// Sense implements sensor.Sensor: it forces one measurement, waits for
// it, and returns temperature (°C), humidity (%RH) and pressure (Pa).
func (d *Dev) Sense(ctx context.Context) (map[string]float64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.d.Tx([]byte{regCtrlMeas, d.ctrlMeas | modeForced}, nil); err != nil {
		return nil, fmt.Errorf("bme280: start measurement: %w", err)
	}
	if err := d.wait(ctx, d.measure); err != nil {
		return nil, fmt.Errorf("bme280: wait for measurement: %w", err)
	}
	if err := d.waitStatus(ctx, statusMeasuring); err != nil {
		return nil, fmt.Errorf("bme280: wait for measurement: %w", err)
	}
	var raw [dataLen]byte
	if err := d.d.Tx([]byte{regData}, raw[:]); err != nil {
		return nil, fmt.Errorf("bme280: read measurement: %w", err)
	}
	return d.compensate(raw)
}

// compensate turns the burst read of 0xF7..0xFE into physical values.
func (d *Dev) compensate(raw [dataLen]byte) (map[string]float64, error) {
	adcP := int32(raw[0])<<12 | int32(raw[1])<<4 | int32(raw[2])>>4
	adcT := int32(raw[3])<<12 | int32(raw[4])<<4 | int32(raw[5])>>4
	adcH := int32(raw[6])<<8 | int32(raw[7])
	// 0x80000 / 0x8000 are what the data registers hold after reset and
	// for a skipped measurement (datasheet Table 18, §5.4.7–5.4.9):
	// compensating them would give a plausible-looking but false reading.
	if adcT == 0x80000 || adcP == 0x80000 || adcH == 0x8000 {
		return nil, fmt.Errorf("bme280: read measurement: no data (raw % X)", raw[:])
	}
	t, tFine := d.cal.temperature(adcT)
	return map[string]float64{
		"temperature": float64(t) / 100,
		"humidity":    float64(d.cal.humidity(adcH, tFine)) / 1024,
		"pressure":    float64(d.cal.pressure(adcP, tFine)) / 256,
	}, nil
}

// String implements fmt.Stringer.
func (d *Dev) String() string {
	return fmt.Sprintf("BME280{%s}", &d.d)
}

var _ sensor.Sensor = (*Dev)(nil)
