package homeassistant

import (
	"fmt"
	"math"

	"github.com/openhal/gateway/device"
)

// modbusOf maps an x.modbus device (a coil, a discrete input or a value
// in registers) by its schema and access, as the same value of another
// kind would be: a coil is a switch, a discrete input a binary_sensor, a
// read register a sensor with its unit's class, a holding register a
// number, a status word (a string with an enum) an enum sensor or, when
// written, a select.
func (m mapper) modbusOf(d device.Descriptor) ([]component, string) {
	s := d.Schema
	switch {
	case s.Type == device.TypeBoolean && d.Access.CanWrite():
		return []component{m.switchOf(d)}, ""
	case s.Type == device.TypeBoolean:
		return []component{m.binarySensorOf(d)}, ""
	case isNumeric(s.Type) && d.Access.CanWrite():
		return m.modbusNumber(d)
	case isNumeric(s.Type):
		return []component{m.numericSensor(d, "", s, "", "")}, ""
	case s.Type == device.TypeString:
		return m.enumOf(d)
	}
	return nil, fmt.Sprintf("an x.modbus with a %q value has no entity", s.Type)
}

// modbusNumber is a number over the schema's range. A bound the schema
// does not give is the register's own (an int16 holds -32768..32767,
// scaled), and the entity is then a box: a slider over 65536 steps is no
// use. A float register has no such bound, so it needs both.
func (m mapper) modbusNumber(d device.Descriptor) ([]component, string) {
	s := d.Schema
	lo, hi, ok := registerRange(d.Modbus)
	mode := "slider"
	if s.Minimum == nil || s.Maximum == nil {
		if !ok {
			return nil, "an x.modbus number that is written needs a minimum and a maximum (its register's type has no bounds of its own)"
		}
		mode = "box"
	}
	if s.Minimum != nil {
		lo = *s.Minimum
	}
	if s.Maximum != nil {
		hi = *s.Maximum
	}
	if lo >= hi {
		return nil, "an x.modbus number without a range (minimum < maximum) has no entity"
	}
	c := m.base(PlatformNumber, d, "", nameOf(d))
	c.CommandTopic = m.t.Set(m.gw, d.ID)
	c.Min, c.Max = ptr(lo), ptr(hi)
	c.Step = ptr(modbusStep(d, lo, hi))
	c.Unit = quantityOf(s.Unit).unit
	c.Mode = mode
	return []component{c}, ""
}

// integerRanges are the raw ranges of the integer register types. A
// 64-bit bound is the nearest float64, which is what a JSON number holds.
var integerRanges = map[string][2]float64{
	"int16":  {math.MinInt16, math.MaxInt16},
	"uint16": {0, math.MaxUint16},
	"int32":  {math.MinInt32, math.MaxInt32},
	"uint32": {0, math.MaxUint32},
	"int64":  {math.MinInt64, math.MaxInt64},
	"uint64": {0, math.MaxUint64},
}

// registerRange is the range of values an integer register holds, after
// its scale and offset; ok is false for a float, or without a register.
func registerRange(r *device.ModbusRegister) (lo, hi float64, ok bool) {
	if r == nil {
		return 0, 0, false
	}
	raw, ok := integerRanges[r.Type]
	if !ok {
		return 0, 0, false
	}
	scale := scaleOf(r)
	lo, hi = raw[0]*scale+r.Offset, raw[1]*scale+r.Offset
	return min(lo, hi), max(lo, hi), true
}

// scaleOf is a register's scale; absent, 1.
func scaleOf(r *device.ModbusRegister) float64 {
	if r.Scale == 0 {
		return 1
	}
	return r.Scale
}

// modbusStep is the step of an integer register: one raw unit, scaled
// (a speed in 0.01 Hz steps by 0.01), at least Home Assistant's 0.001;
// a value between two steps cannot be written. A float register steps as
// a pwm does, by a hundredth of its range rounded down to a power of ten.
func modbusStep(d device.Descriptor, lo, hi float64) float64 {
	if r := d.Modbus; r != nil {
		if _, ok := integerRanges[r.Type]; ok {
			return max(math.Abs(scaleOf(r)), 0.001)
		}
	}
	return stepOf(device.Schema{Type: d.Schema.Type, Minimum: &lo, Maximum: &hi})
}

// enumOf is a status word: its value is one of the enum's strings. Read,
// it is a sensor of device class enum with the strings as its options
// (Home Assistant refuses options beside a unit or a state class, and
// without class enum); written, a select. The state is a JSON string,
// read with value_json, and a choice is sent as one with tojson.
func (m mapper) enumOf(d device.Descriptor) ([]component, string) {
	var options []string
	for _, e := range d.Schema.Enum {
		o, ok := e.(string)
		if !ok {
			return nil, fmt.Sprintf("an x.modbus enum of %v has no entity: its options must be strings", d.Schema.Enum)
		}
		options = append(options, o)
	}
	if len(options) == 0 {
		return nil, "an x.modbus string without an enum has no entity"
	}
	platform := PlatformSensor
	if d.Access.CanWrite() {
		platform = PlatformSelect
	}
	c := m.base(platform, d, "", nameOf(d))
	c.ValueTemplate = "{{ value_json }}"
	c.Options = options
	if platform == PlatformSensor {
		c.DeviceClass = "enum"
		return []component{c}, ""
	}
	c.CommandTopic = m.t.Set(m.gw, d.ID)
	c.CommandTemplate = "{{ value | tojson }}"
	return []component{c}, ""
}
