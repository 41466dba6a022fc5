// Package sht4x drives the Sensirion SHT40/SHT41/SHT43/SHT45 humidity and
// temperature sensors over I²C, from the SHT4x datasheet.
//
// The SHT4x has no registers and no clock stretching: a one-byte command
// starts a measurement, the master waits its duration and then reads six
// bytes (two CRC-protected words).
package sht4x

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
	cmdSoftReset = 0x94
	cmdSerial    = 0x89
	// resetTime covers the datasheet's soft reset time (max 1 ms).
	resetTime = 2 * time.Millisecond
	// serialTime is the wait between the serial number command and its
	// read, as Sensirion's own driver waits.
	serialTime = 10 * time.Millisecond
)

// ErrCRC reports a word whose CRC did not match: the read was corrupted on
// the bus.
var ErrCRC = sensirion.ErrCRC

// Precision trades measurement time against noise (datasheet Table 4,
// "repeatability"). The zero value is High.
type Precision uint8

// Precision settings.
const (
	High Precision = iota
	Medium
	Low
)

// measure is the command and the wait before reading: the datasheet's
// maximum durations (8.3, 4.5 and 1.6 ms) with a margin.
var measure = [...]struct {
	cmd  byte
	wait time.Duration
}{
	High:   {0xFD, 10 * time.Millisecond},
	Medium: {0xF6, 5 * time.Millisecond},
	Low:    {0xE0, 2 * time.Millisecond},
}

func (p Precision) String() string {
	switch p {
	case High:
		return "high"
	case Medium:
		return "medium"
	case Low:
		return "low"
	}
	return fmt.Sprintf("Precision(%d)", uint8(p))
}

// Opts configures the driver. The zero value (and nil) means high
// precision.
type Opts struct {
	Precision Precision
}

// Dev is an SHT4x on an I²C bus. It is safe for concurrent use.
type Dev struct {
	mu     sync.Mutex
	d      i2c.Dev
	prec   Precision
	serial uint32
	wait   func(context.Context, time.Duration) error
}

// New soft-resets the sensor at addr (0x44; 0x45 or 0x46 for the -B and
// -C variants) and reads its serial number, which proves a CRC-clean
// conversation with the part before the first measurement.
func New(b i2c.Bus, addr uint16, opts *Opts) (*Dev, error) {
	return newDev(b, addr, opts, clock.SleepReal)
}

// newDev is New with the wait injected, so tests run without sleeping.
func newDev(b i2c.Bus, addr uint16, opts *Opts, wait func(context.Context, time.Duration) error) (*Dev, error) {
	if addr < 0x44 || addr > 0x46 {
		return nil, fmt.Errorf("sht4x: address 0x%02X: want 0x44, 0x45 or 0x46", addr)
	}
	d := &Dev{d: i2c.Dev{Bus: b, Addr: addr}, wait: wait}
	if opts != nil {
		d.prec = opts.Precision
	}
	if int(d.prec) >= len(measure) {
		return nil, fmt.Errorf("sht4x: invalid precision %d", uint8(d.prec))
	}
	ctx := context.Background()
	if err := d.d.Tx([]byte{cmdSoftReset}, nil); err != nil {
		return nil, fmt.Errorf("sht4x: soft reset: %w", err)
	}
	if err := d.wait(ctx, resetTime); err != nil {
		return nil, fmt.Errorf("sht4x: soft reset: %w", err)
	}
	w, err := d.command(ctx, cmdSerial, serialTime, "serial high", "serial low")
	if err != nil {
		return nil, fmt.Errorf("sht4x: read serial number: %w", err)
	}
	d.serial = uint32(w[0])<<16 | uint32(w[1])
	return d, nil
}

// command sends cmd, waits, and reads back two CRC-checked words.
func (d *Dev) command(ctx context.Context, cmd byte, wait time.Duration, names ...string) ([]uint16, error) {
	if err := d.d.Tx([]byte{cmd}, nil); err != nil {
		return nil, fmt.Errorf("write command: %w", err)
	}
	if err := d.wait(ctx, wait); err != nil {
		return nil, err
	}
	b := make([]byte, 3*len(names))
	if err := d.d.Tx(nil, b); err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	return sensirion.Words(b, names...)
}

// Serial returns the serial number read by New.
func (d *Dev) Serial() uint32 {
	return d.serial
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

// Sense implements sensor.Sensor: one measurement, returning temperature
// (°C) and relative humidity (%RH).
func (d *Dev) Sense(ctx context.Context) (map[string]float64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	m := measure[d.prec]
	w, err := d.command(ctx, m.cmd, m.wait, "temperature", "humidity")
	if err != nil {
		return nil, fmt.Errorf("sht4x: measure: %w", err)
	}
	return map[string]float64{
		"temperature": sensirion.Celsius(w[0]),
		"humidity":    humidity(w[1]),
	}, nil
}

// humidity converts a raw word to %RH: RH = -6 + 125·S/(2¹⁶-1). The
// formula reaches beyond 0..100 %RH; the datasheet says to crop to that
// physical range.
func humidity(s uint16) float64 {
	return min(max(-6+125*float64(s)/65535, 0), 100)
}

// String implements fmt.Stringer.
func (d *Dev) String() string {
	return fmt.Sprintf("SHT4x{%s}", &d.d)
}

var _ sensor.Sensor = (*Dev)(nil)
