package board

import (
	"reflect"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
)

// TestKernelSensorErrors: each file has one fault of a 1-Wire or kernel
// sensor, which must give exactly its line.
func TestKernelSensorErrors(t *testing.T) {
	dev := func(fields string) string { return rpi4 + "  lab.t: {kind: sensor, " + fields + "}\n" }
	w1 := func(fields string) string { return dev("driver: ds18b20, w1Id: 28-0316a2797dff, " + fields) }
	iio := func(fields string) string { return dev("driver: iio, name: dht11, " + fields) }
	const second = "  lab.u: {kind: sensor, driver: ds18b20, w1Id: 28-0316a2797dff}\n"
	tests := []struct {
		name, yaml, want string
	}{
		// 1-Wire.
		{"no id", dev("driver: ds18b20"),
			"devices.lab.t.w1Id: required (the DS18B20's 1-Wire id, as the kernel lists it under /sys/bus/w1/devices: 28-0316a2797dff; gateway hardware lists them)"},
		{"id of another form", dev("driver: ds18b20, w1Id: 28-0316a2797df"),
			`devices.lab.t.w1Id: "28-0316a2797df" is not a 1-Wire id: want the family code, a dash and 12 lower-case hex digits, as in 28-0316a2791aff`},
		{"id in capitals", dev("driver: ds18b20, w1Id: 28-0316A2797DFF"),
			`devices.lab.t.w1Id: "28-0316A2797DFF" is not a 1-Wire id: want the family code, a dash and 12 lower-case hex digits, as in 28-0316a2791aff`},
		{"id of another family", dev("driver: ds18b20, w1Id: 10-000802b4a1c2"),
			"devices.lab.t.w1Id: 10-000802b4a1c2 is a DS18S20 (family 10), not a DS18B20 (family 28): set driver: ds18s20"},
		{"id of a chip without a driver", dev("driver: ds1822, w1Id: 42-000802b4a1c2"),
			"devices.lab.t.w1Id: 42-000802b4a1c2 is a DS28EA00 (family 42), not a DS1822 (family 22): the gateway has no driver for it"},
		{"id of no thermometer", dev("driver: ds1825, w1Id: 3a-000802b4a1c2"),
			`devices.lab.t.w1Id: "3a-000802b4a1c2" is not a thermometer: family 3a is none of 10 (DS18S20), 22 (DS1822), 28 (DS18B20), 3b (DS1825), 42 (DS28EA00)`},
		{"id used twice", rpi4 + "  lab.t: {kind: sensor, driver: ds18b20, w1Id: 28-0316a2797dff}\n" + second,
			"devices.lab.u.w1Id: 28-0316a2797dff is also used by devices.lab.t"},
		{"interval under the conversion", w1("interval: 500ms"),
			"devices.lab.t.interval: 500ms is shorter than the DS18B20's conversion time (750ms at 12 bits), which each read waits for: want at least 750ms"},
		{"zero interval", w1("interval: 0s"), "devices.lab.t.interval: must be a positive duration, got 0s"},
		{"bus", w1("bus: 1"),
			"devices.lab.t.bus: the ds18b20 driver takes no bus: it finds the sensor by its w1Id (its fields: driver, w1Id, interval, thresholds)"},
		{"address", w1("address: 0x48"),
			"devices.lab.t.address: the ds18b20 driver takes no address: it finds the sensor by its w1Id (its fields: driver, w1Id, interval, thresholds)"},
		{"quantities", w1("quantities: [temperature]"),
			"devices.lab.t.quantities: the ds18b20 driver takes no quantities: it finds the sensor by its w1Id (its fields: driver, w1Id, interval, thresholds)"},
		{"threshold of another quantity", w1("thresholds: {humidity: 1}"),
			`devices.lab.t.thresholds.humidity: ds18b20 measures no "humidity" (want temperature)`},
		// IIO and hwmon.
		{"no name", dev("driver: hwmon, quantities: [temperature]"),
			"devices.lab.t.name: required (the kernel's name for the device, its name file under /sys/class/hwmon: dht11, lm75; gateway hardware lists them)"},
		{"name with a slash", dev("driver: iio, name: iio:device0/name, quantities: [temperature]"),
			`devices.lab.t.name: "iio:device0/name" is not a kernel device name: want what its name file holds, such as dht11 (no '/', no spaces around it)`},
		{"negative index", iio("index: -1, quantities: [temperature]"),
			"devices.lab.t.index: must not be negative, got -1 (0 is the first device of that name)"},
		{"no quantities", iio("interval: 2s"),
			"devices.lab.t.quantities: required: what to read of the device, of temperature, humidity, pressure, voltage, current or illuminance (gateway hardware lists what each device gives)"},
		{"quantity of hwmon on iio", iio("quantities: [temperature, fan]"),
			`devices.lab.t.quantities[1]: iio gives no "fan": want temperature, humidity, pressure, voltage, current or illuminance, followed by the kernel's channel number when the device has several of one (voltage1)`},
		{"quantity of iio on hwmon", dev("driver: hwmon, name: lm75, quantities: [pressure]"),
			`devices.lab.t.quantities[0]: hwmon gives no "pressure": want temperature, humidity, voltage, current, power or fan, followed by the kernel's channel number when the device has several of one (voltage1)`},
		{"quantity twice", iio("quantities: [humidity, temperature, humidity]"),
			`devices.lab.t.quantities[2]: "humidity" listed twice`},
		{"kernel sensor with an address", iio("quantities: [temperature], address: 0x40"),
			"devices.lab.t.address: the iio driver takes no address: it finds the kernel's device by its name (its fields: driver, name, index, quantities, interval, thresholds)"},
		{"kernel sensor with a w1Id", iio("quantities: [temperature], w1Id: 28-0316a2797dff"),
			"devices.lab.t.w1Id: the iio driver takes no w1Id: it finds the kernel's device by its name (its fields: driver, name, index, quantities, interval, thresholds)"},
		{"threshold of a quantity not read", iio("quantities: [temperature], thresholds: {humidity: 1}"),
			`devices.lab.t.thresholds.humidity: iio measures no "humidity" (want temperature)`},
		{"kernel sensor with a zero interval", iio("quantities: [temperature], interval: 0s"), "devices.lab.t.interval: must be a positive duration, got 0s"},
		// Their fields on an I2C sensor.
		{"w1Id on an I2C sensor", dev("driver: sht3x, bus: 1, address: 0x44, w1Id: 28-0316a2797dff"),
			"devices.lab.t.w1Id: the sht3x driver takes no w1Id (w1Id is for the 1-Wire drivers ds18b20, ds18s20, ds1822 or ds1825)"},
		{"quantities on an I2C sensor", dev("driver: sht3x, bus: 1, address: 0x44, quantities: [temperature]"),
			"devices.lab.t.quantities: the sht3x driver takes no quantities (quantities is for the kernel's iio and hwmon devices)"},
		{"name on a gpio device", rpi4 + "  lab.t: {kind: gpio.input, pin: GPIO27, name: dht11}\n",
			"devices.lab.t.name: a gpio.input device has no name (name is for sensor devices)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkOneFault(t, tt.yaml, tt.want)
		})
	}
}

