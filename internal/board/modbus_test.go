package board

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/hw/modbus"
	"github.com/openhal/gateway/internal/hw/modbusline"
)

// modbusLines is a file's head with one line of each transport.
const modbusLines = `board: generic
modbus:
  rs485:
    port: /dev/serial/by-id/usb-FTDI_FT232R-if00-port0
    baud: 19200
    parity: even
    de: rts
    timeout: 300ms
    retries: 2
  plc:
    tcp: 192.168.1.50
devices:
`

const modbusYAML = modbusLines + `  meter.voltage:
    kind: modbus
    label: Mains voltage
    bus: rs485
    slave: 1
    table: input
    address: 0
    type: float32
    swap: word
    unit: V
    interval: 2s
  vfd.speed:
    kind: modbus
    bus: rs485
    slave: 2
    table: holding
    address: 8193
    scale: 0.01
    unit: Hz
    minimum: 0
    maximum: 50
    safe: 0
  vfd.run:
    kind: modbus
    bus: rs485
    slave: 2
    table: coil
    address: 0
  vfd.status:
    kind: modbus
    bus: rs485
    slave: 2
    table: input
    address: 3
    enum: {0: stopped, 1: running, 2: fault}
  plc.count:
    kind: modbus
    bus: plc
    slave: 255
    table: holding
    address: 10
    type: int32
    safe: none
    noSafeReason: a counter the PLC keeps
  plc.alarm:
    kind: modbus
    bus: plc
    slave: 0
    table: discrete
    address: 7
`

// Each device's descriptor: its schema from table and type, its access,
// its safe value, and where it sits.
func TestModbusDescriptors(t *testing.T) {
	c, err := Parse([]byte(modbusYAML))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]device.Descriptor{}
	for _, d := range c.Descriptors() {
		byID[d.ID] = d
	}
	f := func(x float64) *float64 { return &x }
	port := "/dev/serial/by-id/usb-FTDI_FT232R-if00-port0"
	for _, tt := range []struct {
		id     string
		access device.Access
		risk   device.Risk
		safe   any
		bus    string
		unit   string
		schema device.Schema
		reg    device.ModbusRegister
	}{
		{"meter.voltage", device.AccessRead, device.RiskLow, nil, port, "1",
			device.Schema{Type: device.TypeNumber, Unit: "V"},
			device.ModbusRegister{Table: "input", Address: 0, Type: "float32", Words: 2, Swap: "word"}},
		{"vfd.speed", device.AccessReadWrite, device.RiskHigh, 0.0, port, "2",
			device.Schema{Type: device.TypeNumber, Unit: "Hz", Minimum: f(0), Maximum: f(50)},
			device.ModbusRegister{Table: "holding", Address: 8193, Type: "uint16", Words: 1, Scale: 0.01}},
		{"vfd.run", device.AccessReadWrite, device.RiskHigh, false, port, "2",
			device.Schema{Type: device.TypeBoolean},
			device.ModbusRegister{Table: "coil", Address: 0, Type: "bool", Words: 1}},
		{"vfd.status", device.AccessRead, device.RiskLow, nil, port, "2",
			device.Schema{Type: device.TypeString, Enum: []any{"stopped", "running", "fault"}},
			device.ModbusRegister{Table: "input", Address: 3, Type: "uint16", Words: 1}},
		{"plc.count", device.AccessReadWrite, device.RiskHigh, nil, "tcp://192.168.1.50:502", "255",
			device.Schema{Type: device.TypeInteger, Minimum: f(-2147483648), Maximum: f(2147483647)},
			device.ModbusRegister{Table: "holding", Address: 10, Type: "int32", Words: 2}},
		{"plc.alarm", device.AccessRead, device.RiskLow, nil, "tcp://192.168.1.50:502", "0",
			device.Schema{Type: device.TypeBoolean},
			device.ModbusRegister{Table: "discrete", Address: 7, Type: "bool", Words: 1}},
	} {
		d, ok := byID[tt.id]
		if !ok {
			t.Errorf("no descriptor for %s", tt.id)
			continue
		}
		if d.Kind != device.KindModbus || d.Access != tt.access || d.Risk != tt.risk || d.Safe != tt.safe ||
			d.Bus != tt.bus || d.Address != tt.unit || d.Chip != ModbusChip {
			t.Errorf("%s = %+v", tt.id, d)
		}
		if !reflect.DeepEqual(d.Schema, tt.schema) {
			t.Errorf("%s schema %+v, want %+v", tt.id, d.Schema, tt.schema)
		}
		if d.Modbus == nil || *d.Modbus != tt.reg {
			t.Errorf("%s modbus %+v, want %+v", tt.id, d.Modbus, tt.reg)
		}
	}
	if l := byID["meter.voltage"].Label; l != "Mains voltage" {
		t.Errorf("label %q", l)
	}
}

