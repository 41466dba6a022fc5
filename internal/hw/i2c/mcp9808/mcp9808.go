// Package mcp9808 drives the Microchip MCP9808 digital temperature sensor
// (datasheet DS25095) over I²C.
//
// The chip converts continuously and holds the latest result in the
// ambient temperature register, so a measurement is one register read.
// New checks the manufacturer and device IDs first: the MCP9808 shares its
// address range with other JEDEC temperature sensors and EEPROM-like parts,
// and reading their registers as temperatures would give plausible nonsense.
package mcp9808

import (
	"context"
	"errors"
	"fmt"

	"github.com/openhal/gateway/internal/hw/sensor"

	"periph.io/x/conn/v3/i2c"
)

// ErrWrongID is wrapped by New when the chip at the address does not
// identify itself as an MCP9808.
var ErrWrongID = errors.New("not an MCP9808")

// Resolution is the conversion resolution; a finer one takes longer (tCONV,
// typical, DS25095 Table 1-1) and so updates the temperature less often.
type Resolution uint8

const (
	// Sixteenth is 0.0625 °C, tCONV 250 ms: the power-up default.
	Sixteenth Resolution = iota
	// Eighth is 0.125 °C, tCONV 130 ms.
	Eighth
	// Quarter is 0.25 °C, tCONV 65 ms.
	Quarter
	// Half is 0.5 °C, tCONV 30 ms.
	Half
)

// Opts configures the chip. The zero value keeps the power-up resolution.
type Opts struct {
	Resolution Resolution
}

const (
	regAmbient    = 0x05
	regManufID    = 0x06
	regDeviceID   = 0x07
	regResolution = 0x08

	manufID  = 0x0054
	deviceID = 0x04 // upper byte; the lower byte is the revision
)

// Dev is one MCP9808.
type Dev struct {
	c i2c.Dev
}

var _ sensor.Sensor = (*Dev)(nil)

// New checks that the chip at addr (0x18..0x1F) is an MCP9808 and sets its
// resolution (nil opts: the zero Opts).
func New(b i2c.Bus, addr uint16, opts *Opts) (*Dev, error) {
	o := Opts{}
	if opts != nil {
		o = *opts
	}
	if addr < 0x18 || addr > 0x1F {
		return nil, fmt.Errorf("mcp9808: address %#x: an MCP9808 answers at 0x18..0x1f", addr)
	}
	if o.Resolution > Half {
		return nil, fmt.Errorf("mcp9808: unknown resolution %d", o.Resolution)
	}
	d := &Dev{c: i2c.Dev{Bus: b, Addr: addr}}
	if err := d.identify(); err != nil {
		return nil, err
	}
	// The resolution register holds 0 for 0.5 °C up to 3 for 0.0625 °C.
	if err := d.c.Tx([]byte{regResolution, byte(Half - o.Resolution)}, nil); err != nil {
		return nil, fmt.Errorf("mcp9808: write resolution: %w", err)
	}
	return d, nil
}

func (d *Dev) identify() error {
	id, err := d.read16(regManufID)
	if err != nil {
		return fmt.Errorf("mcp9808: read manufacturer ID: %w", err)
	}
	if id != manufID {
		return fmt.Errorf("mcp9808: manufacturer ID %#04x, want %#04x: %w", id, manufID, ErrWrongID)
	}
	if id, err = d.read16(regDeviceID); err != nil {
		return fmt.Errorf("mcp9808: read device ID: %w", err)
	}
	if id>>8 != deviceID {
		return fmt.Errorf("mcp9808: device ID %#02x (revision %#02x), want %#02x: %w", id>>8, id&0xFF, deviceID, ErrWrongID)
	}
	return nil
}

func (d *Dev) read16(reg byte) (uint16, error) {
	var b [2]byte
	if err := d.c.Tx([]byte{reg}, b[:]); err != nil {
		return 0, err
	}
	return uint16(b[0])<<8 | uint16(b[1]), nil
}

// Quantities implements sensor.Sensor.
func (d *Dev) Quantities() []sensor.Quantity { return Quantities() }

// Quantities are what the sensor measures, known without the chip: the
// gateway describes a sensor that does not answer yet.
func Quantities() []sensor.Quantity {
	return []sensor.Quantity{{Name: "temperature", Unit: "Cel"}}
}

// Sense reads the latest conversion. The read is one short I²C transfer,
// which the bus does not let ctx interrupt; ctx is checked before it.
func (d *Dev) Sense(ctx context.Context) (map[string]float64, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("mcp9808: read temperature: %w", err)
	}
	v, err := d.read16(regAmbient)
	if err != nil {
		return nil, fmt.Errorf("mcp9808: read temperature: %w", err)
	}
	return map[string]float64{"temperature": celsius(v)}, nil
}

// celsius decodes the ambient temperature register (DS25095 Register 5-4):
// bits 15..13 are alert flags (TA ≥ TCRIT, > TUPPER, < TLOWER), bit 12 the
// sign, bits 11..0 the magnitude in 1/16 °C. Bits 12..0 are a 13-bit two's
// complement number: the datasheet's Example 5-1 takes the negative case
// as (UpperByte & 0x0F)·16 + LowerByte/16 − 256, which is the same value.
func celsius(v uint16) float64 {
	v &= 0x1FFF
	return float64(int16(v<<3)>>3) / 16
}

func (d *Dev) String() string {
	return fmt.Sprintf("MCP9808{%s}", &d.c)
}
