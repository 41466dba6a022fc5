package board

import (
	"fmt"
	"github.com/openhal/gateway/internal/hw/pwm"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
	"periph.io/x/conn/v3/gpio"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/board/profile"
	"github.com/openhal/gateway/internal/hw/gpioline"
	"github.com/openhal/gateway/internal/hw/sensor"
	"github.com/openhal/gateway/internal/hw/serialline"
)

// Board names besides the profiles' (profile.Names).
const (
	// BoardSim is the simulated bench (board/sim).
	BoardSim = "sim"
	// BoardAuto detects the board from the device tree when the gateway
	// starts. `gateway check` cannot know it, so it judges the devices as
	// the generic profile would and refuses header pins (pin11), which
	// only a known board has; see docs/configuration.md.
	BoardAuto = "auto"
)

// BoardNames lists every value board: accepts, for messages.
func BoardNames() []string {
	return append([]string{BoardSim, BoardAuto}, profile.Names()...)
}

func knownBoard(name string) bool { return slices.Contains(BoardNames(), name) }

// Defaults of the hardware fields a file may leave out.
const (
	// DefaultSensorInterval is how often a sensor is read without
	// `interval:`.
	DefaultSensorInterval = time.Second
	// MaxPWMFrequency bounds a hardware PWM's frequency: the kernel sets
	// period and duty in whole nanoseconds, so above 10 MHz (100 ns) the
	// duty cycle no longer has 1 % steps.
	MaxPWMFrequency = 10e6
	// MaxSoftwarePWMFrequency bounds a software PWM's frequency: its
	// edges run up to about 1 ms late (hw/pwm's measurement), which is a
	// tenth of a period at this bound.
	MaxSoftwarePWMFrequency = pwm.MaxSoftwareHz
)

// hwKinds are the kinds a real board's device may have, in the order
// messages list them.
var hwKinds = []string{device.KindGPIOOutput, device.KindGPIOInput, device.KindPWM, device.KindSensor, device.KindSerial, KindServo, KindCounter, KindModbus}

// kindFields lists the fields each kind takes beyond those every kind
// takes (commonFields); every other hardware field is refused.
var kindFields = map[string][]string{
	device.KindGPIOOutput: {"pin", "invert", "initial"},
	device.KindGPIOInput:  {"pin", "pull", "edge", "debounce", "invert"},
	device.KindPWM:        {"pin", "initial", "frequency", "pwm"},
	device.KindSensor:     {"driver", "bus", "address", "interval", "thresholds", "options", "channel", "differential", "vref", "maxHz", "scale", "offset", "unit", "quantity", "w1Id", "name", "index", "quantities"},
	device.KindSerial:     {"port", "baud", "dataBits", "parity", "stopBits", "delimiter"},
	KindServo:             {"pin", "pwm", "frequency", "initial", "minPulseUs", "maxPulseUs", "minAngle", "maxAngle", "rate"},
	KindCounter:           {"pin", "pull", "edge", "debounce", "perPulse", "unit", "interval", "window"},
	KindModbus:            {"bus", "slave", "table", "address", "type", "swap", "scale", "offset", "unit", "enum", "minimum", "maximum", "interval"},
}

// commonFields are the fields of every device entry; risk, safe,
// noSafeReason, confirmTtl and rules are judged against the descriptor
// instead (a read-only device has no safe value).
var commonFields = []string{"kind", "label", "tags", "risk", "safe", "noSafeReason", "confirmTtl", "rules"}

// PWMConfig says what drives a pwm device. In the file it is either the
// word `software` or a mapping `{chip, channel}`; either part of the
// mapping may be left out on a Raspberry Pi, whose profile knows which
// channel the pin carries.
type PWMConfig struct {
	// Software drives the pin from a loop in the gateway.
	Software bool
	// Chip is the PWM controller's platform device ("fe20c000.pwm", as
	// the board profile names it) or a sysfs chip name ("pwmchip0").
	Chip string
	// Channel is the channel within the chip (pwmN); nil: the one the
	// pin carries.
	Channel *int
}