// What the lines and points give the builder, from the file and the
// defaults.
func TestModbusSettings(t *testing.T) {
	c, err := Parse([]byte(modbusYAML))
	if err != nil {
		t.Fatal(err)
	}
	rs, plc := c.Modbus["rs485"], c.Modbus["plc"]
	if got, want := rs.RTUConfig(), (modbus.RTUConfig{Baud: 19200, CharBits: 11, DE: modbus.DERTS}); got != want {
		t.Errorf("rs485 RTUConfig = %+v, want %+v", got, want)
	}
	if rs.RequestTimeout() != 300*time.Millisecond || rs.RequestRetries() != 2 || rs.IsTCP() {
		t.Errorf("rs485 timeout %v retries %d", rs.RequestTimeout(), rs.RequestRetries())
	}
	if !plc.IsTCP() || plc.TCPAddr() != "192.168.1.50:502" || plc.RequestTimeout() != DefaultModbusTCPTimeout || plc.RequestRetries() != DefaultModbusRetries {
		t.Errorf("plc %+v: %s %v %d", plc, plc.TCPAddr(), plc.RequestTimeout(), plc.RequestRetries())
	}
	for _, tt := range []struct {
		id   string
		want modbusline.Point
	}{
		{"meter.voltage", modbusline.Point{Unit: 1, Table: modbus.InputRegisters, Type: modbus.Float32, Swap: modbus.SwapWord, Scale: 1, Interval: 2 * time.Second}},
		{"vfd.speed", modbusline.Point{Unit: 2, Table: modbus.HoldingRegisters, Address: 8193, Type: modbus.Uint16, Scale: 0.01, Interval: time.Second}},
		{"vfd.status", modbusline.Point{Unit: 2, Table: modbus.InputRegisters, Address: 3, Type: modbus.Uint16, Scale: 1, Interval: time.Second,
			Enum: map[int64]string{0: "stopped", 1: "running", 2: "fault"}}},
		{"plc.alarm", modbusline.Point{Unit: 0, Table: modbus.DiscreteInputs, Address: 7, Type: modbus.Bool, Scale: 1, Interval: time.Second}},
	} {
		if got := c.Devices[tt.id].ModbusPoint(); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s point %+v, want %+v", tt.id, got, tt.want)
		}
	}
}

