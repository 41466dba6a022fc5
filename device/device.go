package device

import (
	"context"
	"errors"
	"regexp"
	"time"
)

// Kinds of device (openhal-0.1 §6). Adapters may add "x.<name>".
const (
	KindGPIOInput  = "gpio.input"
	KindGPIOOutput = "gpio.output"
	KindPWM        = "pwm"
	KindSensor     = "sensor"
	KindSerial     = "serial"
	// KindServo is the gateway's own kind (an "x.<name>" of §6) for a
	// hobby servo: the value is an angle in degrees (unit "deg"), the
	// descriptor says its pulse range (MinPulseUs, MaxPulseUs) and its
	// speed limit (Rate); docs/protocol.md, "Extension kinds".
	KindServo = "x.servo"
	// KindModbus is the gateway's own kind for one value on a Modbus
	// unit (a coil, a discrete input, or a number in one or more
	// registers): its schema says boolean, number or string (a status
	// word's enum), and the descriptor's Modbus field where it sits;
	// docs/protocol.md, "Extension kinds".
	KindModbus = "x.modbus"
)

// Access says whether a device can be read, written, or both.
type Access string

const (
	AccessRead      Access = "r"
	AccessWrite     Access = "w"
	AccessReadWrite Access = "rw"
)

// CanRead reports whether a reads are allowed.
func (a Access) CanRead() bool { return a == AccessRead || a == AccessReadWrite }

// CanWrite reports whether writes are allowed.
func (a Access) CanWrite() bool { return a == AccessWrite || a == AccessReadWrite }

// Risk decides which scope may write a device without a confirmation.
type Risk string

const (
	RiskLow  Risk = "low"
	RiskHigh Risk = "high"
)

// State is a device's health as clients see it.
type State string

const (
	StateOK      State = "ok"
	StateFault   State = "fault"
	StateOffline State = "offline"
)

// Descriptor is what hal/devices/list and hal/devices/get return.
//
// Safe is nil when the device has no safe value: an emergency stop then
// leaves it alone. A safe value of false is kept (it is not a nil
// interface), so it is encoded. NoSafeReason says why a written device
// has none (a gateway extension of the descriptor), so that a client and
// the stop's result can tell an operator what a stop leaves as it is.
type Descriptor struct {
	ID     string   `json:"id"`
	Kind   string   `json:"kind"`
	Label  string   `json:"label,omitempty"`
	Source string   `json:"source"`
	Access Access   `json:"access"`
	Risk   Risk     `json:"risk"`
	Schema Schema   `json:"schema"`
	Safe   any      `json:"safe,omitempty"`
	State  State    `json:"state"`
	Fault  string   `json:"fault,omitempty"`
	Tags   []string `json:"tags,omitempty"`

	// NoSafeReason is set only when Safe is nil and the device is
	// written: the configuration's reason for `safe: none`, or the
	// board's (a serial line has no state to return to).
	NoSafeReason string `json:"noSafeReason,omitempty"`

	// Pin is the GPIO line a gpio.input, gpio.output or pwm device is
	// wired to, as the configuration names it ("GPIO17", "pin11",
	// "pinctrl-rp1:17"); the sim board's devices have documented pins of
	// their own. A gateway extension of the descriptor: it lets a client
	// that thinks in pins (gpiozero, a wiring diagram) find the device,
	// without a second copy of the wiring outside the gateway.
	Pin string `json:"pin,omitempty"`
	// Frequency is a pwm device's frequency in Hz (configuration, not a
	// value: the spec's §6 makes the duty cycle the value), so a client
	// can tell the frequency it will get. A gateway extension too.
	Frequency float64 `json:"frequency,omitempty"`
	// Bus, Address, Chip and Channel say where a device on a bus sits,
	// as the configuration names it, so that a client that thinks in
	// buses and chips (gpiozero's MCP3008(channel=0), a wiring diagram)
	// finds it: Bus is "/dev/spidev0.0" (SPI bus 0, chip select 0),
	// "/dev/i2c-1", "w1", "iio" or "hwmon"; Address is the device's on
	// that bus ("0x40", the 1-Wire id "28-0316a2797dff", the kernel's
	// device name "dht11"); Chip is the chip's or driver's name
	// ("mcp3008", "pca9685", "ds18b20"); Channel is the input or output
	// of the chip the device is (an ADC's input, a PCA9685's output).
	// Gateway extensions too.
	Bus     string `json:"bus,omitempty"`
	Address string `json:"address,omitempty"`
	Chip    string `json:"chip,omitempty"`
	Channel *int   `json:"channel,omitempty"`

	// MinPulseUs and MaxPulseUs are an x.servo's pulse widths in µs at
	// its schema's minimum and maximum angle, linear between, so that a
	// client that thinks in pulses (gpiozero's Servo, whose duty cycle
	// is a pulse over its 20 ms frame) converts to the angle. Rate is its
	// speed limit in degrees a second (0: it moves at once). Gateway
	// extensions too.
	MinPulseUs float64 `json:"minPulseUs,omitempty"`
	MaxPulseUs float64 `json:"maxPulseUs,omitempty"`
	Rate       float64 `json:"rate,omitempty"`
	// Differential marks an ADC channel read as a pair: Channel is the
	// datasheet's differential configuration (on an MCP3008, 0 is CH0
	// against CH1, 1 is CH1 against CH0). A gateway extension too.
	Differential bool `json:"differential,omitempty"`

	// Modbus says where an x.modbus device's value sits on its unit;
	// Bus is then the line (its port, or tcp://host:port) and Address
	// the unit id ("1"). A gateway extension too.
	Modbus *ModbusRegister `json:"modbus,omitempty"`
}

