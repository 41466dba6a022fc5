package board

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"periph.io/x/conn/v3/gpio"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/board/profile"
	"github.com/openhal/gateway/internal/hw/gpioline"
	"github.com/openhal/gateway/internal/hw/serialline"
)

// loadExample parses one of docs/examples.
func loadExample(t *testing.T, name string) *Config {
	t.Helper()
	c, err := Load(filepath.Join("..", "..", "docs", "examples", name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return c
}

// TestBenchExamples: the example benches parse and validate, and describe
// the devices that the Hub will serve and judge rules against.
func TestBenchExamples(t *testing.T) {
	for _, tt := range []struct {
		file, board string
		ids         []string
	}{
		{"bench-rpi4.yaml", "rpi4b", []string{"bench.climate", "bench.door", "bench.fan", "bench.meter", "bench.relay", "bench.stop"}},
		{"bench-rpi5.yaml", "rpi5", []string{"bench.climate", "bench.door", "bench.fan", "bench.meter", "bench.relay", "bench.stop", "bench.supply"}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			c := loadExample(t, tt.file)
			if c.Board != tt.board {
				t.Errorf("board %q, want %q", c.Board, tt.board)
			}
			descs := c.Descriptors()
			var ids []string
			byID := map[string]device.Descriptor{}
			for _, d := range descs {
				ids = append(ids, d.ID)
				byID[d.ID] = d
				if d.Source != "board" || d.State != device.StateOK {
					t.Errorf("%s: source %q state %q", d.ID, d.Source, d.State)
				}
			}
			if !reflect.DeepEqual(ids, tt.ids) {
				t.Errorf("devices %q, want %q", ids, tt.ids)
			}
			relay := byID["bench.relay"]
			if relay.Kind != device.KindGPIOOutput || relay.Risk != device.RiskHigh || relay.Safe != false ||
				relay.Schema.Type != device.TypeBoolean || relay.Label != "Heater relay" {
				t.Errorf("bench.relay = %+v", relay)
			}
			climate := byID["bench.climate"].Schema
			if climate.Type != device.TypeObject || len(climate.Properties) != 3 ||
				climate.Properties["temperature"].Unit != "Cel" || climate.Properties["pressure"].Unit != "Pa" {
				t.Errorf("bench.climate schema = %+v", climate)
			}
			rules := c.Rules()
			want := []device.Condition{{Device: "bench.door", Op: "eq", Value: false}}
			if r := rules["bench.relay"]; !reflect.DeepEqual(r.Interlock, want) || r.MaxOn != 10*time.Minute || r.ConfirmTTL != time.Minute {
				t.Errorf("bench.relay rules = %+v", r)
			}
			if c.StopButton() != "bench.stop" {
				t.Errorf("stop button %q", c.StopButton())
			}
			stop := c.Devices["bench.stop"].InputOpts()
			if stop != (gpioline.InputOpts{Pull: gpio.PullUp, Edge: gpio.BothEdges, Debounce: 20 * time.Millisecond, Invert: true}) {
				t.Errorf("bench.stop InputOpts = %+v", stop)
			}
			meter := c.Devices["bench.meter"].PortConfig()
			if meter.Baud != 9600 || meter.DataBits != 8 || meter.Parity != "none" || meter.StopBits != "1" ||
				meter.Delimiter != '\n' || !strings.HasPrefix(meter.Path, "/dev/serial/by-id/") {
				t.Errorf("bench.meter PortConfig = %+v", meter)
			}
			if v := c.Devices["bench.fan"].InitialValue(); v != 0.0 {
				t.Errorf("bench.fan starts at %v, want 0", v)
			}
			if len(c.Overrides()) != 0 {
				t.Errorf("Overrides() = %v on a real board", c.Overrides())
			}
		})
	}
}

// TestBoardNames: every board name is accepted, with no devices.
func TestBoardNames(t *testing.T) {
	for _, name := range BoardNames() {
		c, err := Parse([]byte("board: " + name + "\n"))
		if err != nil {
			t.Errorf("board %s: %v", name, err)
			continue
		}
		if name != BoardSim && len(c.Descriptors()) != 0 {
			t.Errorf("board %s has devices %+v without any in the file", name, c.Descriptors())
		}
	}
}

const rpi4 = "board: rpi4b\ndevices:\n"

// Devices used by the table below, one per line.
const (
	relay  = "  bench.relay: {kind: gpio.output, pin: GPIO17}\n"
	button = "  bench.stop: {kind: gpio.input, pin: GPIO27}\n"
	th     = "  bench.th: {kind: sensor, driver: sht3x, bus: 1, address: 0x44}\n"
	meter  = "  bench.meter: {kind: serial, port: /dev/ttyUSB0, baud: 9600}\n"
	fan    = "  bench.fan: {kind: pwm, pin: GPIO18, frequency: 25000}\n"
)

// TestHardwareErrors has one fault per file; each must give exactly one
// line.
func TestHardwareErrors(t *testing.T) {
	dev := func(id, fields string) string { return rpi4 + "  " + id + ": {" + fields + "}\n" }
	out := func(fields string) string { return dev("bench.relay", "kind: gpio.output, pin: GPIO17, "+fields) }
	in := func(fields string) string { return dev("bench.stop", "kind: gpio.input, pin: GPIO27, "+fields) }
	sens := func(fields string) string { return dev("bench.th", fields) }
	ser := func(fields string) string { return dev("bench.meter", "kind: serial, "+fields) }
	pwm := func(fields string) string { return dev("bench.fan", "kind: pwm, "+fields) }
	ro := func(id, field string) string {
		return id + " is read-only (access \"r\"): nothing writes it, so " + field + " makes no sense"
	}
	tests := []struct {
		name, yaml, want string
	}{
		// Entries.
		{"no kind", dev("bench.relay", "pin: GPIO17"), "devices.bench.relay.kind: required (gpio.output, gpio.input, pwm, sensor, serial, servo, counter or modbus)"},
		{"unknown kind", dev("bench.relay", "kind: relay, pin: GPIO17"), `devices.bench.relay.kind: unknown kind "relay" (want gpio.output, gpio.input, pwm, sensor, serial, servo, counter or modbus)`},
		{"bad id", dev("Bench.Relay", "kind: gpio.output, pin: GPIO17"), `devices.Bench.Relay: "Bench.Relay" is not a device id: want lowercase letters, digits, '.', '_' or '-', starting with a letter or digit, at most 64`},
		{"empty tag", out("tags: [bench, '']"), `devices.bench.relay.tags[1]: "" is not a tag: want a word without spaces or commas`},
		{"tag twice", out("tags: [bench, bench]"), `devices.bench.relay.tags[1]: tag "bench" listed twice`},
		{"unknown field", out("colour: red"), "devices.bench.relay.colour: unknown field"},
		// Fields of another kind.
		{"initial on an input", in("initial: false"), "devices.bench.stop.initial: a gpio.input device has no initial (initial is for gpio.output, pwm or servo devices)"},
		{"safe on an input", in("safe: false"), "devices.bench.stop.safe: " + ro("bench.stop", "safe")},
		{"pull on an output", out("pull: up"), "devices.bench.relay.pull: a gpio.output device has no pull (pull is for gpio.input or counter devices)"},
		{"pin on a sensor", sens("kind: sensor, driver: sht3x, bus: 1, address: 0x44, pin: GPIO4"), "devices.bench.th.pin: a sensor device has no pin (pin is for gpio.output, gpio.input, pwm, servo or counter devices)"},
		{"baud on an output", out("baud: 9600"), "devices.bench.relay.baud: a gpio.output device has no baud (baud is for serial devices)"},
		{"invert on a pwm", pwm("pin: GPIO18, frequency: 100, invert: true"), "devices.bench.fan.invert: a pwm device has no invert (invert is for gpio.output or gpio.input devices)"},
		{"rules on a sensor", sens("kind: sensor, driver: sht3x, bus: 1, address: 0x44, rules: {rateLimit: 1}"), "devices.bench.th.rules.rateLimit: " + ro("bench.th", "rateLimit")},
		// Pins.
		{"no pin", dev("bench.relay", "kind: gpio.output"), "devices.bench.relay.pin: required for a gpio.output device (a line name GPIO17, a header pin pin11, or CHIP:OFFSET gpiochip0:17)"},
		{"power pin", dev("bench.relay", "kind: gpio.output, pin: pin2"), "devices.bench.relay.pin: pin 2 is 5V power, not a GPIO"},
		{"ground pin", dev("bench.relay", "kind: gpio.output, pin: pin6"), "devices.bench.relay.pin: pin 6 is ground (GND), not a GPIO"},
		{"no such header pin", dev("bench.relay", "kind: gpio.output, pin: pin41"), `devices.bench.relay.pin: "pin41": the Raspberry Pi 4 Model B's header has pins 1 to 40`},
		{"line off the header", dev("bench.relay", "kind: gpio.output, pin: GPIO30"), `devices.bench.relay.pin: "GPIO30": GPIO30 is not on the Raspberry Pi 4 Model B's 40-pin header (GPIO2 to GPIO27); address other lines as pinctrl-bcm2711:30`},
		{"ID EEPROM pin", dev("bench.relay", "kind: gpio.output, pin: pin27"), "devices.bench.relay.pin: pin 27 is ID_SD (GPIO0), reserved for the HAT ID EEPROM, not a user GPIO (write pinctrl-bcm2711:0 to use the line anyway)"},
		{"another model's chip", dev("bench.relay", "kind: gpio.output, pin: 'pinctrl-rp1:17'"), `devices.bench.relay.pin: "pinctrl-rp1:17": pinctrl-rp1 is another Raspberry Pi model's GPIO chip; the Raspberry Pi 4 Model B's header chip is pinctrl-bcm2711`},
		{"offset off the chip", dev("bench.relay", "kind: gpio.output, pin: 'pinctrl-bcm2711:60'"), `devices.bench.relay.pin: "pinctrl-bcm2711:60": offset 60 out of range: pinctrl-bcm2711 has 58 lines (0 to 57)`},
		{"pin used twice", rpi4 + "  bench.heat: {kind: gpio.output, pin: pin11}\n" + relay,
			"devices.bench.relay.pin: GPIO17 is also used by devices.bench.heat"},
		{"pin used twice, by chip and offset", rpi4 + relay + "  bench.stop: {kind: gpio.input, pin: 'pinctrl-bcm2711:17'}\n",
			"devices.bench.stop.pin: pinctrl-bcm2711:17 (GPIO17) is also used by devices.bench.relay"},
		{"pin of a used I2C bus", rpi4 + th + "  bench.led: {kind: gpio.output, pin: pin3}\n",
			"devices.bench.led.pin: pin3 (GPIO2) is SDA of I2C bus 1, used by devices.bench.th"},
		{"pin of a used UART", rpi4 + "  bench.led: {kind: gpio.output, pin: GPIO15}\n  bench.con: {kind: serial, port: /dev/serial0, baud: 115200}\n",
			"devices.bench.led.pin: GPIO15 is RX of serial0 (/dev/serial0), used by devices.bench.con"},
		// Outputs and inputs.
		{"safe of the wrong type", out("safe: 3"), "devices.bench.relay.safe: 3 does not fit bench.relay: want a boolean, got a number"},
		{"initial of the wrong type", out("initial: 'on'"), `devices.bench.relay.initial: "on" does not fit bench.relay: want a boolean, got a string`},
		{"invert not a boolean", out("invert: 1"), "devices.bench.relay.invert: want a boolean (true or false), got 1"},
		{"unknown pull", in("pull: high"), `devices.bench.stop.pull: unknown pull "high" (want up, down or none)`},
		{"unknown edge", in("edge: any"), `devices.bench.stop.edge: unknown edge "any" (want both, rising or falling)`},
		{"negative debounce", in("debounce: -5ms"), "devices.bench.stop.debounce: must not be negative, got -5ms"},
		{"debounce in milliseconds", in("debounce: 20"), `devices.bench.stop.debounce: want a duration such as "10s" or "1m30s", got 20`},
		// PWM.
		{"no frequency", pwm("pin: GPIO18"), "devices.bench.fan.frequency: required (in Hz)"},
		{"zero frequency", pwm("pin: GPIO18, frequency: 0"), "devices.bench.fan.frequency: must be a positive number of Hz, got 0"},
		{"frequency too high", pwm("pin: GPIO18, frequency: 2e7"), "devices.bench.fan.frequency: 2e+07 Hz is above what a hardware PWM can make (1e+07 Hz)"},
		{"software too fast", pwm("pin: GPIO17, frequency: 5000, pwm: software"), "devices.bench.fan.frequency: 5000 Hz is above what a software PWM can make (100 Hz)"},
		{"pin without a channel", pwm("pin: GPIO17, frequency: 100"), "devices.bench.fan.pin: GPIO17 carries no hardware PWM channel on the Raspberry Pi 4 Model B (GPIO12, GPIO13, GPIO18 or GPIO19 do): use one of those, or pwm: software"},
		{"wrong channel", pwm("pin: GPIO18, frequency: 100, pwm: {channel: 1}"), "devices.bench.fan.pwm.channel: GPIO18 carries channel 0 of fe20c000.pwm, not channel 1"},
		{"chip by sysfs number", pwm("pin: GPIO18, frequency: 100, pwm: {chip: pwmchip0, channel: 0}"),
			`devices.bench.fan.pwm.chip: GPIO18's PWM is controller fe20c000.pwm (pwmchip numbers change between kernels: name the controller), got "pwmchip0"`},
		{"negative channel", pwm("pin: GPIO18, frequency: 100, pwm: {channel: -1}"), "devices.bench.fan.pwm.channel: must not be negative, got -1"},
		{"channel used twice", rpi4 + fan + "  bench.pump: {kind: pwm, pin: GPIO12, frequency: 1000}\n",
			"devices.bench.pump.pin: channel 0 of fe20c000.pwm is also used by devices.bench.fan"},
		{"pwm not a word", pwm("pin: GPIO18, frequency: 100, pwm: hardware"), `devices.bench.fan.pwm: want "software" or a hardware channel {chip, channel}, got "hardware"`},
		{"pwm null", pwm("pin: GPIO18, frequency: 100, pwm: null"), `devices.bench.fan.pwm: want "software" or a hardware channel {chip, channel}, got nothing`},
		{"pwm unknown field", pwm("pin: GPIO18, frequency: 100, pwm: {chan: 0}"), "devices.bench.fan.pwm.chan: unknown field"},
		{"initial out of range", pwm("pin: GPIO18, frequency: 100, initial: 150"), "devices.bench.fan.initial: 150 does not fit bench.fan: 150 is above the maximum 100"},
		{"safe out of range", pwm("pin: GPIO18, frequency: 100, safe: -1"), "devices.bench.fan.safe: -1 does not fit bench.fan: -1 is below the minimum 0"},
		// Sensors.
		{"no driver", sens("kind: sensor, bus: 1, address: 0x44"), "devices.bench.th.driver: required (bme280, sht3x, sht4x, ads1115, mcp9808, tmp102, tmp105, mcp3004, mcp3008, mcp3204, mcp3208, ds18b20, ds18s20, ds1822, ds1825, iio or hwmon)"},
		{"unknown driver", sens("kind: sensor, driver: bme281, bus: 1, address: 0x76"), `devices.bench.th.driver: unknown driver "bme281" (want bme280, sht3x, sht4x, ads1115, mcp9808, tmp102, tmp105, mcp3004, mcp3008, mcp3204, mcp3208, ds18b20, ds18s20, ds1822, ds1825, iio or hwmon)`},
		{"no bus", sens("kind: sensor, driver: sht3x, address: 0x44"), "devices.bench.th.bus: required (a bus number such as 1, or /dev/i2c-1)"},
		{"bad bus", sens("kind: sensor, driver: sht3x, bus: i2c1, address: 0x44"), `devices.bench.th.bus: want a bus number (1) or /dev/i2c-N, got "i2c1"`},
		{"reserved bus", sens("kind: sensor, driver: sht3x, bus: /dev/i2c-0, address: 0x44"),
			"devices.bench.th.bus: bus 0 is reserved on the Raspberry Pi 4 Model B: pins 27 (ID_SD) and 28 (ID_SC): the HAT ID EEPROM's bus, read by the firmware at boot; not for devices. Behind an i2c mux on current kernels, so it has no single controller."},
		{"no address", sens("kind: sensor, driver: sht3x, bus: 1"), "devices.bench.th.address: required (the sensor's 7-bit I2C address, such as 0x76)"},
		{"address out of range", sens("kind: sensor, driver: sht3x, bus: 1, address: 0x99"), "devices.bench.th.address: 0x99 is out of range for sht3x (0x44 or 0x45)"},
		{"address of another chip", sens("kind: sensor, driver: bme280, bus: 1, address: 0x44"), "devices.bench.th.address: 0x44 is out of range for bme280 (0x76 or 0x77)"},
		{"address range", sens("kind: sensor, driver: tmp105, bus: 1, address: 0x50"), "devices.bench.th.address: 0x50 is out of range for tmp105 (0x48 to 0x4f)"},
		{"address as text", sens("kind: sensor, driver: sht3x, bus: 1, address: '0x44'"), `devices.bench.th.address: want an integer, got "0x44"`},
		{"address used twice", rpi4 + th + "  bench.th2: {kind: sensor, driver: sht4x, bus: /dev/i2c-1, address: 0x44}\n",
			"devices.bench.th2.address: 0x44 on bus 1 is also used by devices.bench.th"},
		{"zero interval", sens("kind: sensor, driver: sht3x, bus: 1, address: 0x44, interval: 0s"), "devices.bench.th.interval: must be a positive duration, got 0s"},
		{"threshold of another quantity", sens("kind: sensor, driver: sht3x, bus: 1, address: 0x44, thresholds: {pressure: 10}"),
			`devices.bench.th.thresholds.pressure: sht3x measures no "pressure" (want temperature or humidity)`},
		{"negative threshold", sens("kind: sensor, driver: sht3x, bus: 1, address: 0x44, thresholds: {humidity: -1}"), "devices.bench.th.thresholds.humidity: must not be negative, got -1"},
		{"threshold of an unmeasured channel", sens("kind: sensor, driver: ads1115, bus: 1, address: 0x48, options: {channels: [0]}, thresholds: {ain1: 0.1}"),
			`devices.bench.th.thresholds.ain1: ads1115 measures no "ain1" (want ain0)`},
		{"option of another driver", sens("kind: sensor, driver: sht3x, bus: 1, address: 0x44, options: {channels: [0]}"),
			"devices.bench.th.options.channels: not an option of sht3x (its options: repeatability)"},
		{"unknown option", sens("kind: sensor, driver: sht3x, bus: 1, address: 0x44, options: {speed: 3}"), "devices.bench.th.options.speed: unknown field"},
		{"channel out of range", sens("kind: sensor, driver: ads1115, bus: 1, address: 0x48, options: {channels: [0, 4]}"),
			"devices.bench.th.options.channels[1]: channel 4: the inputs are 0 to 3"},
		{"channel twice", sens("kind: sensor, driver: ads1115, bus: 1, address: 0x48, options: {channels: [2, 2]}"),
			"devices.bench.th.options.channels[1]: channel 2 listed twice"},
		{"gain", sens("kind: sensor, driver: ads1115, bus: 1, address: 0x48, options: {fullScale: 3000}"),
			"devices.bench.th.options.fullScale: want 6144, 4096, 2048, 1024, 512 or 256 (mV), got 3000"},
		{"data rate", sens("kind: sensor, driver: ads1115, bus: 1, address: 0x48, options: {dataRate: 100}"),
			"devices.bench.th.options.dataRate: want 8, 16, 32, 64, 128, 250, 475 or 860 (samples per second), got 100"},
		{"oversampling", sens("kind: sensor, driver: bme280, bus: 1, address: 0x76, options: {oversampling: {pressure: 3}}"),
			"devices.bench.th.options.oversampling.pressure: want 1, 2, 4, 8 or 16, got 3"},
		{"filter", sens("kind: sensor, driver: bme280, bus: 1, address: 0x76, options: {filter: 1}"),
			"devices.bench.th.options.filter: want 0, 2, 4, 8 or 16 (0: off), got 1"},
		{"repeatability", sens("kind: sensor, driver: sht3x, bus: 1, address: 0x44, options: {repeatability: best}"),
			`devices.bench.th.options.repeatability: want high, medium or low, got "best"`},
		{"precision", sens("kind: sensor, driver: sht4x, bus: 1, address: 0x44, options: {precision: 3}"),
			`devices.bench.th.options.precision: want high, medium or low, got "3"`},
		{"resolution", sens("kind: sensor, driver: mcp9808, bus: 1, address: 0x18, options: {resolution: 0.1}"),
			"devices.bench.th.options.resolution: want 0.0625, 0.125, 0.25 or 0.5 (°C), got 0.1"},
		{"bits", sens("kind: sensor, driver: tmp105, bus: 1, address: 0x48, options: {bits: 13}"), "devices.bench.th.options.bits: want 9 to 12, got 13"},
		{"extended of a tmp105", sens("kind: sensor, driver: tmp105, bus: 1, address: 0x48, options: {extended: true}"),
			"devices.bench.th.options.extended: not an option of tmp105 (its options: bits)"},
		// Serial.
		{"no port", ser("baud: 9600"), "devices.bench.meter.port: required (such as /dev/ttyUSB0, or better a /dev/serial/by-id/... link)"},
		{"relative port", ser("port: ttyUSB0, baud: 9600"), `devices.bench.meter.port: path "ttyUSB0": not absolute (want /dev/ttyUSB0 or /dev/serial/by-id/...)`},
		{"no baud", ser("port: /dev/ttyUSB0"), "devices.bench.meter.baud: required (bits per second, such as 9600 or 115200)"},
		{"zero baud", ser("port: /dev/ttyUSB0, baud: 0"), "devices.bench.meter.baud: baud 0: want 1 to 4000000"},
		{"baud too high", ser("port: /dev/ttyUSB0, baud: 9600000"), "devices.bench.meter.baud: baud 9600000: want 1 to 4000000"},
		{"data bits", ser("port: /dev/ttyUSB0, baud: 9600, dataBits: 9"), "devices.bench.meter.dataBits: dataBits 9: want 5 to 8"},
		{"parity", ser("port: /dev/ttyUSB0, baud: 9600, parity: evn"), `devices.bench.meter.parity: parity "evn": want none, odd, even, mark or space`},
		{"stop bits", ser("port: /dev/ttyUSB0, baud: 9600, stopBits: 1.5"), `devices.bench.meter.stopBits: stopBits "1.5": not supported by the Linux serial driver; want 1 or 2`},
		{"delimiter of two bytes", ser("port: /dev/ttyUSB0, baud: 9600, delimiter: \"\\r\\n\""), `devices.bench.meter.delimiter: want one byte other than NUL, such as "\n" or "\r", got "\r\n"`},
		{"port used twice", rpi4 + meter + "  bench.psu: {kind: serial, port: /dev/ttyUSB0, baud: 9600}\n",
			"devices.bench.psu.port: /dev/ttyUSB0 is also used by devices.bench.meter"},
		{"maxOnMs on a line device", ser("port: /dev/ttyUSB0, baud: 9600, safe: 'OFF', rules: {maxOnMs: 1000}"),
			"devices.bench.meter.rules.maxOnMs: bench.meter's value is the last line it received, not what was written: it is never at its safe value"},
		// Rules between hardware devices.
		{"interlock on a sensor with lt", rpi4 + th + "  bench.relay: {kind: gpio.output, pin: GPIO17, safe: false, rules: {interlock: [{device: bench.th, op: lt, value: 3}]}}\n",
			"devices.bench.relay.rules.interlock[0].op: op lt needs a number, but bench.th is object"},
		{"interlock on an unknown quantity", rpi4 + th + "  bench.relay: {kind: gpio.output, pin: GPIO17, safe: false, rules: {interlock: [{device: bench.th, op: eq, value: {pressure: 1}}]}}\n",
			"devices.bench.relay.rules.interlock[0].value: value map[pressure:1] does not fit bench.th: pressure: no such property"},
		{"interlock on an undeclared device", rpi4 + "  bench.relay: {kind: gpio.output, pin: GPIO17, safe: false, rules: {interlock: [{device: bench.door, op: eq, value: false}]}}\n",
			`devices.bench.relay.rules.interlock[0].device: no such device "bench.door"`},
		{"interlock on a device with a bad kind", rpi4 + "  bench.door: {kind: contact, pin: GPIO22}\n  bench.relay: {kind: gpio.output, pin: GPIO17, safe: false, rules: {interlock: [{device: bench.door, op: eq, value: false}]}}\n",
			`devices.bench.door.kind: unknown kind "contact" (want gpio.output, gpio.input, pwm, sensor, serial, servo, counter or modbus)`},
		{"minimum on a pwm above its schema", pwm("pin: GPIO18, frequency: 100, rules: {minimum: 120}"), "devices.bench.fan.rules.minimum: 120 is outside bench.fan's range (0 to 100)"},
		{"unknown risk", out("risk: medium"), `devices.bench.relay.risk: want low or high, got "medium"`},
		// The stop button.
		{"output as stop button", rpi4 + relay + "stopButton: bench.relay\n", "stopButton: bench.relay is a gpio.output; a stop button must be a gpio.input"},
		{"undeclared stop button", rpi4 + relay + "stopButton: bench.stop\n", `stopButton: no such device "bench.stop"`},
		{"stop button with a bad kind", rpi4 + "  bench.stop: {pin: GPIO27}\nstopButton: bench.stop\n", "devices.bench.stop.kind: required (gpio.output, gpio.input, pwm, sensor, serial, servo, counter or modbus)"},
		// Other boards.
		{"rpi5 channel", "board: rpi5\ndevices:\n  bench.fan: {kind: pwm, pin: GPIO18, frequency: 100, pwm: {chip: 1f00098000.pwm, channel: 0}}\n",
			"devices.bench.fan.pwm.channel: GPIO18 carries channel 2 of 1f00098000.pwm, not channel 0"},
		{"rpi5 chip of a Pi 4", "board: rpi5\ndevices:\n  bench.relay: {kind: gpio.output, pin: 'pinctrl-bcm2711:17'}\n",
			`devices.bench.relay.pin: "pinctrl-bcm2711:17": pinctrl-bcm2711 is another Raspberry Pi model's GPIO chip; the Raspberry Pi 5's header chip is pinctrl-rp1`},
		{"generic header pin", "board: generic\ndevices:\n  bench.relay: {kind: gpio.output, pin: pin11}\n",
			`devices.bench.relay.pin: "pin11": the generic board has no known header: name the line (GPIO17) or give CHIP:OFFSET (gpiochip0:17)`},
		{"generic pwm without a channel", "board: generic\ndevices:\n  bench.fan: {kind: pwm, pin: PWM0, frequency: 100}\n",
			"devices.bench.fan.pwm: the generic board knows no PWM channels: want {chip, channel} (chip as in /sys/class/pwm: pwmchip0) or software"},
		{"generic pwm channel twice", "board: generic\ndevices:\n  bench.fan: {kind: pwm, frequency: 100, pwm: {chip: pwmchip0, channel: 1}}\n  bench.pump: {kind: pwm, frequency: 100, pwm: {chip: pwmchip0, channel: 1}}\n",
			"devices.bench.pump.pwm: channel 1 of pwmchip0 is also used by devices.bench.fan"},
		{"generic line twice", "board: generic\ndevices:\n  a: {kind: gpio.output, pin: relay}\n  b: {kind: gpio.input, pin: relay}\n",
			"devices.b.pin: relay is also used by devices.a"},
		{"auto header pin", "board: auto\ndevices:\n  bench.relay: {kind: gpio.output, pin: pin11}\n",
			`devices.bench.relay.pin: "pin11" is a header pin, and with board auto the header is known only when the gateway starts: set board (rpi3b, rpi3bplus, rpi4b, rpi5, rpizero2w, generic) or name the line (GPIO17)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkOneFault(t, tt.yaml, tt.want)
		})
	}
}

// TestBrokenBench: every fault of a broken bench at once, each with its
// path, in the order of the file.
func TestBrokenBench(t *testing.T) {
	const file = `board: rpi4b
devices:
  bench.relay:
    kind: gpio.output
    pin: pin2
    pull: up
    safe: 3
  bench.heat:
    kind: gpio.output
    pin: GPIO17
  bench.heat2:
    kind: gpio.output
    pin: pin11
  bench.stop:
    kind: gpio.input
    pin: GPIO27
    edge: any
    initial: false
  bench.th:
    kind: sensor
    driver: sht3x
    bus: 1
    address: 0x99
  bench.th2:
    kind: sensor
    driver: sht4x
    bus: 1
    address: 0x44
  bench.th3:
    kind: sensor
    driver: sht3x
    bus: /dev/i2c-1
    address: 0x44
  bench.x:
    kind: sensor
    driver: bme281
    bus: 1
    address: 0x76
  bench.m:
    kind: serial
    port: /dev/ttyUSB0
    baud: 5000000
    parity: evn
  bench.fan:
    kind: pwm
    pin: GPIO17
    frequency: 0
stopButton: bench.relay
`
	_, err := Parse([]byte(file))
	if err == nil {
		t.Fatal("Parse accepted a broken bench")
	}
	want := []string{
		"devices.bench.relay.pin: pin 2 is 5V power, not a GPIO",
		"devices.bench.relay.pull: a gpio.output device has no pull (pull is for gpio.input or counter devices)",
		"devices.bench.relay.safe: 3 does not fit bench.relay: want a boolean, got a number",
		"devices.bench.heat2.pin: pin11 (GPIO17) is also used by devices.bench.heat",
		`devices.bench.stop.edge: unknown edge "any" (want both, rising or falling)`,
		"devices.bench.stop.initial: a gpio.input device has no initial (initial is for gpio.output, pwm or servo devices)",
		"devices.bench.th.address: 0x99 is out of range for sht3x (0x44 or 0x45)",
		"devices.bench.th3.address: 0x44 on bus 1 is also used by devices.bench.th2",
		`devices.bench.x.driver: unknown driver "bme281" (want bme280, sht3x, sht4x, ads1115, mcp9808, tmp102, tmp105, mcp3004, mcp3008, mcp3204, mcp3208, ds18b20, ds18s20, ds1822, ds1825, iio or hwmon)`,
		"devices.bench.m.baud: baud 5000000: want 1 to 4000000",
		`devices.bench.m.parity: parity "evn": want none, odd, even, mark or space`,
		"devices.bench.fan.pin: GPIO17 is also used by devices.bench.heat",
		"devices.bench.fan.pin: GPIO17 carries no hardware PWM channel on the Raspberry Pi 4 Model B (GPIO12, GPIO13, GPIO18 or GPIO19 do): use one of those, or pwm: software",
		"devices.bench.fan.frequency: must be a positive number of Hz, got 0",
		"stopButton: bench.relay is a gpio.output; a stop button must be a gpio.input",
	}
	if got := strings.Split(err.Error(), "\n"); !reflect.DeepEqual(got, want) {
		t.Errorf("lines\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestValidateHardwareAfterChange: Validate judges a real board's devices
// too, in the order of the file they came from.
func TestValidateHardwareAfterChange(t *testing.T) {
	c := loadExample(t, "bench-rpi4.yaml")
	bad := 0
	relay := c.Devices["bench.relay"]
	relay.Pin = "pin1"
	c.Devices["bench.relay"] = relay
	meter := c.Devices["bench.meter"]
	meter.Baud = &bad
	c.Devices["bench.meter"] = meter
	want := "devices.bench.relay.pin: pin 1 is 3.3V power, not a GPIO\n" +
		"devices.bench.meter.baud: baud 0: want 1 to 4000000"
	if err := c.Validate(); err == nil || err.Error() != want {
		t.Errorf("Validate =\n%v\nwant\n%s", err, want)
	}
}

// TestAutoBoard: with board auto, check judges what needs no header;
// ValidateOn judges the same file against the profile detected at start.
func TestAutoBoard(t *testing.T) {
	const file = `board: auto
devices:
  bench.relay: {kind: gpio.output, pin: GPIO17}
  bench.door: {kind: gpio.input, pin: 'pinctrl-bcm2711:22'}
  bench.th: {kind: sensor, driver: bme280, bus: 1, address: 0x76}
  bench.fan: {kind: pwm, frequency: 25000, pwm: {chip: pwmchip0, channel: 0}}
  bench.led: {kind: pwm, pin: GPIO2, frequency: 100, pwm: software}
`
	c, err := Parse([]byte(file))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	pi4, _ := profile.ByName("rpi4b")
	want := `devices.bench.fan.pin: required for a pwm device (a line name GPIO17, a header pin pin11, or CHIP:OFFSET gpiochip0:17)
devices.bench.led.pin: GPIO2 is SDA of I2C bus 1, used by devices.bench.th`
	if err := c.ValidateOn(pi4); err == nil || err.Error() != want {
		t.Errorf("ValidateOn(rpi4b) =\n%v\nwant\n%s", err, want)
	}
	pi5, _ := profile.ByName("rpi5")
	if err := c.ValidateOn(pi5); err == nil || !strings.Contains(err.Error(), "devices.bench.door.pin: \"pinctrl-bcm2711:22\": pinctrl-bcm2711 is another Raspberry Pi model's GPIO chip") {
		t.Errorf("ValidateOn(rpi5) = %v, want the door's chip refused", err)
	}
}

// TestHardwareDescriptors: each kind's schema, access and default risk.
func TestHardwareDescriptors(t *testing.T) {
	c, err := Parse([]byte(`board: generic
devices:
  o: {kind: gpio.output, pin: relay1}
  i: {kind: gpio.input, pin: button1, label: Button, tags: [panel]}
  p: {kind: pwm, frequency: 50, pwm: software, pin: servo}
  s: {kind: sensor, driver: ads1115, bus: 0, address: 0x49, options: {channels: [3, 1]}}
  t: {kind: sensor, driver: tmp102, bus: 3, address: 0x48, risk: high}
  m: {kind: serial, port: /dev/ttyACM0, baud: 115200, safe: "OUTP OFF"}
`))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	zero, hundred, maxLen := 0.0, 100.0, serialline.MaxLine
	boolean := device.Schema{Type: device.TypeBoolean}
	rw, r := device.AccessReadWrite, device.AccessRead
	low, high := device.RiskLow, device.RiskHigh
	d := func(id, kind, label string, access device.Access, risk device.Risk, s device.Schema, safe any, tags ...string) device.Descriptor {
		return device.Descriptor{ID: id, Kind: kind, Label: label, Source: "board", Access: access, Risk: risk,
			Schema: s, Safe: safe, State: device.StateOK, Tags: tags}
	}
	volts := device.Schema{Type: device.TypeNumber, Unit: "V"}
	// The pin devices carry their pin as the file names it, and a pwm
	// its frequency (gateway extensions of the descriptor).
	wired := func(d device.Descriptor, pin string, freq float64) device.Descriptor {
		d.Pin, d.Frequency = pin, freq
		return d
	}
	// A sensor carries its bus, address and chip (extensions too).
	onBus := func(d device.Descriptor, bus, addr, chip string) device.Descriptor {
		d.Bus, d.Address, d.Chip = bus, addr, chip
		return d
	}
	want := []device.Descriptor{
		wired(d("i", device.KindGPIOInput, "Button", r, low, boolean, nil, "panel"), "button1", 0),
		d("m", device.KindSerial, "", rw, high, device.Schema{Type: device.TypeString, MaxLength: &maxLen}, "OUTP OFF"),
		wired(d("o", device.KindGPIOOutput, "", rw, high, boolean, false), "relay1", 0),
		wired(d("p", device.KindPWM, "", rw, high, device.Schema{Type: device.TypeNumber, Minimum: &zero, Maximum: &hundred, Unit: "%"}, 0.0), "servo", 50),
		onBus(d("s", device.KindSensor, "", r, low, device.Schema{Type: device.TypeObject, Properties: map[string]device.Schema{"ain1": volts, "ain3": volts}}, nil),
			"/dev/i2c-0", "0x49", "ads1115"),
		onBus(d("t", device.KindSensor, "", r, high, device.Schema{Type: device.TypeObject, Properties: map[string]device.Schema{
			"temperature": {Type: device.TypeNumber, Unit: "Cel"}}}, nil), "/dev/i2c-3", "0x48", "tmp102"),
	}
	if got := c.Descriptors(); !reflect.DeepEqual(got, want) {
		t.Errorf("Descriptors() =\n%+v\nwant\n%+v", got, want)
	}
	if v := c.Devices["o"].InitialValue(); v != false {
		t.Errorf("output without initial or safe starts at %v, want false", v)
	}
	if v := c.Devices["s"].InitialValue(); v != nil {
		t.Errorf("sensor's InitialValue = %v, want nil", v)
	}
	if got := c.Devices["s"].SensorInterval(); got != DefaultSensorInterval {
		t.Errorf("SensorInterval() = %v, want the default", got)
	}
	if got := c.Devices["i"].InputOpts(); got != (gpioline.InputOpts{Pull: gpio.Float, Edge: gpio.BothEdges}) {
		t.Errorf("default InputOpts = %+v", got)
	}
	if got := c.Devices["p"].PWM; got == nil || !got.Software {
		t.Errorf("pwm = %+v, want software", got)
	}
}

// TestInitialValue: initial wins over safe, which wins over off.
func TestInitialValue(t *testing.T) {
	tests := []struct {
		dc   DeviceConfig
		want any
	}{
		{DeviceConfig{Kind: device.KindGPIOOutput, Safe: false, Initial: true}, true},
		{DeviceConfig{Kind: device.KindGPIOOutput, Safe: true}, true},
		{DeviceConfig{Kind: device.KindPWM, Safe: 40.0}, 40.0},
		{DeviceConfig{Kind: device.KindPWM}, 0.0},
		{DeviceConfig{Kind: device.KindSerial, Safe: "OFF"}, nil},
	}
	for _, tt := range tests {
		if got := tt.dc.InitialValue(); got != tt.want {
			t.Errorf("%+v: InitialValue() = %v, want %v", tt.dc, got, tt.want)
		}
	}
}

// TestDocsNameEveryField: the configuration reference names every field
// of a device entry and of the sensor options.
func TestDocsNameEveryField(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []any{DeviceConfig{}, SensorOptions{}, Oversampling{}} {
		for name := range fieldsOf(reflect.TypeOf(typ)) {
			if !strings.Contains(string(doc), "`"+name+"`") && !strings.Contains(string(doc), "."+name+"`") {
				t.Errorf("docs/configuration.md does not name the field %s", name)
			}
		}
	}
}

// checkOneFault parses a file with one fault: Parse must fail with an
// Errors of exactly one line, want. The table tests of every part of the
// file (devices, chips, each kind) share it.
func checkOneFault(t *testing.T, yaml, want string) {
	t.Helper()
	c, err := Parse([]byte(yaml))
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Parse = %+v, %v; want an Errors", c, err)
	}
	if err.Error() != want {
		t.Errorf("error\n%s\nwant\n%s", err, want)
	}
	if len(errs) != 1 {
		t.Errorf("%d errors, want 1", len(errs))
	}
}
