package board

import (
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/openhal/gateway/internal/hw/modbus"
	"github.com/openhal/gateway/internal/hw/serialline"
)

// Bounds of a Modbus line's and device's timing, beyond which a value is
// a typo: a request timeout below 10 ms is shorter than a unit's own
// turnaround, one above a minute holds the line (and a stop) for it.
const (
	minModbusTimeout  = 10 * time.Millisecond
	maxModbusTimeout  = time.Minute
	maxModbusRetries  = 5
	maxModbusFrameGap = time.Second
	minModbusInterval = 10 * time.Millisecond
	maxModbusInterval = 24 * time.Hour
	maxModbusEnum     = 64
)

// modbusLineName is what a line may be called.
var modbusLineName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

// modbusUse is what the Modbus lines and devices checked so far hold.
type modbusUse struct {
	lines    map[string]ModbusLineConfig // the lines that passed their checks
	declared map[string]ModbusLineConfig // all the file's lines
	points   []modbusClaim
}

// modbusClaim is a device's coils or registers on a unit.
type modbusClaim struct {
	id, line string
	unit     int
	table    modbus.Table
	first    int
	last     int
	writable bool
}

// modbusLines checks the lines of modbus:, in name order, and keeps
// those that passed for the devices on them. A serial line claims its
// port as a serial device does.
func (v *validator) modbusLines(c *Config, u *usage) {
	u.modbus = &modbusUse{lines: map[string]ModbusLineConfig{}, declared: c.Modbus}
	for _, name := range slices.Sorted(maps.Keys(c.Modbus)) {
		path, lc := join("modbus", name), c.Modbus[name]
		before := len(v.errs)
		if !modbusLineName.MatchString(name) {
			v.add(path, "%q is not a line name: want lowercase letters, digits, '_' or '-', starting with a letter, at most 32", name)
		}
		switch {
		case lc.Port == "" && lc.TCP == "":
			v.add(path, "want port (a serial line, RTU) or tcp (host:port, Modbus TCP)")
		case lc.Port != "" && lc.TCP != "":
			v.add(path+".tcp", "a line is serial (port) or TCP (tcp), not both")
		case lc.IsTCP():
			v.modbusTCPLine(path, lc)
		default:
			v.modbusRTULine(path, name, lc, u)
		}
		if lc.Timeout != nil && (*lc.Timeout < minModbusTimeout || *lc.Timeout > maxModbusTimeout) {
			v.add(path+".timeout", "want %v to %v, got %v", minModbusTimeout, maxModbusTimeout, *lc.Timeout)
		}
		if lc.Retries != nil && (*lc.Retries < 0 || *lc.Retries > maxModbusRetries) {
			v.add(path+".retries", "want 0 to %d, got %d", maxModbusRetries, *lc.Retries)
		}
		if len(v.errs) == before {
			u.modbus.lines[name] = lc
		}
	}
}

// modbusTCPLine checks a TCP line's address and refuses the serial fields.
func (v *validator) modbusTCPLine(path string, lc ModbusLineConfig) {
	if msg := CheckHostPort(lc.TCPAddr()); msg != "" || strings.HasSuffix(lc.TCPAddr(), ":0") {
		v.add(path+".tcp", "want host:port such as 192.168.1.50:502 (the port is 502 if left out), got %q", lc.TCP)
	}
	set := []bool{lc.Baud != nil, lc.DataBits != nil, lc.Parity != "", lc.StopBits != "", lc.FrameGap != nil, lc.DE != ""}
	for i, f := range []string{"baud", "dataBits", "parity", "stopBits", "frameGap", "de"} {
		if set[i] {
			v.add(path+"."+f, "a TCP line has no %s (it is a serial line's)", f)
		}
	}
}

