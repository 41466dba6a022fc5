package board

import (
	"maps"
	"slices"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/board/sim"
)

// DeviceConfig is one entry of `devices:`, keyed by device id.
//
// On the sim board an entry changes a device the board already has: only
// Risk, Safe, ConfirmTTL and Rules may be set. On a real board an entry
// declares a device: Kind says what it is and the fields of that kind say
// where it is (pin, bus, port...) and how it behaves; hardware.go and
// docs/configuration.md list which fields each kind takes. A nil pointer,
// an empty string or a nil map is a field the file leaves out.
type DeviceConfig struct {
	// Kind is gpio.output, gpio.input, pwm, sensor, serial, servo,
	// counter or modbus (real boards only).
	Kind  string   `yaml:"kind"`
	Label string   `yaml:"label"`
	Tags  []string `yaml:"tags"`

	// Pin names the GPIO line of a gpio.output, gpio.input or pwm
	// device: GPIO17, pin11, CHIPLABEL:17 or gpiochipN:17.
	Pin      string         `yaml:"pin"`
	Pull     string         `yaml:"pull"`     // gpio.input: up, down or none
	Edge     string         `yaml:"edge"`     // gpio.input: both, rising or falling
	Debounce *time.Duration `yaml:"debounce"` // gpio.input
	Invert   *bool          `yaml:"invert"`   // gpio.input, gpio.output: active low
	// Initial is the value an output or a pwm device starts at; nil:
	// its safe value, else off (false, 0).
	Initial any `yaml:"initial"`

	Frequency *float64   `yaml:"frequency"` // pwm: Hz
	PWM       *PWMConfig `yaml:"pwm"`       // pwm: hardware channel or software

	Driver     string             `yaml:"driver"`     // sensor: bme280, sht3x...
	Bus        string             `yaml:"bus"`        // sensor: "1" or "/dev/i2c-1"
	Address    *int               `yaml:"address"`    // sensor: 7-bit I2C address
	Interval   *time.Duration     `yaml:"interval"`   // sensor: poll interval
	Thresholds map[string]float64 `yaml:"thresholds"` // sensor: by quantity
	Options    *SensorOptions     `yaml:"options"`    // sensor: the driver's

	// SPI ADCs (issue 30, point 1; spiadc.go): a sensor whose driver is
	// mcp3004, mcp3008, mcp3204 or mcp3208, on Bus /dev/spidevB.C.
	Channel      *int     `yaml:"channel"`      // the input, or the differential configuration
	Differential *bool    `yaml:"differential"` // a pair instead of one input against ground
	Vref         *float64 `yaml:"vref"`         // the VREF pin's volts (3.3)
	MaxHz        *float64 `yaml:"maxHz"`        // the SPI clock (1 MHz)
	Scale        *float64 `yaml:"scale"`        // the scaled quantity is voltage×scale+offset
	Offset       *float64 `yaml:"offset"`       // with scale (0)
	Unit         string   `yaml:"unit"`         // with scale: the scaled quantity's unit; counter: perPulse's
	Quantity     string   `yaml:"quantity"`     // with scale: its name ("value")

	// 1-Wire and kernel sensors (issue 30, points 2 and 3; hwcheck_kernel.go).
	W1ID       string   `yaml:"w1Id"`       // sensor, ds18b20...: the kernel's id, 28-0316a2797dff
	Name       string   `yaml:"name"`       // sensor, iio or hwmon: the device's name file (dht11, lm75)
	Index      *int     `yaml:"index"`      // sensor, iio or hwmon: the Nth device of that name (0)
	Quantities []string `yaml:"quantities"` // sensor, iio or hwmon: what to read (temperature, voltage1)

	Port      string `yaml:"port"`      // serial: device path
	Baud      *int   `yaml:"baud"`      // serial
	DataBits  *int   `yaml:"dataBits"`  // serial: 5 to 8 (8)
	Parity    string `yaml:"parity"`    // serial: none, odd, even, mark, space
	StopBits  string `yaml:"stopBits"`  // serial: 1 or 2
	Delimiter string `yaml:"delimiter"` // serial: one byte ("\n")

	// counter (issue 30, point 6; hardware_counter.go): pin, pull, edge,
	// debounce, interval and unit as above, and these.
	PerPulse *float64       `yaml:"perPulse"` // counter: how much of unit one pulse is
	Window   *time.Duration `yaml:"window"`   // counter: the rate's window

	// Servo (issue 30, point 4; servo.go): its calibration and speed.
	MinPulseUs *int     `yaml:"minPulseUs"` // servo: pulse at minAngle in µs (1000)
	MaxPulseUs *int     `yaml:"maxPulseUs"` // servo: pulse at maxAngle in µs (2000)
	MinAngle   *float64 `yaml:"minAngle"`   // servo: degrees (0)
	MaxAngle   *float64 `yaml:"maxAngle"`   // servo: degrees (180)
	Rate       *float64 `yaml:"rate"`       // servo: degrees a second; nil: moves at once

	// Modbus (issue 31; modbus.go, hwcheck_modbus.go): bus names a line
	// of modbus:, address is the first coil or register (0-based, as on
	// the wire), scale, offset, unit and interval as above, and these.
	Slave   *int              `yaml:"slave"`   // modbus: the unit id
	Table   string            `yaml:"table"`   // modbus: coil, discrete, input or holding
	Type    string            `yaml:"type"`    // modbus: bool, int16, uint16, int32, uint32, float32, int64, uint64, float64
	Swap    string            `yaml:"swap"`    // modbus: none, byte, word or word_byte
	Enum    map[string]string `yaml:"enum"`    // modbus: raw value -> label
	Minimum *float64          `yaml:"minimum"` // modbus: the schema's minimum
	Maximum *float64          `yaml:"maximum"` // modbus: the schema's maximum

	// Risk overrides the device's risk: low or high.
	Risk *device.Risk `yaml:"risk"`
	// Safe overrides the device's safe value (nil: keep the board's, or
	// on a real board its kind's, DefaultSafe). It is a value as
	// encoding/json would decode it: bool, float64, string or
	// map[string]any; the word SafeNone says the device has none.
	Safe any `yaml:"safe"`
	// NoSafeReason says why a device has `safe: none`; it is required
	// with it, and the descriptor and the stop's result repeat it.
	NoSafeReason string `yaml:"noSafeReason"`
	// ConfirmTTL is the lifetime of Confirmation Requests to write this
	// device.
	ConfirmTTL *time.Duration `yaml:"confirmTtl"`
	Rules      RulesConfig    `yaml:"rules"`
}

