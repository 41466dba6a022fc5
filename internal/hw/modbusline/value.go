package modbusline

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/hw/modbus"
)

// Point is where a device's value sits on its unit and how it is made of
// the unit's bits or registers.
type Point struct {
	Unit    byte
	Table   modbus.Table
	Address uint16 // the first coil or register, 0-based as on the wire
	Type    modbus.Type
	Swap    modbus.Swap
	// Scale and Offset make the value of the raw number:
	// raw×Scale+Offset. A Scale of 0 is taken as 1.
	Scale, Offset float64
	// Enum names an integer's raw values; the value is then the label,
	// a string.
	Enum map[int64]string
	// Interval is how often the value is read.
	Interval time.Duration
}

// Words is how many coils or registers the value spans.
func (p Point) Words() int {
	if p.Table.Bits() {
		return 1
	}
	return p.Type.Words()
}

func (p Point) scale() float64 {
	if p.Scale == 0 {
		return 1
	}
	return p.Scale
}

// registerValue decodes the value from its registers: a label, or the
// raw number scaled. A raw value the enum does not name is an error (a
// status word the file does not know is not a value of the schema).
func (p Point) registerValue(regs []uint16) (any, error) {
	raw, err := modbus.Decode(p.Type, p.Swap, regs)
	if err != nil {
		return nil, err
	}
	if p.Enum != nil {
		label, ok := p.Enum[int64(raw)]
		if !ok {
			return nil, fmt.Errorf("%s %d of unit %d reads %v, which its enum does not name", p.Table, p.Address, p.Unit, raw)
		}
		return label, nil
	}
	if math.IsNaN(raw) || math.IsInf(raw, 0) {
		return nil, fmt.Errorf("%s %d of unit %d reads %v, not a number", p.Table, p.Address, p.Unit, raw)
	}
	return p.tidy(raw*p.scale() + p.Offset), nil
}

// tidy drops the noise of binary arithmetic from a value: a float32 is
// shown as the shortest decimal that is the same float32 (123.456, not
// 123.45600128173828), and a scaled number to 15 significant digits
// (230.5, not 230.50000000000003).
func (p Point) tidy(v float64) float64 {
	if p.Type == modbus.Float32 && p.scale() == 1 && p.Offset == 0 {
		s := strconv.FormatFloat(v, 'g', -1, 32)
		out, _ := strconv.ParseFloat(s, 64)
		return out
	}
	if p.scale() == 1 && p.Offset == 0 {
		return v
	}
	out, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 15, 64), 64)
	return out
}

// encode returns what a write of v puts on the unit: the coil's state,
// or the registers. The value has passed the schema; an error says why
// the unit cannot hold it (CheckValue's reason and words).
func (p Point) encode(v any) (bit bool, regs []uint16, err error) {
	if p.Table.Bits() {
		b, ok := v.(bool)
		if !ok {
			return false, nil, &device.ValueError{Reason: "wrong_type", Detail: fmt.Sprintf("want a boolean, got %v", v)}
		}
		return b, nil, nil
	}
	raw, err := p.rawOf(v)
	if err != nil {
		return false, nil, err
	}
	regs, err = modbus.Encode(p.Type, p.Swap, raw)
	if err != nil {
		return false, nil, &device.ValueError{Reason: "out_of_range", Detail: err.Error()}
	}
	return false, regs, nil
}

// rawOf is the raw number of a label or a scaled value. A value between
// two steps of an integer's scale is refused, not rounded: a setpoint of
// 12.345 Hz on a register of 0.01 Hz would be applied as another value
// than the one asked and audited.
func (p Point) rawOf(v any) (float64, error) {
	if p.Enum != nil {
		label, ok := v.(string)
		for raw, l := range p.Enum {
			if ok && l == label {
				return float64(raw), nil
			}
		}
		return 0, &device.ValueError{Reason: "out_of_range", Detail: fmt.Sprintf("%v is not one of the enum's labels", v)}
	}
	x, ok := v.(float64)
	if !ok {
		return 0, &device.ValueError{Reason: "wrong_type", Detail: fmt.Sprintf("want a number, got %v", v)}
	}
	raw := (x - p.Offset) / p.scale()
	if p.Type == modbus.Float32 || p.Type == modbus.Float64 {
		return raw, nil
	}
	whole := math.Round(raw)
	if math.Abs(raw-whole) > 1e-6*math.Max(1, math.Abs(raw)) {
		step := strconv.FormatFloat(p.scale(), 'g', -1, 64)
		return 0, &device.ValueError{Reason: "resolution",
			Detail: fmt.Sprintf("%v is between two steps of %s (a %s register holds whole multiples of %s)", x, step, p.Type, step)}
	}
	return whole, nil
}
