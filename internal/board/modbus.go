package board

import (
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/hw/modbus"
	"github.com/openhal/gateway/internal/hw/modbusline"
	"github.com/openhal/gateway/internal/hw/serialline"
)

// KindModbus is the configuration's kind of one value on a Modbus unit
// (issue 31): a coil, a discrete input, or a number in one or more input
// or holding registers, on a line of the file's `modbus:` section. Its
// descriptor's kind is device.KindModbus (x.modbus).
const KindModbus = "modbus"

// ModbusChip is the descriptor's chip of a Modbus device.
const ModbusChip = "modbus"

// Modbus lines' defaults (docs/configuration.md, "Modbus").
const (
	// DefaultModbusRTUTimeout is how long a unit on a serial line is
	// given to answer: a unit answers within a few ms of the request's
	// end, and a dead one must not hold the line (and a stop) long.
	DefaultModbusRTUTimeout = 500 * time.Millisecond
	// DefaultModbusTCPTimeout is a TCP unit's, which may be a gateway to
	// a serial line of its own.
	DefaultModbusTCPTimeout = time.Second
	// DefaultModbusRetries is how many times a request that got no
	// answer, or a garbled one, is sent again before its devices are in
	// fault.
	DefaultModbusRetries = 1
	// DefaultModbusInterval is a Modbus device's poll interval.
	DefaultModbusInterval = time.Second
	// DefaultModbusTCPPort is Modbus TCP's registered port.
	DefaultModbusTCPPort = "502"
)

// ModbusLineConfig is one Modbus line under `modbus:`, by a name the
// devices on it give as their bus: a serial line (RTU, an RS-485 adapter)
// with port and baud, or a TCP connection with tcp.
type ModbusLineConfig struct {
	Port     string         `yaml:"port"`     // RTU: the serial port
	Baud     *int           `yaml:"baud"`     // RTU
	DataBits *int           `yaml:"dataBits"` // RTU: 7 or 8 (8)
	Parity   string         `yaml:"parity"`   // RTU: none, even or odd (none)
	StopBits string         `yaml:"stopBits"` // RTU: 1 or 2 (1)
	FrameGap *time.Duration `yaml:"frameGap"` // RTU: silence before a request (3.5 characters, at least 1.75 ms)
	DE       string         `yaml:"de"`       // RTU: none, rts or rts-low: how the RS-485 driver is enabled
	TCP      string         `yaml:"tcp"`      // TCP: host:port (port 502 if left out)
	Timeout  *time.Duration `yaml:"timeout"`  // per request
	Retries  *int           `yaml:"retries"`  // per request
}

// IsTCP reports whether the line is Modbus TCP.
func (lc ModbusLineConfig) IsTCP() bool { return lc.TCP != "" }

// TCPAddr is a TCP line's host:port, with Modbus's port when the file
// leaves it out.
func (lc ModbusLineConfig) TCPAddr() string {
	if _, _, err := net.SplitHostPort(lc.TCP); err == nil {
		return lc.TCP
	}
	return net.JoinHostPort(strings.Trim(lc.TCP, "[]"), DefaultModbusTCPPort)
}

// Where is what the descriptors of the line's devices give as their bus:
// the serial port, or tcp://host:port.
func (lc ModbusLineConfig) Where() string {
	if lc.IsTCP() {
		return "tcp://" + lc.TCPAddr()
	}
	return lc.Port
}

// PortConfig is an RTU line's serial port as serialline takes it (8N1
// unless the file says otherwise).
func (lc ModbusLineConfig) PortConfig() serialline.PortConfig {
	pc := serialline.PortConfig{Path: lc.Port, Parity: lc.Parity, StopBits: lc.StopBits}
	if lc.Baud != nil {
		pc.Baud = *lc.Baud
	}
	if lc.DataBits != nil {
		pc.DataBits = *lc.DataBits
	}
	return pc.WithDefaults()
}

// RTUConfig is an RTU line's timing and driver control as modbus takes
// them.
func (lc ModbusLineConfig) RTUConfig() modbus.RTUConfig {
	pc := lc.PortConfig()
	c := modbus.RTUConfig{Baud: pc.Baud, CharBits: 1 + pc.DataBits + 1}
	if pc.Parity != "none" {
		c.CharBits++
	}
	if pc.StopBits == "2" {
		c.CharBits++
	}
	if lc.FrameGap != nil {
		c.FrameGap = *lc.FrameGap
	}
	if de, ok := modbus.ParseDE(lc.DE); ok {
		c.DE = de
	}
	return c
}

// RequestTimeout is how long a unit on the line is given to answer.
func (lc ModbusLineConfig) RequestTimeout() time.Duration {
	switch {
	case lc.Timeout != nil:
		return *lc.Timeout
	case lc.IsTCP():
		return DefaultModbusTCPTimeout
	}
	return DefaultModbusRTUTimeout
}

// QuietTime is how long a unit that did not answer in time is left
// alone on a serial line (modbusline.Config.Quiet): a timeout more, so
// that an answer up to twice the timeout late is dropped, not taken for
// the next request's. A TCP line needs none: its answers carry the
// request's transaction id.
func (lc ModbusLineConfig) QuietTime() time.Duration {
	if lc.IsTCP() {
		return 0
	}
	return lc.RequestTimeout()
}