// ModbusRegister is where an x.modbus device's value sits on its unit
// and how it is encoded there.
type ModbusRegister struct {
	// Table is "coil", "discrete", "input" or "holding".
	Table string `json:"table"`
	// Address is the first coil or register, 0-based as on the wire
	// (the "40001" of a manual's holding register 1 is address 0).
	Address int `json:"address"`
	// Type is bool, int16, uint16, int32, uint32, float32, int64,
	// uint64 or float64; Words is how many registers it spans (1 for a
	// coil or discrete input: one bit).
	Type  string `json:"type"`
	Words int    `json:"words,omitempty"`
	// Swap is the order of the value's bytes across its registers when
	// it is not big-endian, high word first ("ABCD"): "byte" (BADC),
	// "word" (CDAB) or "word_byte" (DCBA).
	Swap string `json:"swap,omitempty"`
	// Scale and Offset turn the raw number into the value
	// (raw×scale+offset); absent, 1 and 0.
	Scale  float64 `json:"scale,omitempty"`
	Offset float64 `json:"offset,omitempty"`
}

var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,63}$`)

// ValidID reports whether id is a well-formed device id.
func ValidID(id string) bool { return idPattern.MatchString(id) }

// Device is one addressable thing with one value. A Device only describes
// itself; what it can do is told by the optional interfaces Reader and
// Writer, so that an input needs no Write and an output no Read.
//
// The state of an output is the value last applied, which the registry
// keeps: an output does not implement Reader.
type Device interface {
	Descriptor() Descriptor
}

// Reader is a device that can take a fresh measurement (a sensor, an
// input pin). hal/read calls it unless the cached value is young enough.
type Reader interface {
	Read(ctx context.Context) (Reading, error)
}

// Writer is a device that accepts values. Write is called with a value
// that already fits the device's schema and passed every safety check; it
// returns when the value is at the hardware, or with ctx's error when the
// hardware does not answer in time.
type Writer interface {
	Write(ctx context.Context, req WriteRequest) (WriteResult, error)
}

// Reading is one value with the time it was taken.
type Reading struct {
	Value any
	TS    time.Time
}

// WriteRequest is a value to apply and, for line devices, whether the
// caller waits for the instrument's next line: Reply waits for it (no
// line is an error), ReplyWithin waits at most that long and takes none
// as no answer. Other devices ignore both.
type WriteRequest struct {
	Value       any
	Reply       bool
	ReplyWithin time.Duration
	// Safe: the Hub drives the device to its safe value on its own (an
	// emergency stop, a broken interlock, maxOnMs, the shutdown). A
	// device that paces its moves (a servo's rate) goes there at once:
	// nothing may slow a stop.
	Safe bool
}

// WriteResult says what a write did. For most devices the written value
// becomes the device's value (Keep is false). A line device keeps its value
// (the last line received): Keep is true, and Reply carries the answer
// line when one was asked for.
type WriteResult struct {
	Keep  bool
	Reply *Reading
}

// Reporter is how a device tells the Hub about what it did not get from a
// request: an edge on an input, a sensor poll, a line from an instrument,
// a fault or a recovery. The registry hands one to each device it adds.
// Calls never block on slow clients.
type Reporter interface {
	Value(v any, ts time.Time)
	State(s State, fault string)
}

// Runner is a device with work of its own (polling, reading a port). The
// board starts Run after the device is registered; Run returns when ctx is
// done.
type Runner interface {
	Run(ctx context.Context, r Reporter)
}

// ErrNoValue is returned by a read of a device that has no value yet.
var ErrNoValue = errors.New("device has no value yet")

// ErrOffline is returned (wrapped) by a device whose hardware is not
// there (an unplugged USB adapter, an adapter not running). The device
// reports its offline state itself; a failed request on it is no fault.
var ErrOffline = errors.New("device is offline")
