package board

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"periph.io/x/conn/v3/physic"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/hw/sensor"
	"github.com/openhal/gateway/internal/hw/spi/mcp3xxx"
)

// A soil probe on CH0 of an MCP3008, scaled to %; the battery on a
// divider, differential CH2-CH3 of the same chip.
const soilBench = rpi4 + `  soil:
    kind: sensor
    driver: mcp3008
    bus: /dev/spidev0.0
    channel: 0
    scale: 30.303
    offset: 0
    unit: "%"
    quantity: moisture
    interval: 5s
    thresholds: {moisture: 1, voltage: 0.01}
  battery:
    kind: sensor
    driver: mcp3008
    bus: "0.0"
    channel: 2
    differential: true
`

func TestSPIADCConfig(t *testing.T) {
	c, err := Parse([]byte(soilBench))
	if err != nil {
		t.Fatal(err)
	}
	soil, ok := c.Devices["soil"].SPIADC()
	if !ok {
		t.Fatal("soil is not an SPI ADC")
	}
	want := ADCConfig{
		Model: mcp3xxx.MCP3008, Bus: "/dev/spidev0.0", Input: mcp3xxx.Input{Channel: 0},
		Vref: 3.3, Clock: physic.MegaHertz,
		Scaled: &ADCScale{Quantity: sensor.Quantity{Name: "moisture", Unit: "%"}, Scale: 30.303},
	}
	if !reflect.DeepEqual(soil, want) {
		t.Errorf("soil = %+v\nwant %+v", soil, want)
	}
	if got := soil.Values(1.65); got["voltage"] != 1.65 || got["moisture"] != 1.65*30.303 {
		t.Errorf("Values(1.65) = %v", got)
	}
	battery, _ := c.Devices["battery"].SPIADC()
	if battery.Bus != "/dev/spidev0.0" || battery.Input != (mcp3xxx.Input{Channel: 2, Differential: true}) || battery.Scaled != nil {
		t.Errorf("battery = %+v", battery)
	}
	if q := battery.Quantities(); !reflect.DeepEqual(q, []sensor.Quantity{{Name: "voltage", Unit: "V"}}) {
		t.Errorf("battery quantities %v", q)
	}
	if _, ok := (DeviceConfig{Kind: device.KindSensor, Driver: "bme280"}).SPIADC(); ok {
		t.Error("a bme280 is an SPI ADC")
	}
	fast := 3.6e6
	if a, _ := (DeviceConfig{Driver: "mcp3004", MaxHz: &fast}).SPIADC(); a.Clock != 3600*physic.KiloHertz {
		t.Errorf("maxHz 3.6e6 is %v", a.Clock)
	}
}

// The descriptor says where the channel sits and what it reads: volts
// from 0 to VREF (what gpiozero's MCP3008 needs for its counts) and the
// scaled quantity over the same span.
func TestSPIADCDescriptors(t *testing.T) {
	c, err := Parse([]byte(soilBench))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]device.Descriptor{}
	for _, d := range c.Descriptors() {
		byID[d.ID] = d
	}
	zero, vref, top := 0.0, 3.3, 3.3*30.303
	ch0, ch2 := 0, 2
	soil := byID["soil"]
	want := device.Descriptor{
		ID: "soil", Kind: device.KindSensor, Source: "board", Access: device.AccessRead, Risk: device.RiskLow,
		State: device.StateOK, Bus: "/dev/spidev0.0", Chip: "mcp3008", Channel: &ch0,
		Schema: device.Schema{Type: device.TypeObject, Properties: map[string]device.Schema{
			"voltage":  {Type: device.TypeNumber, Unit: "V", Minimum: &zero, Maximum: &vref},
			"moisture": {Type: device.TypeNumber, Unit: "%", Minimum: &zero, Maximum: &top},
		}},
	}
	if !reflect.DeepEqual(soil, want) {
		t.Errorf("soil =\n%+v\nwant\n%+v", soil, want)
	}
	battery := byID["battery"]
	if battery.Bus != "/dev/spidev0.0" || battery.Chip != "mcp3008" || battery.Channel == nil || *battery.Channel != ch2 ||
		!battery.Differential || battery.Address != "" || len(battery.Schema.Properties) != 1 {
		t.Errorf("battery = %+v", battery)
	}
	// A negative scale runs the range the other way.
	neg, err := Parse([]byte(rpi4 + "  level: {kind: sensor, driver: mcp3208, bus: '1.2', channel: 7, vref: 4.096, scale: -10, offset: 50, unit: cm, quantity: level}\n"))
	if err != nil {
		t.Fatal(err)
	}
	level := neg.Descriptors()[0].Schema.Properties["level"]
	if *level.Minimum != 50-40.96 || *level.Maximum != 50 || level.Unit != "cm" {
		t.Errorf("level schema %+v %v %v", level, *level.Minimum, *level.Maximum)
	}
	if d := neg.Descriptors()[0]; d.Bus != "/dev/spidev1.2" || *d.Schema.Properties["voltage"].Maximum != 4.096 {
		t.Errorf("level = %+v", d)
	}
}