// modbusRTULine checks a serial line's port and framing, and claims the
// port.
func (v *validator) modbusRTULine(path, name string, lc ModbusLineConfig, u *usage) {
	if lc.Baud == nil {
		v.add(path+".baud", "required (the units' bits per second, such as 9600 or 19200)")
	}
	if lc.DataBits != nil && *lc.DataBits != 8 {
		v.add(path+".dataBits", "want 8, RTU's character (7 is Modbus ASCII's, which the gateway does not speak), got %d", *lc.DataBits)
	}
	if lc.Parity != "" && lc.Parity != "none" && lc.Parity != "even" && lc.Parity != "odd" {
		v.add(path+".parity", "want none, even or odd, got %q", lc.Parity)
	}
	if lc.Baud != nil && (*lc.Baud <= 0 || *lc.Baud > serialline.MaxBaud) {
		v.add(path+".baud", "want 1 to %d, got %d", serialline.MaxBaud, *lc.Baud)
	}
	if lc.StopBits != "" && lc.StopBits != "1" && lc.StopBits != "2" {
		v.add(path+".stopBits", "want 1 or 2, got %q", lc.StopBits)
	}
	if !filepath.IsAbs(lc.Port) {
		v.add(path+".port", "%q: not absolute (want /dev/ttyUSB0 or /dev/serial/by-id/...)", lc.Port)
	}
	if lc.FrameGap != nil && (*lc.FrameGap <= 0 || *lc.FrameGap > maxModbusFrameGap) {
		v.add(path+".frameGap", "want a positive duration up to %v, got %v", maxModbusFrameGap, *lc.FrameGap)
	}
	if _, ok := modbus.ParseDE(lc.DE); lc.DE != "" && !ok {
		v.add(path+".de", "want none (the adapter switches its driver itself), rts or rts-low, got %q", lc.DE)
	}
	if !filepath.IsAbs(lc.Port) {
		return
	}
	if other, dup := u.ports[lc.Port]; dup {
		v.add(path+".port", "%s is also used by %s", lc.Port, other)
		return
	}
	u.ports[lc.Port] = "modbus." + name
}

// modbusDevice checks a Modbus device: its line, unit, table, address
// and type, how its value is scaled or named, and that no other device
// writes its registers.
func (v *validator) modbusDevice(path, id string, dc DeviceConfig, u *usage) {
	lc, lineOK := v.modbusLineOf(path, dc, u)
	table, tableOK := modbus.ParseTable(dc.Table)
	switch {
	case dc.Table == "":
		v.add(path+".table", "required (coil, discrete, input or holding)")
	case !tableOK:
		v.add(path+".table", "unknown table %q (want coil, discrete, input or holding)", dc.Table)
	}
	unitOK := v.modbusSlave(path+".slave", dc.Slave, lc, lineOK)
	typ, typeOK := v.modbusType(path, dc, table, tableOK)
	addrOK := v.modbusAddress(path+".address", dc.Address, typ, typeOK)
	if typeOK {
		v.modbusValue(path, dc, typ)
	}
	if dc.Interval != nil && (*dc.Interval < minModbusInterval || *dc.Interval > maxModbusInterval) {
		v.add(path+".interval", "want %v to %v, got %v", minModbusInterval, maxModbusInterval, *dc.Interval)
	}
	if table == modbus.HoldingRegisters && dc.Safe == nil {
		v.add(path+".safe", "required for a holding register: the value an emergency stop writes to it (such as 0), or none with noSafeReason")
	}
	if lineOK && tableOK && unitOK && typeOK && addrOK {
		v.modbusClaim(path, modbusClaim{id: id, line: dc.Bus, unit: *dc.Slave, table: table,
			first: *dc.Address, last: *dc.Address + typ.Words() - 1, writable: table.Writable()}, u)
	}
}

// modbusLineOf finds the line a device's bus names.
func (v *validator) modbusLineOf(path string, dc DeviceConfig, u *usage) (ModbusLineConfig, bool) {
	names := slices.Sorted(maps.Keys(u.modbus.declared))
	switch lc, ok := u.modbus.lines[dc.Bus]; {
	case ok:
		return lc, true
	case dc.Bus == "":
		v.add(path+".bus", "required: the line under modbus: the unit is on%s", oneOf(names))
	case !modbusLineName.MatchString(dc.Bus):
		v.add(path+".bus", "%q is not a line of modbus:%s", dc.Bus, oneOf(names))
	default:
		// A line that failed its own checks was reported there.
		if _, declared := u.modbus.declared[dc.Bus]; !declared {
			v.add(path+".bus", "no line %q under modbus:%s", dc.Bus, oneOf(names))
		}
	}
	return ModbusLineConfig{}, false
}

// oneOf is " (want a, b or c)", or "" for no names.
func oneOf(names []string) string {
	if len(names) == 0 {
		return " (the file has no modbus: section)"
	}
	return " (want " + listWords(names) + ")"
}