// TestKernelSensorDescriptors: 1-Wire and kernel sensors are described
// with their quantities' units and where they sit, and take a file
// written for another machine: nothing of this one is looked at.
func TestKernelSensorDescriptors(t *testing.T) {
	c, err := Parse([]byte(rpi4 + `  greenhouse.soil:
    kind: sensor
    driver: ds18b20
    w1Id: 28-0316a2797dff
    interval: 750ms
    thresholds: {temperature: 0.2}
  greenhouse.air:
    kind: sensor
    label: Air
    driver: iio
    name: dht11
    quantities: [temperature, humidity]
    interval: 5s
  lab.supply:
    kind: sensor
    driver: hwmon
    name: ina219
    index: 1
    quantities: [voltage1, current, power]
`))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]device.Descriptor{}
	for _, d := range c.Descriptors() {
		byID[d.ID] = d
	}
	num := func(unit string) device.Schema { return device.Schema{Type: device.TypeNumber, Unit: unit} }
	for _, tt := range []struct {
		id                  string
		props               map[string]device.Schema
		bus, address, chip  string
		interval            time.Duration
		kernel, w1, kernIdx int
	}{
		{"greenhouse.soil", map[string]device.Schema{"temperature": num("Cel")}, "w1", "28-0316a2797dff", "ds18b20", 750 * time.Millisecond, 0, 1, 0},
		{"greenhouse.air", map[string]device.Schema{"temperature": num("Cel"), "humidity": num("%RH")}, "iio", "dht11", "dht11", 5 * time.Second, 1, 0, 0},
		{"lab.supply", map[string]device.Schema{"voltage1": num("V"), "current": num("A"), "power": num("W")}, "hwmon", "ina219", "ina219", time.Second, 1, 0, 1},
	} {
		d, ok := byID[tt.id]
		if !ok {
			t.Fatalf("no %s in %v", tt.id, byID)
		}
		if d.Kind != device.KindSensor || d.Access != device.AccessRead || d.Risk != device.RiskLow ||
			d.Schema.Type != device.TypeObject || !reflect.DeepEqual(d.Schema.Properties, tt.props) {
			t.Errorf("%s: %+v", tt.id, d)
		}
		if d.Bus != tt.bus || d.Address != tt.address || d.Chip != tt.chip || d.Pin != "" || d.Channel != nil {
			t.Errorf("%s: bus %q address %q chip %q, want %q %q %q", tt.id, d.Bus, d.Address, d.Chip, tt.bus, tt.address, tt.chip)
		}
		dc := c.Devices[tt.id]
		if dc.SensorInterval() != tt.interval || dc.W1Sensor() != (tt.w1 == 1) || dc.KernelIndex() != tt.kernIdx {
			t.Errorf("%s: interval %v, W1Sensor %v, KernelIndex %d", tt.id, dc.SensorInterval(), dc.W1Sensor(), dc.KernelIndex())
		}
		if _, ok := dc.KernelInterface(); ok != (tt.kernel == 1) {
			t.Errorf("%s: KernelInterface ok = %v", tt.id, ok)
		}
	}
	if got := c.Devices["greenhouse.air"].KernelQuantities(); len(got) != 2 || got[0].Name != "temperature" || got[1].Unit != "%RH" {
		t.Errorf("KernelQuantities = %v, want temperature and humidity in the file's order", got)
	}
}

func TestW1Driver(t *testing.T) {
	for id, want := range map[string]string{
		"28-0316a2797dff": "ds18b20", "10-000802b4a1c2": "ds18s20", "22-000802b4a1c2": "ds1822",
		"3b-000802b4a1c2": "ds1825", "42-000802b4a1c2": "", "01-000012345678": "", "": "",
	} {
		if got := W1Driver(id); got != want {
			t.Errorf("W1Driver(%q) = %q, want %q", id, got, want)
		}
	}
}