// TestSPIADCErrors has one fault per file, as TestHardwareErrors.
func TestSPIADCErrors(t *testing.T) {
	adc := func(fields string) string {
		return rpi4 + "  soil: {kind: sensor, driver: mcp3008, bus: /dev/spidev0.0, channel: 0, " + fields + "}\n"
	}
	tests := []struct {
		name, yaml, want string
	}{
		{"no bus", rpi4 + "  soil: {kind: sensor, driver: mcp3008, channel: 0}\n",
			`devices.soil.bus: required (the chip's SPI device: /dev/spidev0.0 for bus 0, chip select 0 (CE0), or "0.0")`},
		{"I2C bus", rpi4 + "  soil: {kind: sensor, driver: mcp3008, bus: 1, channel: 0}\n",
			`devices.soil.bus: want an SPI device, /dev/spidevB.C or "B.C" (bus B, chip select C: /dev/spidev0.0, "0.1"), got "1"`},
		{"negative chip select", rpi4 + "  soil: {kind: sensor, driver: mcp3008, bus: /dev/spidev0.-1, channel: 0}\n",
			`devices.soil.bus: want an SPI device, /dev/spidevB.C or "B.C" (bus B, chip select C: /dev/spidev0.0, "0.1"), got "/dev/spidev0.-1"`},
		{"no channel", rpi4 + "  soil: {kind: sensor, driver: mcp3004, bus: '0.0'}\n",
			"devices.soil.channel: required (the MCP3004's input, 0 to 3)"},
		{"channel of an 8-input chip", rpi4 + "  soil: {kind: sensor, driver: mcp3008, bus: '0.0', channel: 8}\n", "devices.soil.channel: channel 8: the MCP3008 has inputs CH0 to CH7 (0 to 7)"},
		{"channel of a 4-input chip", rpi4 + "  soil: {kind: sensor, driver: mcp3204, bus: '0.0', channel: 4}\n",
			"devices.soil.channel: channel 4: the MCP3204 has inputs CH0 to CH3 (0 to 3)"},
		{"negative channel", rpi4 + "  soil: {kind: sensor, driver: mcp3008, bus: '0.0', channel: -1}\n", "devices.soil.channel: channel -1: the MCP3008 has inputs CH0 to CH7 (0 to 7)"},
		{"differential pair", rpi4 + "  soil: {kind: sensor, driver: mcp3004, bus: '0.0', channel: 4, differential: true}\n",
			"devices.soil.channel: channel 4: the MCP3004's differential configurations are 0 (CH0-CH1), 1 (CH1-CH0), 2 (CH2-CH3) or 3 (CH3-CH2) (IN+ first)"},
		{"vref zero", adc("vref: 0"), "devices.soil.vref: 0 V: the VREF pin takes 0.25 V to VDD (at most 5.5 V), the voltage it is wired to (3.3 on a Raspberry Pi's 3.3 V pin)"},
		{"vref above VDD", adc("vref: 12"), "devices.soil.vref: 12 V: the VREF pin takes 0.25 V to VDD (at most 5.5 V), the voltage it is wired to (3.3 on a Raspberry Pi's 3.3 V pin)"},
		{"vref not finite", adc("vref: .inf"), "devices.soil.vref: want a finite number of volts, got +Inf"},
		{"vref as text", adc("vref: 3.3V"), `devices.soil.vref: want a number, got "3.3V"`},
		{"clock too fast, 10-bit", adc("maxHz: 4e6"), "devices.soil.maxHz: 4e+06 Hz is above the MCP3008's 3.6 MHz (its datasheet's limit at VDD 5 V; 1.35 MHz at 2.7 V)"},
		{"clock too fast, 12-bit", rpi4 + "  soil: {kind: sensor, driver: mcp3208, bus: '0.0', channel: 0, maxHz: 2500000}\n",
			"devices.soil.maxHz: 2.5e+06 Hz is above the MCP3208's 2 MHz (its datasheet's limit at VDD 5 V; 1 MHz at 2.7 V)"},
		{"clock too slow", adc("maxHz: 5000"), "devices.soil.maxHz: 5000 Hz is below the MCP3008's 10000 Hz: its sample capacitor droops during the conversion"},
		{"clock NaN", adc("maxHz: .nan"), "devices.soil.maxHz: want a finite number of Hz, got NaN"},
		{"scale zero", adc("scale: 0"), "devices.soil.scale: must not be 0: the scaled quantity would be the offset whatever the input"},
		{"scale infinite", adc("scale: -.inf"), "devices.soil.scale: want a finite number, got -Inf"},
		{"offset NaN", adc("scale: 1, offset: .nan"), "devices.soil.offset: want a finite number, got NaN"},
		{"offset without scale", adc("offset: 3"), "devices.soil.offset: needs scale: the scaled quantity is voltage × scale + offset"},
		{"unit without scale", adc("unit: '%'"), "devices.soil.unit: needs scale: the scaled quantity is voltage × scale + offset"},
		{"quantity without scale", adc("quantity: moisture"), "devices.soil.quantity: needs scale: the scaled quantity is voltage × scale + offset"},
		{"unit with a space", adc("scale: 1, unit: 'per cent'"),
			`devices.soil.unit: want a short unit symbol, SenML's where it has one (%, %RH, Cel, lx, m, kPa, V): up to 16 letters, digits or % / . _ ° -, got "per cent"`},
		{"unit all digits", adc("scale: 1, unit: '100'"),
			`devices.soil.unit: want a short unit symbol, SenML's where it has one (%, %RH, Cel, lx, m, kPa, V): up to 16 letters, digits or % / . _ ° -, got "100"`},
		{"quantity voltage", adc("scale: 1, quantity: voltage"),
			`devices.soil.quantity: "voltage" is the volts' own name: name the scaled quantity for what it measures (moisture, level)`},
		{"quantity not a name", adc("scale: 1, quantity: Soil Moisture"),
			`devices.soil.quantity: want a property name: a lowercase letter, then letters, digits or _, at most 32 (moisture, level), got "Soil Moisture"`},
		{"threshold of an unscaled quantity", adc("thresholds: {moisture: 1}"),
			`devices.soil.thresholds.moisture: mcp3008 measures no "moisture" (want voltage)`},
		{"zero interval", adc("interval: 0s"), "devices.soil.interval: must be a positive duration, got 0s"},
		{"address on an ADC", adc("address: 0x48"), "devices.soil.address: an mcp3008 channel has no address (its fields: driver, bus, channel, differential, vref, maxHz, scale, offset, unit, quantity, interval, thresholds)"},
		{"options on an ADC", adc("options: {channels: [0]}"), "devices.soil.options: an mcp3008 channel has no options (its fields: driver, bus, channel, differential, vref, maxHz, scale, offset, unit, quantity, interval, thresholds)"},
		{"channel on an I2C sensor", rpi4 + "  th: {kind: sensor, driver: sht3x, bus: 1, address: 0x44, channel: 1}\n",
			"devices.th.channel: a sht3x sensor has no channel (channel is for the SPI ADCs: mcp3004, mcp3008, mcp3204 or mcp3208)"},
		{"vref on an I2C sensor", rpi4 + "  th: {kind: sensor, driver: ads1115, bus: 1, address: 0x48, vref: 3.3}\n",
			"devices.th.vref: a ads1115 sensor has no vref (vref is for the SPI ADCs: mcp3004, mcp3008, mcp3204 or mcp3208)"},
		{"channel on an output", rpi4 + "  relay: {kind: gpio.output, pin: GPIO17, channel: 1}\n",
			"devices.relay.channel: a gpio.output device has no channel (channel is for sensor devices)"},
		// Channels of one chip.
		{"one measurement twice", soilBench + "  soil2: {kind: sensor, driver: mcp3008, bus: /dev/spidev0.0, channel: 0}\n",
			"devices.soil2.channel: CH0 of the mcp3008 on /dev/spidev0.0 is also read by devices.soil"},
		{"one pair twice", soilBench + "  battery2: {kind: sensor, driver: mcp3008, bus: /dev/spidev0.0, channel: 2, differential: true}\n",
			"devices.battery2.channel: CH2-CH3 of the mcp3008 on /dev/spidev0.0 is also read by devices.battery"},
		{"two chips on one chip select", soilBench + "  other: {kind: sensor, driver: mcp3208, bus: /dev/spidev0.0, channel: 5}\n",
			"devices.other.driver: /dev/spidev0.0 is the mcp3008 of devices.soil: one chip select, one chip"},
		{"two VREFs on one chip", soilBench + "  other: {kind: sensor, driver: mcp3008, bus: '0.0', channel: 5, vref: 5}\n",
			"devices.other.vref: 5 V, but devices.soil on the same chip (/dev/spidev0.0) says 3.3 V: its channels share one VREF pin"},
		{"two clocks on one chip", soilBench + "  other: {kind: sensor, driver: mcp3008, bus: '0.0', channel: 5, maxHz: 500000}\n",
			"devices.other.maxHz: 500000 Hz, but devices.soil on the same chip (/dev/spidev0.0) says 1e+06 Hz: its channels share one SPI connection"},
		{"a wrong VREF is not also a mismatch", soilBench + "  other: {kind: sensor, driver: mcp3008, bus: '0.0', channel: 5, vref: 12}\n",
			"devices.other.vref: 12 V: the VREF pin takes 0.25 V to VDD (at most 5.5 V), the voltage it is wired to (3.3 on a Raspberry Pi's 3.3 V pin)"},
		{"a wrong clock is not also a mismatch", soilBench + "  other: {kind: sensor, driver: mcp3008, bus: '0.0', channel: 5, maxHz: 1e8}\n",
			"devices.other.maxHz: 1e+08 Hz is above the MCP3008's 3.6 MHz (its datasheet's limit at VDD 5 V; 1.35 MHz at 2.7 V)"},
		// The header's SPI lines.
		{"CE1 of SPI0 as an output", soilBench + "  relay: {kind: gpio.output, pin: GPIO7}\n",
			"devices.relay.pin: GPIO7 is CE1 of SPI0 (/dev/spidev0.N), which the kernel holds once dtparam=spi=on enables it, used by devices.soil"},
		{"MISO as an input, by header pin", soilBench + "  door: {kind: gpio.input, pin: pin21}\n",
			"devices.door.pin: pin21 (GPIO9) is MISO of SPI0 (/dev/spidev0.N), which the kernel holds once dtparam=spi=on enables it, used by devices.soil"},
		{"CE0 of SPI1", rpi4 + "  fan: {kind: pwm, pin: GPIO18, frequency: 25000}\n  adc: {kind: sensor, driver: mcp3008, bus: /dev/spidev1.0, channel: 0}\n",
			"devices.fan.pin: GPIO18 is CE0 of SPI1 (/dev/spidev1.N), which the kernel holds once its overlay enables it (dtoverlay=spi1-1cs (or spi1-2cs, spi1-3cs for CE1, CE2)), used by devices.adc"},
		{"CE1 of SPI1 used", rpi4 + "  relay: {kind: gpio.output, pin: GPIO17}\n  adc: {kind: sensor, driver: mcp3008, bus: '1.1', channel: 0}\n",
			"devices.relay.pin: GPIO17 is CE1 of SPI1 (/dev/spidev1.N), which the kernel holds once its overlay enables it (dtoverlay=spi1-1cs (or spi1-2cs, spi1-3cs for CE1, CE2)), used by devices.adc"},
		{"SPI0 on a Pi 5", "board: rpi5\ndevices:\n  adc: {kind: sensor, driver: mcp3004, bus: '0.1', channel: 3}\n  led: {kind: gpio.output, pin: pin23}\n",
			"devices.led.pin: pin23 (GPIO11) is SCLK of SPI0 (/dev/spidev0.N), which the kernel holds once dtparam=spi=on enables it, used by devices.adc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkOneFault(t, tt.yaml, tt.want)
		})
	}
}