// modbusSlave checks a unit id: 1 to 247 on a serial line (0 is the
// broadcast, which no unit answers; 248 to 255 are reserved), 0 to 255
// on TCP, where a gateway to a serial line may use any.
func (v *validator) modbusSlave(path string, s *int, lc ModbusLineConfig, lineOK bool) bool {
	switch {
	case s == nil:
		v.add(path, "required: the unit id (the slave address set on the unit, 1 to 247)")
	case lineOK && lc.IsTCP() && (*s < 0 || *s > 255):
		v.add(path, "want 0 to 255 on a TCP line, got %d", *s)
	case lineOK && !lc.IsTCP() && (*s < 1 || *s > 247):
		v.add(path, "want 1 to 247 on a serial line (0 is the broadcast, which no unit answers), got %d", *s)
	case !lineOK && (*s < 0 || *s > 255):
		v.add(path, "want 1 to 247 (0 to 255 on a TCP line), got %d", *s)
	default:
		return true
	}
	return false
}

// modbusType checks the type against the table: a coil or discrete input
// is a bool; a register any type.
func (v *validator) modbusType(path string, dc DeviceConfig, table modbus.Table, tableOK bool) (modbus.Type, bool) {
	typ, ok := modbus.ParseType(dc.Type)
	switch {
	case dc.Type == "" && tableOK:
		return dc.modbusType(table), true
	case dc.Type == "":
		return 0, false
	case !ok:
		v.add(path+".type", "unknown type %q (want bool, int16, uint16, int32, uint32, float32, int64, uint64 or float64)", dc.Type)
		return 0, false
	case tableOK && table.Bits() && typ != modbus.Bool:
		v.add(path+".type", "a %s is one bit: its type is bool, not %s", dc.Table, dc.Type)
		return 0, false
	case tableOK && !table.Bits() && typ == modbus.Bool:
		v.add(path+".type", "bool is for coils and discrete inputs; a register is a number (uint16 and an enum names a status word's values)")
		return 0, false
	}
	return typ, true
}

// modbusAddress checks that the value's registers lie in 0 to 65535.
func (v *validator) modbusAddress(path string, a *int, typ modbus.Type, typeOK bool) bool {
	words := 1
	if typeOK {
		words = typ.Words()
	}
	switch {
	case a == nil:
		v.add(path, "required: the first coil or register, 0-based as on the wire (a manual's holding register 40001 is address 0)")
	case *a < 0 || *a > 65535:
		v.add(path, "want 0 to 65535 (0-based, as on the wire), got %d", *a)
	case *a+words-1 > 65535:
		v.add(path, "a %s at %d runs past register 65535", typ, *a)
	default:
		return true
	}
	return false
}

// modbusValue checks how a value is made of its registers: the swap its
// width allows, a linear scale of a number, or an enum of an integer's
// values; and the schema's bounds.
func (v *validator) modbusValue(path string, dc DeviceConfig, typ modbus.Type) {
	numeric := typ != modbus.Bool
	if swap, ok := modbus.ParseSwap(dc.Swap); dc.Swap != "" && !ok {
		v.add(path+".swap", "unknown swap %q (want none, byte, word or word_byte)", dc.Swap)
	} else if dc.Swap != "" && !numeric {
		v.add(path+".swap", "a bool has no byte order")
	} else if (swap == modbus.SwapWord || swap == modbus.SwapWordByte) && typ.Words() < 2 {
		v.add(path+".swap", "%s swaps registers, and a %s is one (byte swaps its two bytes)", dc.Swap, typ)
	}
	for _, f := range []struct {
		name string
		set  bool
	}{{"scale", dc.Scale != nil}, {"offset", dc.Offset != nil}, {"unit", dc.Unit != ""}, {"enum", dc.Enum != nil}, {"minimum", dc.Minimum != nil}, {"maximum", dc.Maximum != nil}} {
		if f.set && !numeric {
			v.add(path+"."+f.name, "a bool has no %s (it is a register's)", f.name)
		}
	}
	if !numeric {
		return
	}
	if dc.Scale != nil && (*dc.Scale == 0 || math.IsNaN(*dc.Scale) || math.IsInf(*dc.Scale, 0)) {
		v.add(path+".scale", "want a finite number other than 0, got %v", *dc.Scale)
	}
	if dc.Offset != nil && (math.IsNaN(*dc.Offset) || math.IsInf(*dc.Offset, 0)) {
		v.add(path+".offset", "want a finite number, got %v", *dc.Offset)
	}
	if dc.Enum != nil {
		v.modbusEnum(path, dc, typ)
		return
	}
	v.modbusBounds(path, dc, typ)
}

