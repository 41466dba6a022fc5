package hardware

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/board"
	"github.com/openhal/gateway/internal/clock/clocktest"
	"github.com/openhal/gateway/internal/hw/sysfstest"
)

// w1_therm's two lines (Documentation/w1/slaves/w1_therm.rst): 23.125 °C
// and 25 °C, and one whose CRC failed.
const (
	w1At23125 = "72 01 4b 46 7f ff 0e 10 57 : crc=57 YES\n72 01 4b 46 7f ff 0e 10 57 t=23125\n"
	w1At25    = "90 01 4b 46 7f ff 10 10 9f : crc=9f YES\n90 01 4b 46 7f ff 10 10 9f t=25000\n"
	w1BadCRC  = "90 01 4b 46 7f ff 10 10 9e : crc=9f NO\n90 01 4b 46 7f ff 10 10 9e t=25000\n"
)

const (
	dhtParent = "platform/dht11@4"
	i2cParent = "platform/soc/fe804000.i2c"
	tmpParent = i2cParent + "/i2c-1/1-0048"
)

// kernelYAML reads a DS18B20, the DHT22 of the dht11 overlay through
// IIO, and a TMP105 bound by the kernel's lm75 driver through hwmon.
const kernelYAML = `
board: rpi4b
devices:
  greenhouse.soil:
    kind: sensor
    driver: ds18b20
    w1Id: 28-0316a2797dff
  greenhouse.air:
    kind: sensor
    driver: iio
    name: dht11
    quantities: [humidity, temperature]
    interval: 2s
  lab.board:
    kind: sensor
    driver: hwmon
    name: tmp105
    quantities: [temperature]
`

// kernelTree lays out, as the kernel does, what kernelYAML reads, and
// the SoC's own thermal sensor beside it.
func kernelTree(t *testing.T) *sysfstest.Tree {
	s := sysfstest.New(t)
	s.W1Master(1)
	s.W1Slave(1, "28-0316a2797dff", w1At23125)
	s.IIO(0, dhtParent, map[string]string{"name": "dht11\n", "in_temp_input": "23400\n", "in_humidityrelative_input": "45600\n"})
	s.Hwmon(0, "virtual/thermal/thermal_zone0", map[string]string{"name": "cpu_thermal\n", "temp1_input": "48312\n"})
	s.I2C(1, i2cParent, "bcm2835 (i2c@7e804000)", true)
	s.Hwmon(1, tmpParent, map[string]string{"name": "tmp105\n", "temp1_input": "21500\n", "temp1_max": "80000\n"})
	return s
}

func buildOn(t *testing.T, yml string, root string) map[string]device.Device {
	t.Helper()
	cfg, prof := parse(t, yml)
	devs, release, err := Build(context.Background(), cfg, prof, &fakeHost{root: root}, clocktest.NewFake(time.Unix(0, 0)), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	byID := map[string]device.Device{}
	for _, d := range devs {
		byID[d.Descriptor().ID] = d
	}
	return byID
}

// read reads a device and returns its value, or fails the test.
func read(t *testing.T, d device.Device) map[string]any {
	t.Helper()
	r, err := d.(device.Reader).Read(context.Background())
	if err != nil {
		t.Fatalf("read %s: %v", d.Descriptor().ID, err)
	}
	return r.Value.(map[string]any)
}

// readFails reads a device and checks that the read fails saying want.
func readFails(t *testing.T, d device.Device, want string) {
	t.Helper()
	_, err := d.(device.Reader).Read(context.Background())
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("read %s: %v, want an error saying %q", d.Descriptor().ID, err, want)
	}
}

func near(got any, want float64) bool {
	f, ok := got.(float64)
	return ok && math.Abs(f-want) < 1e-9
}