// Lines of SPI controllers nobody uses stay free, and so do the chip
// selects of SPI1 past the one used; a generic board has no header.
func TestSPIADCFreeLines(t *testing.T) {
	for _, file := range []string{
		soilBench + "  relay: {kind: gpio.output, pin: GPIO17}\n  fan: {kind: pwm, pin: GPIO18, frequency: 25000}\n",
		rpi4 + "  relay: {kind: gpio.output, pin: GPIO7}\n  adc: {kind: sensor, driver: mcp3008, bus: '1.0', channel: 0}\n",
		rpi4 + "  relay: {kind: gpio.output, pin: GPIO17}\n  adc: {kind: sensor, driver: mcp3008, bus: '1.0', channel: 0}\n",
		"board: generic\ndevices:\n  relay: {kind: gpio.output, pin: GPIO7}\n  adc: {kind: sensor, driver: mcp3208, bus: /dev/spidev0.0, channel: 0}\n",
		"board: auto\ndevices:\n  adc: {kind: sensor, driver: mcp3208, bus: /dev/spidev2.0, channel: 7}\n",
	} {
		if _, err := Parse([]byte(file)); err != nil {
			t.Errorf("%s: %v", strings.TrimPrefix(file, rpi4), err)
		}
	}
}

// Every fault of a broken ADC at once, each on its field.
func TestSPIADCAllFaults(t *testing.T) {
	_, err := Parse([]byte(rpi4 + "  soil: {kind: sensor, driver: mcp3008, bus: spi0, channel: 9, vref: -1, maxHz: 1e9, scale: 0, unit: 'a b', quantity: voltage, address: 0x20}\n"))
	want := []string{
		"devices.soil.address: an mcp3008 channel has no address",
		"devices.soil.bus: want an SPI device",
		"devices.soil.channel: channel 9: the MCP3008 has inputs CH0 to CH7",
		"devices.soil.vref: -1 V: the VREF pin takes 0.25 V to VDD",
		"devices.soil.maxHz: 1e+09 Hz is above the MCP3008's 3.6 MHz",
		"devices.soil.scale: must not be 0",
		"devices.soil.unit: want a short unit symbol",
		`devices.soil.quantity: "voltage" is the volts' own name`,
	}
	var errs Errors
	if !errors.As(err, &errs) || len(errs) != len(want) {
		t.Fatalf("Parse: %v; want %d errors", err, len(want))
	}
	for i, e := range errs {
		if !strings.HasPrefix(e.Error(), want[i]) {
			t.Errorf("error %d: %s\nwant %s...", i, e, want[i])
		}
	}
}
