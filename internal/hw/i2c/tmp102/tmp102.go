// Package tmp102 drives the TI TMP102 (datasheet SBOS397) and TMP105
// (SLLS648) digital temperature sensors over I²C.
//
// Both keep converting on their own and hold the latest result in the
// temperature register, so a measurement is one register read. They share
// the register map (pointer 0x00 temperature, 0x01 configuration) and the
// 12-bit data format; they differ in the configuration register: 16 bits on
// the TMP102 with a 13-bit extended mode (EM), 8 bits on the TMP105 with a
// selectable resolution of 9 to 12 bits (R1:R0).
package tmp102

import (
	"context"
	"fmt"

	"github.com/openhal/gateway/internal/hw/sensor"

	"periph.io/x/conn/v3/i2c"
)

// Model is the chip on the bus.
type Model int

const (
	// TMP102 answers at 0x48..0x4B (ADD0 to GND, V+, SDA, SCL).
	TMP102 Model = iota
	// TMP105 answers at 0x48 or 0x49 (A0). The driver accepts 0x48..0x4F
	// so that register-compatible parts with three address pins (TMP75,
	// TMP175) can use this model too.
	TMP105
)

func (m Model) String() string {
	switch m {
	case TMP102:
		return "TMP102"
	case TMP105:
		return "TMP105"
	}
	return fmt.Sprintf("Model(%d)", int(m))
}

// Opts configures the chip. The zero value is a TMP102 in normal (12-bit)
// mode.
type Opts struct {
	Model Model
	// Extended selects the TMP102's 13-bit extended mode, which reaches
	// +150 °C instead of +128 °C. TMP102 only.
	Extended bool
	// Bits is the TMP105's resolution, 9 to 12: each bit more halves the
	// step (0.5 to 0.0625 °C) and doubles the conversion time. Zero means
	// 12. The TMP102 always converts at 12 bits (13 extended); set 0 or 12.
	Bits int
}

const (
	regTemperature = 0x00
	regConfig      = 0x01

	// First (TMP105: only) configuration byte.
	cfgOS = 1 << 7 // one-shot; written 0 so that it starts nothing
	cfgR  = 3 << 5 // converter resolution R1:R0 (read-only on the TMP102)
	cfgSD = 1 << 0 // shutdown; cleared so that the chip keeps converting
	cfgEM = 1 << 4 // TMP102 second byte: extended mode
)

// Dev is one TMP102 or TMP105.
type Dev struct {
	c     i2c.Dev
	model Model
}

var _ sensor.Sensor = (*Dev)(nil)

// New configures the chip at addr for continuous conversion with the
// resolution opts asks for (nil means the zero Opts). It changes only the
// mode and resolution bits of the configuration register and keeps the
// alert settings that are there.
func New(b i2c.Bus, addr uint16, opts *Opts) (*Dev, error) {
	o := Opts{}
	if opts != nil {
		o = *opts
	}
	if err := o.check(addr); err != nil {
		return nil, err
	}
	d := &Dev{c: i2c.Dev{Bus: b, Addr: addr}, model: o.Model}
	var err error
	if o.Model == TMP102 {
		err = d.configTMP102(o.Extended)
	} else {
		err = d.configTMP105(o.Bits)
	}
	if err != nil {
		return nil, err
	}
	return d, nil
}

func (o *Opts) check(addr uint16) error {
	switch o.Model {
	case TMP102:
		if addr < 0x48 || addr > 0x4B {
			return fmt.Errorf("tmp102: address %#x: a TMP102 answers at 0x48..0x4b", addr)
		}
		if o.Bits != 0 && o.Bits != 12 {
			return fmt.Errorf("tmp102: %d bits: the TMP102 converts at 12 bits (13 extended)", o.Bits)
		}
	case TMP105:
		if addr < 0x48 || addr > 0x4F {
			return fmt.Errorf("tmp102: address %#x: a TMP105 answers at 0x48..0x4f", addr)
		}
		if o.Extended {
			return fmt.Errorf("tmp102: the TMP105 has no extended mode")
		}
		if o.Bits != 0 && (o.Bits < 9 || o.Bits > 12) {
			return fmt.Errorf("tmp102: %d bits: the TMP105 converts at 9 to 12 bits", o.Bits)
		}
	default:
		return fmt.Errorf("tmp102: unknown %v", o.Model)
	}
	return nil
}

// configTMP102 reads the 16-bit configuration register and writes it back
// converting continuously, in normal or extended mode.
func (d *Dev) configTMP102(extended bool) error {
	var c [2]byte
	if err := d.c.Tx([]byte{regConfig}, c[:]); err != nil {
		return fmt.Errorf("tmp102: read configuration: %w", err)
	}
	c[0] &^= cfgOS | cfgSD
	c[1] &^= cfgEM
	if extended {
		c[1] |= cfgEM
	}
	if err := d.c.Tx([]byte{regConfig, c[0], c[1]}, nil); err != nil {
		return fmt.Errorf("tmp102: write configuration: %w", err)
	}
	return nil
}

// configTMP105 reads the 8-bit configuration register and writes it back
// converting continuously at the given resolution.
func (d *Dev) configTMP105(bits int) error {
	if bits == 0 {
		bits = 12
	}
	var c [1]byte
	if err := d.c.Tx([]byte{regConfig}, c[:]); err != nil {
		return fmt.Errorf("tmp102: read TMP105 configuration: %w", err)
	}
	v := c[0]&^(cfgOS|cfgSD|cfgR) | byte(bits-9)<<5
	if err := d.c.Tx([]byte{regConfig, v}, nil); err != nil {
		return fmt.Errorf("tmp102: write TMP105 configuration: %w", err)
	}
	return nil
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
		return nil, fmt.Errorf("tmp102: read temperature: %w", err)
	}
	var b [2]byte
	if err := d.c.Tx([]byte{regTemperature}, b[:]); err != nil {
		return nil, fmt.Errorf("tmp102: read temperature: %w", err)
	}
	return map[string]float64{"temperature": d.celsius(b)}, nil
}

// celsius decodes the temperature register: a left-aligned two's
// complement count of 0.0625 °C, 12 bits wide, or 13 on a TMP102 whose
// last bit (D0) says the conversion was made in extended mode. The chip
// marks each result, so a result converted before a mode change still
// decodes right.
func (d *Dev) celsius(b [2]byte) float64 {
	v := int16(uint16(b[0])<<8 | uint16(b[1]))
	if d.model == TMP102 && b[1]&1 == 1 {
		return float64(v>>3) * 0.0625
	}
	return float64(v>>4) * 0.0625
}

func (d *Dev) String() string {
	return fmt.Sprintf("%v{%s}", d.model, &d.c)
}