// Each reads through the sysfs root the Host gives, in the units of its
// descriptor, which says where it sits.
func TestBuildKernelSensors(t *testing.T) {
	devs := buildOn(t, kernelYAML, kernelTree(t).Root)
	for _, tt := range []struct {
		id                 string
		want               map[string]float64
		bus, address, chip string
	}{
		{"greenhouse.soil", map[string]float64{"temperature": 23.125}, "w1", "28-0316a2797dff", "ds18b20"},
		{"greenhouse.air", map[string]float64{"temperature": 23.4, "humidity": 45.6}, "iio", "dht11", "dht11"},
		{"lab.board", map[string]float64{"temperature": 21.5}, "hwmon", "tmp105", "tmp105"},
	} {
		d := devs[tt.id]
		if d == nil {
			t.Fatalf("no %s", tt.id)
		}
		desc := d.Descriptor()
		if desc.Bus != tt.bus || desc.Address != tt.address || desc.Chip != tt.chip {
			t.Errorf("%s: bus %q address %q chip %q", tt.id, desc.Bus, desc.Address, desc.Chip)
		}
		v := read(t, d)
		if len(v) != len(tt.want) {
			t.Errorf("%s = %v, want %v", tt.id, v, tt.want)
		}
		for q, w := range tt.want {
			if !near(v[q], w) {
				t.Errorf("%s.%s = %v, want %v", tt.id, q, v[q], w)
			}
		}
		for q := range tt.want {
			if u := desc.Schema.Properties[q].Unit; u == "" {
				t.Errorf("%s: %s has no unit", tt.id, q)
			}
		}
	}
}

// A sensor the kernel has not listed at start (the 1-Wire search has not
// found it, the driver is not bound yet) is a device in fault, not a
// gateway that does not start, and reads once the kernel lists it; so do
// a CRC failure, a thermometer unplugged, a device bound again under
// another number, and a quantity the device turns out not to give says
// so.
func TestKernelSensorFaultsClearByThemselves(t *testing.T) {
	s := sysfstest.New(t)
	devs := buildOn(t, kernelYAML, s.Root)
	soil, air, brd := devs["greenhouse.soil"], devs["greenhouse.air"], devs["lab.board"]

	readFails(t, soil, "no 1-Wire bus (is the w1-gpio overlay loaded?")
	s.W1Master(1)
	readFails(t, soil, "28-0316a2797dff is not on the 1-Wire bus")
	s.W1Slave(1, "28-0316a2797dff", w1BadCRC)
	readFails(t, soil, "CRC mismatch")
	s.Write("bus/w1/devices/28-0316a2797dff/w1_slave", w1At25)
	if v := read(t, soil); !near(v["temperature"], 25) {
		t.Errorf("soil = %v after the CRC failure", v)
	}
	s.RemoveW1Slave(1, "28-0316a2797dff")
	readFails(t, soil, "is not on the 1-Wire bus")
	s.W1Slave(1, "28-0316a2797dff", w1At23125)
	if v := read(t, soil); !near(v["temperature"], 23.125) {
		t.Errorf("soil = %v plugged again", v)
	}

	readFails(t, brd, `set up: find hwmon device "tmp105"`)
	s.Hwmon(3, tmpParent, map[string]string{"name": "tmp105\n", "temp1_input": "21500\n"})
	if v := read(t, brd); !near(v["temperature"], 21.5) {
		t.Errorf("board = %v once bound", v)
	}
	s.RemoveHwmon(3, tmpParent)
	s.Hwmon(4, tmpParent, map[string]string{"name": "tmp105\n", "temp1_input": "-3250\n"})
	readFails(t, brd, "temp1_input is gone")
	if v := read(t, brd); !near(v["temperature"], -3.25) {
		t.Errorf("board = %v bound again as hwmon4", v)
	}

	s.IIO(0, dhtParent, map[string]string{"name": "dht11\n", "in_temp_input": "23400\n"})
	readFails(t, air, "gives no humidity (it gives temperature)")
	s.Write(filepath.Join("bus/iio/devices/iio:device0", "in_humidityrelative_input"), "45600\n")
	if v := read(t, air); !near(v["humidity"], 45.6) || !near(v["temperature"], 23.4) {
		t.Errorf("air = %v", v)
	}
}

// A 1-Wire read waits for the conversion: its deadline leaves room for
// every thermometer of the file on one bus.
func TestW1Deadline(t *testing.T) {
	cfg, _ := parse(t, kernelYAML)
	if got := w1Deadline(cfg); got != 2750*time.Millisecond {
		t.Errorf("one thermometer: %v", got)
	}
	cfg.Devices["greenhouse.soil2"] = board.DeviceConfig{Kind: device.KindSensor, Driver: "ds18s20", W1ID: "10-000802b4a1c2"}
	if got := w1Deadline(cfg); got != 3500*time.Millisecond {
		t.Errorf("two thermometers: %v", got)
	}
}