func (p *PWMConfig) decodeNode(d *decoder, path string, n *yaml.Node) {
	const want = `want "software" or a hardware channel {chip, channel}, got %s`
	switch {
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" && n.Value == "software":
		*p = PWMConfig{Software: true}
	case n.Kind == yaml.MappingNode:
		var hw struct {
			Chip    string `yaml:"chip"`
			Channel *int   `yaml:"channel"`
		}
		d.mapping(path, n, reflect.ValueOf(&hw).Elem())
		*p = PWMConfig{Chip: hw.Chip, Channel: hw.Channel}
	default:
		d.fail(path, n.Line, want, describe(n))
	}
}

// SensorOptions are the sensor drivers' settings. Each driver takes only
// its own (drivers[...].options); every field left out keeps the driver's
// default.
type SensorOptions struct {
	// Channels are the ADS1115 inputs to measure, 0..3; empty: all four.
	Channels []int `yaml:"channels"`
	// FullScale is the ADS1115's gain, named by its full-scale range in
	// mV: 6144, 4096, 2048 (default), 1024, 512 or 256.
	FullScale *int `yaml:"fullScale"`
	// DataRate is the ADS1115's samples per second: 8, 16, 32, 64, 128
	// (default), 250, 475 or 860.
	DataRate *int `yaml:"dataRate"`
	// Oversampling is the BME280's, per quantity: 1 (default), 2, 4, 8
	// or 16.
	Oversampling *Oversampling `yaml:"oversampling"`
	// Filter is the BME280's IIR filter coefficient: 0 (off, default),
	// 2, 4, 8 or 16.
	Filter *int `yaml:"filter"`
	// Repeatability is the SHT3x's: high (default), medium or low.
	Repeatability string `yaml:"repeatability"`
	// Precision is the SHT4x's: high (default), medium or low.
	Precision string `yaml:"precision"`
	// Resolution is the MCP9808's step in °C: 0.0625 (default), 0.125,
	// 0.25 or 0.5.
	Resolution *float64 `yaml:"resolution"`
	// Extended selects the TMP102's 13-bit mode (up to 150 °C).
	Extended *bool `yaml:"extended"`
	// Bits is the TMP105's resolution, 9 to 12 (default 12).
	Bits *int `yaml:"bits"`
}

// Oversampling is the BME280's oversampling of each quantity.
type Oversampling struct {
	Temperature *int `yaml:"temperature"`
	Pressure    *int `yaml:"pressure"`
	Humidity    *int `yaml:"humidity"`
}

// driver is what the configuration knows of a sensor driver without
// making one: where it answers, what it measures, which options it takes.
type driver struct {
	addrs      []int    // the addresses the chip answers at
	options    []string // its fields of SensorOptions
	quantities func(SensorOptions) []sensor.Quantity
}

var (
	celsius     = sensor.Quantity{Name: "temperature", Unit: "Cel"}
	relHumidity = sensor.Quantity{Name: "humidity", Unit: "%RH"}
	pressure    = sensor.Quantity{Name: "pressure", Unit: "Pa"}
)

func fixed(q ...sensor.Quantity) func(SensorOptions) []sensor.Quantity {
	return func(SensorOptions) []sensor.Quantity { return q }
}

func addrRange(lo, hi int) []int {
	var out []int
	for a := lo; a <= hi; a++ {
		out = append(out, a)
	}
	return out
}

// drivers are the sensor drivers of hw/i2c, with the addresses their New
// accepts and the quantities their Quantities returns.
var drivers = map[string]driver{
	"bme280":  {[]int{0x76, 0x77}, []string{"oversampling", "filter"}, fixed(celsius, relHumidity, pressure)},
	"sht3x":   {[]int{0x44, 0x45}, []string{"repeatability"}, fixed(celsius, relHumidity)},
	"sht4x":   {[]int{0x44, 0x45, 0x46}, []string{"precision"}, fixed(celsius, relHumidity)},
	"ads1115": {addrRange(0x48, 0x4B), []string{"channels", "fullScale", "dataRate"}, adcQuantities},
	"mcp9808": {addrRange(0x18, 0x1F), []string{"resolution"}, fixed(celsius)},
	"tmp102":  {addrRange(0x48, 0x4B), []string{"extended"}, fixed(celsius)},
	"tmp105":  {addrRange(0x48, 0x4F), []string{"bits"}, fixed(celsius)},
}