// RequestRetries is how many times a failed request is sent again.
func (lc ModbusLineConfig) RequestRetries() int {
	if lc.Retries != nil {
		return *lc.Retries
	}
	return DefaultModbusRetries
}

// ModbusPoint is where a Modbus device's value sits and how it is
// encoded, as the file states it with the defaults filled in: a coil or
// discrete input is a bool, a register a uint16 unless type says
// otherwise. dc must be a valid modbus device.
func (dc DeviceConfig) ModbusPoint() modbusline.Point {
	p := modbusline.Point{Scale: orFloat(dc.Scale, 1), Offset: orFloat(dc.Offset, 0), Interval: DefaultModbusInterval}
	if dc.Slave != nil {
		p.Unit = byte(*dc.Slave)
	}
	p.Table, _ = modbus.ParseTable(dc.Table)
	if dc.Address != nil {
		p.Address = uint16(*dc.Address)
	}
	p.Type = dc.modbusType(p.Table)
	p.Swap, _ = modbus.ParseSwap(dc.Swap)
	if len(dc.Enum) > 0 {
		p.Enum = make(map[int64]string, len(dc.Enum))
		for k, label := range dc.Enum {
			if n, err := strconv.ParseInt(k, 0, 64); err == nil {
				p.Enum[n] = label
			}
		}
	}
	if dc.Interval != nil {
		p.Interval = *dc.Interval
	}
	return p
}

// modbusType is the type the file gives, else its table's default.
func (dc DeviceConfig) modbusType(t modbus.Table) modbus.Type {
	if typ, ok := modbus.ParseType(dc.Type); ok {
		return typ
	}
	if t.Bits() {
		return modbus.Bool
	}
	return modbus.Uint16
}

// modbusDescriptor describes a Modbus device: its value's schema from its
// table and type (boolean, a number with its unit and range, or one of
// its enum's labels), read-only on a discrete input or an input register,
// and where it sits. A coil is off (false) at a stop unless the file says
// otherwise; a holding register has no default safe value (the
// validator requires one, or none with a reason). onModbus adds the
// line's bus.
func (dc DeviceConfig) modbusDescriptor(d device.Descriptor) device.Descriptor {
	p := dc.ModbusPoint()
	d.Kind, d.Chip, d.Safe = device.KindModbus, ModbusChip, nil
	if dc.Slave != nil {
		d.Address = strconv.Itoa(*dc.Slave)
	}
	switch {
	case p.Type == modbus.Bool:
		d.Schema = device.Schema{Type: device.TypeBoolean}
	case len(p.Enum) > 0:
		d.Schema = device.Schema{Type: device.TypeString, Enum: enumLabels(p.Enum)}
	default:
		d.Schema = dc.modbusNumberSchema(p)
	}
	if !p.Table.Writable() {
		d.Access, d.Risk = device.AccessRead, device.RiskLow
	} else if p.Table == modbus.Coils {
		d.Safe = false
	}
	reg := &device.ModbusRegister{Table: p.Table.String(), Address: int(p.Address), Type: p.Type.String(), Words: p.Words()}
	if p.Swap != modbus.SwapNone {
		reg.Swap = p.Swap.String()
	}
	if p.Scale != 1 {
		reg.Scale = p.Scale
	}
	reg.Offset = p.Offset
	d.Modbus = reg
	return d
}

// modbusNumberSchema is a register's number: its type's range scaled,
// narrowed by the file's minimum and maximum, in its unit.
func (dc DeviceConfig) modbusNumberSchema(p modbusline.Point) device.Schema {
	s := device.Schema{Type: device.TypeNumber, Unit: dc.Unit}
	if p.Scale == 1 && p.Offset == math.Trunc(p.Offset) && p.Type != modbus.Float32 && p.Type != modbus.Float64 {
		s.Type = device.TypeInteger // a count, a setpoint in whole units
	}
	if p.Type == modbus.Float32 || p.Type == modbus.Float64 {
		s.Minimum, s.Maximum = dc.Minimum, dc.Maximum
		return s
	}
	lo, hi := modbus.Range(p.Type)
	lo, hi = lo*p.Scale+p.Offset, hi*p.Scale+p.Offset
	if lo > hi {
		lo, hi = hi, lo
	}
	if dc.Minimum != nil {
		lo = *dc.Minimum
	}
	if dc.Maximum != nil {
		hi = *dc.Maximum
	}
	s.Minimum, s.Maximum = &lo, &hi
	return s
}

// enumLabels lists an enum's labels in the order of their raw values.
func enumLabels(e map[int64]string) []any {
	keys := make([]int64, 0, len(e))
	for k := range e {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = e[k]
	}
	return out
}

// onModbus says on which line a Modbus device sits: its port, or
// tcp://host:port.
func (c *Config) onModbus(d device.Descriptor, dc DeviceConfig) device.Descriptor {
	if dc.Kind != KindModbus {
		return d
	}
	if lc, ok := c.Modbus[dc.Bus]; ok {
		d.Bus = lc.Where()
	}
	return d
}