// RulesConfig is a device's safety rules as the file states them
// (openhal-0.1 §6). Rules merges them with the board's own.
type RulesConfig struct {
	Minimum   *float64 `yaml:"minimum"`
	Maximum   *float64 `yaml:"maximum"`
	RateLimit *int     `yaml:"rateLimit"` // accepted writes per sliding second
	MaxOnMs   *int64   `yaml:"maxOnMs"`   // milliseconds away from safe
	// Interlock replaces the board's interlock of the device when it is
	// not nil; an empty list (`interlock: []`) removes it.
	Interlock []Condition `yaml:"interlock"`
}

// Condition is one interlock condition as the file states it.
type Condition struct {
	Device string `yaml:"device"`
	Op     string `yaml:"op"`    // eq, ne, lt, le, gt or ge
	Value  any    `yaml:"value"` // bool, float64, string or map[string]any
}

// builtin returns the devices of c's board and their own rules, before
// the file changes anything: the sim board's, or on a real board the
// devices the file declares (which have no rules of their own); none for
// a board that is not known.
func (c *Config) builtin() ([]device.Descriptor, map[string]device.Rules) {
	switch {
	case c.Board == BoardSim:
		return sim.Descriptors(c.Sim), sim.DefaultRules()
	case knownBoard(c.Board):
		return c.hardwareDescriptors(), nil
	}
	return nil, nil
}

// Overrides returns the risks and safe values the file sets, by device
// id, for sim.New: the sim devices then serve them as their own. It is
// empty for a real board, whose descriptors carry them already.
func (c *Config) Overrides() map[string]sim.Override {
	out := map[string]sim.Override{}
	if c.Board != BoardSim {
		return out
	}
	for id, dc := range c.Devices {
		var o sim.Override
		if dc.Risk != nil {
			o.Risk = *dc.Risk
		}
		o.Safe = dc.Safe
		if dc.safeNone() {
			o.Safe, o.NoSafe = nil, dc.NoSafeReason
		}
		if o.Risk != "" || o.Safe != nil || o.NoSafe != "" {
			out[id] = o
		}
	}
	return out
}

// Descriptors returns the descriptors of the board's devices with the
// file's overrides applied: what the registry serves once the board runs.
// It starts nothing, so `gateway check` can judge rules against them. On
// a real board they are the declared devices, sorted by id, less those
// whose kind (or sensor driver) is missing or unknown.
func (c *Config) Descriptors() []device.Descriptor {
	descs, _ := c.builtin()
	over := c.Overrides()
	for i, d := range descs {
		descs[i] = over[d.ID].Apply(d)
	}
	return descs
}

// Rules returns every device's effective safety rules, for the Hub: the
// board's own merged with the file's, where each field the file sets
// wins and an interlock list in the file replaces the board's. Devices
// left without any rule are not in the map.
func (c *Config) Rules() map[string]device.Rules {
	_, rules := c.builtin()
	if rules == nil {
		rules = map[string]device.Rules{}
	}
	for _, id := range slices.Sorted(maps.Keys(c.Devices)) {
		r := c.Devices[id].merge(rules[id])
		if r.Empty() {
			delete(rules, id)
		} else {
			rules[id] = r
		}
	}
	return rules
}

// merge returns r with dc's settings in place of its own.
func (dc DeviceConfig) merge(r device.Rules) device.Rules {
	f := dc.Rules
	if f.Minimum != nil {
		r.Minimum = ptr(*f.Minimum)
	}
	if f.Maximum != nil {
		r.Maximum = ptr(*f.Maximum)
	}
	if f.RateLimit != nil {
		r.RateLimit = *f.RateLimit
	}
	if f.MaxOnMs != nil {
		r.MaxOn = time.Duration(*f.MaxOnMs) * time.Millisecond
	}
	if f.Interlock != nil {
		r.Interlock = nil // an empty list leaves none
		for _, cond := range f.Interlock {
			r.Interlock = append(r.Interlock, cond.device())
		}
	}
	if dc.ConfirmTTL != nil {
		r.ConfirmTTL = *dc.ConfirmTTL
	}
	return r
}

func (c Condition) device() device.Condition {
	return device.Condition{Device: c.Device, Op: c.Op, Value: c.Value}
}

// StopButton returns the id of the input configured as the emergency stop
// button, or "".
func (c *Config) StopButton() string { return c.StopButtonID }

func ptr[T any](v T) *T { return &v }