// driverNames lists the drivers in the order messages name them.
var driverNames = []string{"bme280", "sht3x", "sht4x", "ads1115", "mcp9808", "tmp102", "tmp105", "mcp3004", "mcp3008", "mcp3204", "mcp3208", "ds18b20", "ds18s20", "ds1822", "ds1825", "iio", "hwmon"}

// adcQuantities are the ADS1115's inputs, ain0..ain3 in volts, as its
// driver names them: the configured channels in order, or all four.
func adcQuantities(o SensorOptions) []sensor.Quantity {
	chs := slices.Sorted(slices.Values(o.Channels))
	if len(chs) == 0 {
		chs = []int{0, 1, 2, 3}
	}
	var q []sensor.Quantity
	for i, ch := range chs {
		if ch >= 0 && ch <= 3 && (i == 0 || chs[i-1] != ch) {
			q = append(q, sensor.Quantity{Name: "ain" + strconv.Itoa(ch), Unit: "V"})
		}
	}
	return q
}

// hardwareDescriptors describes the devices a real board's file declares,
// sorted by id, less those of a missing or unknown kind or driver: no
// schema can be given to them (the validator reports them).
func (c *Config) hardwareDescriptors() []device.Descriptor {
	var out []device.Descriptor
	for _, id := range slices.Sorted(maps.Keys(c.Devices)) {
		if d, ok := c.Devices[id].descriptor(id); ok {
			d = c.onChip(d, c.Devices[id])   // servo.go
			d = c.onModbus(d, c.Devices[id]) // modbus.go
			out = append(out, c.expanderDescriptor(d, c.Devices[id]))
		}
	}
	return out
}

// descriptor describes the device dc declares, if its kind is known.
func (dc DeviceConfig) descriptor(id string) (device.Descriptor, bool) {
	d := device.Descriptor{
		ID: id, Kind: dc.Kind, Label: dc.Label, Source: "board",
		Access: device.AccessReadWrite, Risk: device.RiskHigh,
		Safe: DefaultSafe(dc.Kind), State: device.StateOK, Tags: slices.Clone(dc.Tags),
	}
	zero, hundred, maxLen := 0.0, 100.0, serialline.MaxLine
	switch dc.Kind {
	case device.KindGPIOOutput:
		d.Schema = device.Schema{Type: device.TypeBoolean}
		d.Pin = strings.TrimSpace(dc.Pin)
	case device.KindGPIOInput:
		d.Schema = device.Schema{Type: device.TypeBoolean}
		d.Access, d.Risk = device.AccessRead, device.RiskLow
		d.Pin = strings.TrimSpace(dc.Pin)
	case device.KindPWM:
		d.Schema = device.Schema{Type: device.TypeNumber, Minimum: &zero, Maximum: &hundred, Unit: "%"}
		d.Pin = strings.TrimSpace(dc.Pin)
		if dc.Frequency != nil {
			d.Frequency = *dc.Frequency
		}
	case device.KindSensor:
		if adc, ok := dc.SPIADC(); ok {
			d = dc.describeADC(d, adc)
			break
		}
		drv, ok := sensorDriver(dc)
		if !ok {
			return device.Descriptor{}, false
		}
		props := map[string]device.Schema{}
		for _, q := range drv.quantities(dc.options()) {
			props[q.Name] = device.Schema{Type: device.TypeNumber, Unit: q.Unit}
		}
		d.Schema = device.Schema{Type: device.TypeObject, Properties: props}
		d.Access, d.Risk = device.AccessRead, device.RiskLow
		d.Bus, d.Chip = i2cBusPath(dc.Bus), dc.Driver
		if dc.Address != nil {
			d.Address = hexAddr(*dc.Address)
		}
		dc.kernelPlace(&d)
	case device.KindSerial:
		d.Schema = device.Schema{Type: device.TypeString, MaxLength: &maxLen}
		d.NoSafeReason = serialNoSafe
	case KindServo:
		d = dc.servoDescriptor(d)
	case KindCounter:
		d = dc.counterDescriptor(d) // hardware_counter.go
	case KindModbus:
		d = dc.modbusDescriptor(d) // modbus.go
	default:
		return device.Descriptor{}, false
	}
	if dc.Risk != nil {
		d.Risk = *dc.Risk
	}
	if d.Access.CanWrite() {
		d = dc.applySafe(d)
	}
	return d, true
}