// modbusEnum checks an enum: an integer's raw values, unscaled, each
// with its own label.
func (v *validator) modbusEnum(path string, dc DeviceConfig, typ modbus.Type) {
	for _, f := range []struct {
		name string
		set  bool
	}{{"scale", dc.Scale != nil}, {"offset", dc.Offset != nil}, {"unit", dc.Unit != ""}, {"minimum", dc.Minimum != nil}, {"maximum", dc.Maximum != nil}} {
		if f.set {
			v.add(path+"."+f.name, "an enum's value is one of its labels: it has no %s", f.name)
		}
	}
	if typ == modbus.Float32 || typ == modbus.Float64 {
		v.add(path+".enum", "an enum names an integer's values, and a %s is not one", typ)
		return
	}
	switch {
	case len(dc.Enum) == 0:
		v.add(path+".enum", "want at least one value: label (such as 0: stopped)")
	case len(dc.Enum) > maxModbusEnum:
		v.add(path+".enum", "at most %d values, got %d", maxModbusEnum, len(dc.Enum))
	}
	lo, hi := modbus.Range(typ)
	labels := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(dc.Enum)) {
		p, label := path+".enum."+k, dc.Enum[k]
		n, err := strconv.ParseInt(k, 0, 64)
		switch {
		case err != nil:
			v.add(p, "%q is not an integer (the raw value the label names)", k)
		case float64(n) < lo || float64(n) > hi:
			v.add(p, "%d is out of a %s's range (%v to %v)", n, typ, lo, hi)
		}
		switch first, dup := labels[label]; {
		case strings.TrimSpace(label) == "":
			v.add(p, "want a label, such as running")
		case dup:
			v.add(p, "label %q is also %s's: a written label must name one value", label, first)
		}
		labels[label] = k
	}
}

// modbusBounds checks a number's minimum and maximum against what its
// type holds, scaled.
func (v *validator) modbusBounds(path string, dc DeviceConfig, typ modbus.Type) {
	lo, hi := modbus.Range(typ)
	scale, offset := orFloat(dc.Scale, 1), orFloat(dc.Offset, 0)
	lo, hi = lo*scale+offset, hi*scale+offset
	if lo > hi {
		lo, hi = hi, lo
	}
	for _, b := range []struct {
		name string
		x    *float64
	}{{"minimum", dc.Minimum}, {"maximum", dc.Maximum}} {
		switch {
		case b.x == nil:
		case math.IsNaN(*b.x) || math.IsInf(*b.x, 0):
			v.add(path+"."+b.name, "want a finite number, got %v", *b.x)
		case *b.x < lo || *b.x > hi:
			v.add(path+"."+b.name, "%v is beyond what a %s holds (%v to %v, scaled)", *b.x, typ, lo, hi)
		}
	}
	if dc.Minimum != nil && dc.Maximum != nil && *dc.Minimum > *dc.Maximum {
		v.add(path+".minimum", "minimum %v is above maximum %v", *dc.Minimum, *dc.Maximum)
	}
}

// modbusClaim refuses a device whose registers overlap those of another
// on the same unit when either is written: two devices would write one
// register. Reading one register two ways (a status word as an enum and
// as a number) is allowed.
func (v *validator) modbusClaim(path string, c modbusClaim, u *usage) {
	for _, o := range u.modbus.points {
		if o.line != c.line || o.unit != c.unit || o.table != c.table || o.last < c.first || c.last < o.first {
			continue
		}
		if c.writable || o.writable {
			v.add(path+".address", "%s %s of unit %d is also devices.%s's (%s): two devices would write it", c.table, span(c.first, c.last), c.unit, o.id, span(o.first, o.last))
			return
		}
	}
	u.modbus.points = append(u.modbus.points, c)
}

// span is "100" or "100-101".
func span(first, last int) string {
	if first == last {
		return strconv.Itoa(first)
	}
	return fmt.Sprintf("%d-%d", first, last)
}

// CheckModbusLine checks one line's settings as the file's modbus:
// section would, for a line given some other way (`gateway modbus
// scan`'s flags); the errors' paths are modbus.NAME.FIELD.
func CheckModbusLine(name string, lc ModbusLineConfig) Errors {
	v := validator{skip: map[string]bool{}}
	v.modbusLines(&Config{Modbus: map[string]ModbusLineConfig{name: lc}}, newUsage())
	return v.errs
}
