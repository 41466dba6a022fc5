// Package sht3x drives the Sensirion SHT30/SHT31/SHT35 humidity and
// temperature sensors over I²C, from the SHT3x-DIS datasheet.
//
// Each Sense is a single-shot measurement with clock stretching disabled:
// the driver waits the measurement's maximum duration itself instead of
// relying on the bus master to honour a stretched clock, which many
// (the Raspberry Pi's among them) do not do reliably.
package sht3x

import (
	"context"
	"fmt"
	"github.com/openhal/gateway/internal/clock"
	"sync"
	"time"

	"github.com/openhal/gateway/internal/hw/i2c/internal/sensirion"
	"github.com/openhal/gateway/internal/hw/sensor"

	"periph.io/x/conn/v3/i2c"
)

const (
	cmdSoftReset = 0x30A2
	// resetTime covers the datasheet's soft reset time (max 1.5 ms).
	resetTime = 2 * time.Millisecond
)

// ErrCRC reports a measurement word whose CRC did not match: the read was
// corrupted on the bus.
var ErrCRC = sensirion.ErrCRC

// Repeatability trades measurement time and energy against noise
// (datasheet Table 2). The zero value is High.
type Repeatability uint8

// Repeatability settings.
const (
	High Repeatability = iota
	Medium
	Low
)

// single is the single-shot command, clock stretching disabled
// (datasheet Table 9), and the time to wait before reading: the
// datasheet's maximum measurement duration (15, 6 and 4 ms; 15.5, 6.5
// and 4.5 ms in later revisions) rounded up.
var single = [...]struct {
	cmd  uint16
	wait time.Duration
}{
	High:   {0x2400, 16 * time.Millisecond},
	Medium: {0x240B, 7 * time.Millisecond},
	Low:    {0x2416, 5 * time.Millisecond},
}

func (r Repeatability) String() string {
	switch r {
	case High:
		return "high"
	case Medium:
		return "medium"
	case Low:
		return "low"
	}
	return fmt.Sprintf("Repeatability(%d)", uint8(r))
}

// Opts configures the driver. The zero value (and nil) means high
// repeatability.
type Opts struct {
	Repeatability Repeatability
}

// Dev is an SHT3x on an I²C bus. It is safe for concurrent use.
type Dev struct {
	mu   sync.Mutex
	d    i2c.Dev
	rep  Repeatability
	wait func(context.Context, time.Duration) error
}

// New soft-resets the sensor at addr (0x44, or 0x45 with ADDR high) and
// returns it ready to measure.
func New(b i2c.Bus, addr uint16, opts *Opts) (*Dev, error) {
	return newDev(b, addr, opts, clock.SleepReal)
}

// newDev is New with the wait injected, so tests run without sleeping.
func newDev(b i2c.Bus, addr uint16, opts *Opts, wait func(context.Context, time.Duration) error) (*Dev, error) {
	if addr != 0x44 && addr != 0x45 {
		return nil, fmt.Errorf("sht3x: address 0x%02X: want 0x44 or 0x45", addr)
	}
	d := &Dev{d: i2c.Dev{Bus: b, Addr: addr}, wait: wait}
	if opts != nil {
		d.rep = opts.Repeatability
	}
	if int(d.rep) >= len(single) {
		return nil, fmt.Errorf("sht3x: invalid repeatability %d", uint8(d.rep))
	}
	if err := sensirion.Command(&d.d, cmdSoftReset); err != nil {
		return nil, fmt.Errorf("sht3x: soft reset: %w", err)
	}
	if err := d.wait(context.Background(), resetTime); err != nil {
		return nil, fmt.Errorf("sht3x: soft reset: %w", err)
	}
	return d, nil
}

// Quantities implements sensor.Sensor.
func (d *Dev) Quantities() []sensor.Quantity { return Quantities() }

// Quantities are what the sensor measures, known without the chip: the
// gateway describes a sensor that does not answer yet.
func Quantities() []sensor.Quantity {
	return []sensor.Quantity{
		{Name: "temperature", Unit: "Cel"},
		{Name: "humidity", Unit: "%RH"},
	}
}

// Sense implements sensor.Sensor: one single-shot measurement, returning
// temperature (°C) and relative humidity (%RH).
func (d *Dev) Sense(ctx context.Context) (map[string]float64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	m := single[d.rep]
	if err := sensirion.Command(&d.d, m.cmd); err != nil {
		return nil, fmt.Errorf("sht3x: start measurement: %w", err)
	}
	if err := d.wait(ctx, m.wait); err != nil {
		return nil, fmt.Errorf("sht3x: wait for measurement: %w", err)
	}
	// Temperature MSB, LSB, CRC, then humidity MSB, LSB, CRC. A sensor
	// still measuring NACKs the read header, which the bus reports.
	var b [6]byte
	if err := d.d.Tx(nil, b[:]); err != nil {
		return nil, fmt.Errorf("sht3x: read measurement: %w", err)
	}
	w, err := sensirion.Words(b[:], "temperature", "humidity")
	if err != nil {
		return nil, fmt.Errorf("sht3x: read measurement: %w", err)
	}
	return map[string]float64{
		"temperature": sensirion.Celsius(w[0]),
		"humidity":    humidity(w[1]),
	}, nil
}

// humidity converts a raw humidity word to %RH (datasheet §4.13):
// RH = 100·S/(2¹⁶-1).
func humidity(s uint16) float64 {
	return 100 * float64(s) / 65535
}

// String implements fmt.Stringer.
func (d *Dev) String() string {
	return fmt.Sprintf("SHT3x{%s}", &d.d)
}

var _ sensor.Sensor = (*Dev)(nil)