// Every fault of a line or a device is reported at its field, alone.
func TestModbusFaults(t *testing.T) {
	speed := "  vfd.speed:\n    kind: modbus\n    bus: rs485\n    slave: 2\n    table: holding\n    address: 1\n"
	for _, tt := range []struct {
		name, lines, devices, want string
	}{
		{"line without transport", "  x:\n    timeout: 1s\n", "", "modbus.x: want port (a serial line, RTU) or tcp (host:port, Modbus TCP)"},
		{"both transports", "  x:\n    port: /dev/ttyUSB0\n    baud: 9600\n    tcp: h:502\n", "", "modbus.x.tcp: a line is serial (port) or TCP (tcp), not both"},
		{"no baud", "  x:\n    port: /dev/ttyUSB0\n", "", "modbus.x.baud: required (the units' bits per second, such as 9600 or 19200)"},
		{"relative port", "  x:\n    port: ttyUSB0\n    baud: 9600\n", "", `modbus.x.port: "ttyUSB0": not absolute (want /dev/ttyUSB0 or /dev/serial/by-id/...)`},
		{"7 data bits", "  x:\n    port: /dev/ttyUSB0\n    baud: 9600\n    dataBits: 7\n", "", "modbus.x.dataBits: want 8, RTU's character (7 is Modbus ASCII's, which the gateway does not speak), got 7"},
		{"mark parity", "  x:\n    port: /dev/ttyUSB0\n    baud: 9600\n    parity: mark\n", "", `modbus.x.parity: want none, even or odd, got "mark"`},
		{"bad de", "  x:\n    port: /dev/ttyUSB0\n    baud: 9600\n    de: dtr\n", "", `modbus.x.de: want none (the adapter switches its driver itself), rts or rts-low, got "dtr"`},
		{"zero gap", "  x:\n    port: /dev/ttyUSB0\n    baud: 9600\n    frameGap: 0s\n", "", "modbus.x.frameGap: want a positive duration up to 1s, got 0s"},
		{"baud on tcp", "  x:\n    tcp: 10.0.0.2:502\n    baud: 9600\n", "", "modbus.x.baud: a TCP line has no baud (it is a serial line's)"},
		{"bad tcp", "  x:\n    tcp: 'a b:502'\n", "", `modbus.x.tcp: want host:port such as 192.168.1.50:502 (the port is 502 if left out), got "a b:502"`},
		{"timeout", "  x:\n    tcp: h\n    timeout: 2m\n", "", "modbus.x.timeout: want 10ms to 1m0s, got 2m0s"},
		{"retries", "  x:\n    tcp: h\n    retries: 9\n", "", "modbus.x.retries: want 0 to 5, got 9"},
		{"line name", "  X:\n    tcp: h\n", "", `modbus.X: "X" is not a line name: want lowercase letters, digits, '_' or '-', starting with a letter, at most 32`},
		{"no bus", rs485, "  d:\n    kind: modbus\n    slave: 1\n    table: coil\n    address: 0\n", "devices.d.bus: required: the line under modbus: the unit is on (want rs485)"},
		{"unknown bus", rs485, "  d:\n    kind: modbus\n    bus: rs232\n    slave: 1\n    table: coil\n    address: 0\n", `devices.d.bus: no line "rs232" under modbus: (want rs485)`},
		{"no slave", rs485, "  d:\n    kind: modbus\n    bus: rs485\n    table: coil\n    address: 0\n", "devices.d.slave: required: the unit id (the slave address set on the unit, 1 to 247)"},
		{"broadcast", rs485, "  d:\n    kind: modbus\n    bus: rs485\n    slave: 0\n    table: coil\n    address: 0\n", "devices.d.slave: want 1 to 247 on a serial line (0 is the broadcast, which no unit answers), got 0"},
		{"no table", rs485, "  d:\n    kind: modbus\n    bus: rs485\n    slave: 1\n    address: 0\n", "devices.d.table: required (coil, discrete, input or holding)"},
		{"bad table", rs485, "  d:\n    kind: modbus\n    bus: rs485\n    slave: 1\n    table: holdings\n    address: 0\n", `devices.d.table: unknown table "holdings" (want coil, discrete, input or holding)`},
		{"no address", rs485, "  d:\n    kind: modbus\n    bus: rs485\n    slave: 1\n    table: coil\n", "devices.d.address: required: the first coil or register, 0-based as on the wire (a manual's holding register 40001 is address 0)"},
		{"past the end", rs485, "  d:\n    kind: modbus\n    bus: rs485\n    slave: 1\n    table: input\n    address: 65534\n    type: float64\n", "devices.d.address: a float64 at 65534 runs past register 65535"},
		{"coil of int16", rs485, "  d:\n    kind: modbus\n    bus: rs485\n    slave: 1\n    table: coil\n    address: 0\n    type: int16\n", "devices.d.type: a coil is one bit: its type is bool, not int16"},
		{"register of bool", rs485, "  d:\n    kind: modbus\n    bus: rs485\n    slave: 1\n    table: input\n    address: 0\n    type: bool\n", "devices.d.type: bool is for coils and discrete inputs; a register is a number (uint16 and an enum names a status word's values)"},
		{"unknown type", rs485, "  d:\n    kind: modbus\n    bus: rs485\n    slave: 1\n    table: input\n    address: 0\n    type: float16\n", `devices.d.type: unknown type "float16" (want bool, int16, uint16, int32, uint32, float32, int64, uint64 or float64)`},
		{"word swap of one register", rs485, "  d:\n    kind: modbus\n    bus: rs485\n    slave: 1\n    table: input\n    address: 0\n    swap: word\n", "devices.d.swap: word swaps registers, and a uint16 is one (byte swaps its two bytes)"},
		{"scale of a coil", rs485, "  d:\n    kind: modbus\n    bus: rs485\n    slave: 1\n    table: coil\n    address: 0\n    scale: 2\n", "devices.d.scale: a bool has no scale (it is a register's)"},
		{"zero scale", rs485, "  d:\n    kind: modbus\n    bus: rs485\n    slave: 1\n    table: input\n    address: 0\n    scale: 0\n", "devices.d.scale: want a finite number other than 0, got 0"},
		{"enum with scale", rs485, "  d:\n    kind: modbus\n    bus: rs485\n    slave: 1\n    table: input\n    address: 0\n    scale: 2\n    enum: {0: off}\n", "devices.d.scale: an enum's value is one of its labels: it has no scale"},
		{"enum key", rs485, "  d:\n    kind: modbus\n    bus: rs485\n    slave: 1\n    table: input\n    address: 0\n    enum: {zero: off}\n", `devices.d.enum.zero: "zero" is not an integer (the raw value the label names)`},
		{"enum range", rs485, "  d:\n    kind: modbus\n    bus: rs485\n    slave: 1\n    table: input\n    address: 0\n    enum: {70000: off}\n", "devices.d.enum.70000: 70000 is out of a uint16's range (0 to 65535)"},
		{"enum twice", rs485, "  d:\n    kind: modbus\n    bus: rs485\n    slave: 1\n    table: input\n    address: 0\n    enum: {0: off, 1: off}\n", `devices.d.enum.1: label "off" is also 0's: a written label must name one value`},
		{"maximum beyond", rs485, "  d:\n    kind: modbus\n    bus: rs485\n    slave: 1\n    table: input\n    address: 0\n    scale: 0.1\n    maximum: 7000\n", "devices.d.maximum: 7000 is beyond what a uint16 holds (0 to 6553.5, scaled)"},
		{"holding without safe", rs485, "  d:\n    kind: modbus\n    bus: rs485\n    slave: 1\n    table: holding\n    address: 0\n", "devices.d.safe: required for a holding register: the value an emergency stop writes to it (such as 0), or none with noSafeReason"},
		{"safe out of range", rs485, speed + "    maximum: 50\n    safe: 60\n", "devices.vfd.speed.safe: 60 does not fit vfd.speed: 60 is above the maximum 50"},
		{"two writers", rs485, speed + "    safe: 0\n  vfd.speed2:\n    kind: modbus\n    bus: rs485\n    slave: 2\n    table: holding\n    address: 0\n    type: int32\n    safe: 0\n", "devices.vfd.speed2.address: holding 0-1 of unit 2 is also devices.vfd.speed's (1): two devices would write it"},
		{"interval", rs485, "  d:\n    kind: modbus\n    bus: rs485\n    slave: 1\n    table: coil\n    address: 0\n    interval: 1ms\n", "devices.d.interval: want 10ms to 24h0m0s, got 1ms"},
		{"pin on modbus", rs485, "  d:\n    kind: modbus\n    bus: rs485\n    slave: 1\n    table: coil\n    address: 0\n    pin: GPIO4\n", "devices.d.pin: a modbus device has no pin (pin is for gpio.output, gpio.input, pwm, servo or counter devices)"},
		{"port shared with a serial device", rs485, "  meter:\n    kind: serial\n    port: /dev/ttyUSB0\n    baud: 9600\n", "devices.meter.port: /dev/ttyUSB0 is also used by modbus.rs485"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checkOneFault(t, "board: generic\nmodbus:\n"+tt.lines+"devices:\n"+tt.devices, tt.want)
		})
	}
}

const rs485 = "  rs485:\n    port: /dev/ttyUSB0\n    baud: 9600\n"

// Reading one register two ways is allowed; the sim board has no lines.
func TestModbusOverlapsAndSim(t *testing.T) {
	two := "board: generic\nmodbus:\n" + rs485 + "devices:\n" +
		"  a:\n    kind: modbus\n    bus: rs485\n    slave: 1\n    table: input\n    address: 0\n" +
		"  b:\n    kind: modbus\n    bus: rs485\n    slave: 1\n    table: input\n    address: 0\n    enum: {0: off, 1: on}\n"
	if _, err := Parse([]byte(two)); err != nil {
		t.Errorf("two readers of one register: %v", err)
	}
	_, err := Parse([]byte("board: sim\nmodbus:\n" + rs485))
	if err == nil || !strings.Contains(err.Error(), "modbus.rs485: the sim board's devices are built in") {
		t.Errorf("sim board with a line: %v", err)
	}
}