func (dc DeviceConfig) options() SensorOptions {
	if dc.Options == nil {
		return SensorOptions{}
	}
	return *dc.Options
}

// InitialValue is the value an output or a pwm device starts at: its
// initial, else its safe value, else off (false, or 0 %) when it has
// safe: none. It is nil for the other kinds.
func (dc DeviceConfig) InitialValue() any {
	switch {
	case dc.Kind != device.KindGPIOOutput && dc.Kind != device.KindPWM && dc.Kind != KindServo:
		return nil
	case dc.Initial != nil:
		return dc.Initial
	case dc.Safe != nil && !dc.safeNone():
		return dc.Safe
	}
	return DefaultSafe(dc.Kind)
}

// PortConfig is a serial device's port as serialline takes it, with the
// 8N1 and "\n" defaults of the fields the file leaves out.
func (dc DeviceConfig) PortConfig() serialline.PortConfig {
	pc := serialline.PortConfig{Path: dc.Port, Parity: dc.Parity, StopBits: dc.StopBits}
	if dc.Baud != nil {
		pc.Baud = *dc.Baud
	}
	if dc.DataBits != nil {
		pc.DataBits = *dc.DataBits
	}
	if len(dc.Delimiter) == 1 {
		pc.Delimiter = dc.Delimiter[0]
	}
	return pc.WithDefaults()
}

// pulls and edges are the words of pull: and edge:.
var (
	pulls = map[string]gpio.Pull{"none": gpio.Float, "up": gpio.PullUp, "down": gpio.PullDown}
	edges = map[string]gpio.Edge{"both": gpio.BothEdges, "rising": gpio.RisingEdge, "falling": gpio.FallingEdge}
)

// InputOpts is a gpio.input's settings as gpioline takes them: pull none
// (the line's bias disabled) and both edges unless the file says
// otherwise.
func (dc DeviceConfig) InputOpts() gpioline.InputOpts {
	o := gpioline.InputOpts{Pull: gpio.Float, Edge: gpio.BothEdges}
	if p, ok := pulls[dc.Pull]; ok {
		o.Pull = p
	}
	if e, ok := edges[dc.Edge]; ok {
		o.Edge = e
	}
	if dc.Debounce != nil {
		o.Debounce = *dc.Debounce
	}
	if dc.Invert != nil {
		o.Invert = *dc.Invert
	}
	return o
}

// SensorInterval is how often a sensor is read.
func (dc DeviceConfig) SensorInterval() time.Duration {
	if dc.Interval != nil {
		return *dc.Interval
	}
	return DefaultSensorInterval
}

// i2cBusPath is an I2C bus as its device file: "1" is "/dev/i2c-1".
func i2cBusPath(bus string) string {
	if bus == "" || strings.HasPrefix(bus, "/") {
		return bus
	}
	return "/dev/i2c-" + bus
}

// listWords joins words as "a, b or c".
func listWords(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// addrText names a driver's addresses: "0x44 or 0x45", "0x48 to 0x4b".
func addrText(addrs []int) string {
	if len(addrs) > 3 {
		return fmt.Sprintf("%#02x to %#02x", addrs[0], addrs[len(addrs)-1])
	}
	var words []string
	for _, a := range addrs {
		words = append(words, fmt.Sprintf("%#02x", a))
	}
	return listWords(words)
}
