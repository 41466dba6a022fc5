package kernelsensor

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tree lays out devices under a temporary root as the kernel does: a
// directory a device, a file a value.
func tree(t *testing.T, devices map[string]map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for dir, files := range devices {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		for f, text := range files {
			if err := os.WriteFile(filepath.Join(root, dir, f), []byte(text+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

// iioDevices are devices as their kernel drivers present them: the DHT11
// (processed values), the BME280 under bmp280 (pressure in kPa), an
// MCP3008 under mcp320x (raw counts and one shared scale in mV), a
// sensor with raw, offset and scale, and a trigger, which has no name.
var iioDevices = map[string]map[string]string{
	"iio:device0": {"name": "dht11", "in_temp_input": "23400", "in_humidityrelative_input": "45600"},
	"iio:device1": {"name": "bme280", "in_temp_input": "23450", "in_pressure_input": "100.325000000", "in_humidityrelative_input": "41000",
		"in_temp_oversampling_ratio": "2"},
	"iio:device2": {"name": "mcp3008", "in_voltage0_raw": "512", "in_voltage1_raw": "1023", "in_voltage_scale": "3.222656250"},
	"iio:device3": {"name": "offsetted", "in_temp_raw": "1000", "in_temp_offset": "-500", "in_temp_scale": "100"},
	"iio:device4": {"name": "dht11", "in_temp_input": "19000", "in_humidityrelative_input": "60000"},
	"trigger0":    {"sampling_frequency": "10"},
}

func TestIIO(t *testing.T) {
	root := tree(t, iioDevices)
	for _, tc := range []struct {
		name  string
		index int
		want  map[string]float64
		units map[string]string
	}{
		{"dht11", 0, map[string]float64{"temperature": 23.4, "humidity": 45.6}, map[string]string{"temperature": "Cel", "humidity": "%RH"}},
		{"dht11", 1, map[string]float64{"temperature": 19, "humidity": 60}, nil},
		{"bme280", 0, map[string]float64{"temperature": 23.45, "pressure": 100325, "humidity": 41}, map[string]string{"pressure": "Pa"}},
		{"mcp3008", 0, map[string]float64{"voltage0": 1.65, "voltage1": 3.29677734375}, map[string]string{"voltage0": "V"}},
		{"offsetted", 0, map[string]float64{"temperature": 50}, nil},
	} {
		d, err := Open(IIO, root, tc.name, tc.index)
		if err != nil {
			t.Fatalf("%s/%d: %v", tc.name, tc.index, err)
		}
		checkSense(t, d, tc.want, tc.units)
	}
}

func TestHwmon(t *testing.T) {
	root := tree(t, map[string]map[string]string{
		"hwmon0": {"name": "cpu_thermal", "temp1_input": "48312"},
		"hwmon1": {"name": "lm75", "temp1_input": "21500", "temp1_max": "80000", "update_interval": "1000"},
		"hwmon2": {"name": "ina219", "in0_input": "12", "in1_input": "5012", "curr1_input": "250", "power1_input": "1253000"},
		"hwmon3": {"name": "pwmfan", "fan1_input": "3200", "temp1_input": "40000", "temp2_input": "41000"},
	})
	checkSense(t, open(t, Hwmon, root, "cpu_thermal"), map[string]float64{"temperature": 48.312}, map[string]string{"temperature": "Cel"})
	checkSense(t, open(t, Hwmon, root, "lm75"), map[string]float64{"temperature": 21.5}, nil)
	checkSense(t, open(t, Hwmon, root, "ina219"), map[string]float64{"voltage0": 0.012, "voltage1": 5.012, "current": 0.25, "power": 1.253},
		map[string]string{"current": "A", "power": "W"})
	checkSense(t, open(t, Hwmon, root, "pwmfan"), map[string]float64{"fan": 3200, "temperature1": 40, "temperature2": 41}, map[string]string{"fan": "1/min"})
}

func open(t *testing.T, i Interface, root, name string) *Dev {
	t.Helper()
	d, err := Open(i, root, name, 0)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func checkSense(t *testing.T, d *Dev, want map[string]float64, units map[string]string) {
	t.Helper()
	got, err := d.Sense(context.Background())
	if err != nil {
		t.Fatalf("%v: %v", d, err)
	}
	if len(got) != len(want) {
		t.Errorf("%v: %v, want %v", d, got, want)
	}
	for q, w := range want {
		if g, ok := got[q]; !ok || math.Abs(g-w) > 1e-9 {
			t.Errorf("%v: %s = %v, want %v", d, q, g, w)
		}
	}
	for _, q := range d.Quantities() {
		if u, ok := units[q.Name]; ok && q.Unit != u {
			t.Errorf("%v: %s in %s, want %s", d, q.Name, q.Unit, u)
		}
	}
}

// Finding a device by a name the kernel does not have says which names
// it has; a read the driver fails, a file gone and a file that holds no
// number are errors of that read, and the next good read reads.
func TestFaults(t *testing.T) {
	root := tree(t, iioDevices)
	if _, err := Open(IIO, root, "dht22", 0); err == nil || !strings.Contains(err.Error(), "names there: bme280, dht11, mcp3008, offsetted") {
		t.Errorf("unknown name: %v", err)
	}
	if _, err := Open(IIO, root, "dht11", 2); err == nil || !strings.Contains(err.Error(), "2 of that name, no index 2") {
		t.Errorf("index past the last: %v", err)
	}
	if _, err := Open(Hwmon, filepath.Join(root, "none"), "lm75", 0); err == nil {
		t.Error("no hwmon directory: no error")
	}
	if _, err := Open(IIO, tree(t, map[string]map[string]string{"iio:device0": {"name": "odd", "in_accel_x_raw": "1"}}), "odd", 0); err == nil ||
		!strings.Contains(err.Error(), "no channel this reader knows") {
		t.Errorf("no known channel: %v", err)
	}

	d := open(t, IIO, root, "dht11")
	file := filepath.Join(root, "iio:device0", "in_humidityrelative_input")
	os.WriteFile(file, []byte("garbage\n"), 0o644)
	if _, err := d.Sense(context.Background()); err == nil || !strings.Contains(err.Error(), `holds "garbage", not a number`) {
		t.Errorf("garbage: %v", err)
	}
	os.Remove(file)
	if _, err := d.Sense(context.Background()); err == nil || !strings.Contains(err.Error(), "is gone") {
		t.Errorf("gone: %v", err)
	}
	os.WriteFile(file, []byte("47000\n"), 0o644)
	checkSense(t, d, map[string]float64{"temperature": 23.4, "humidity": 47}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Sense(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// List orders devices by their numbers, not their names (hwmon10 after
// hwmon2), counts each name's index in that order, follows the class's
// symlinks as sysfs has them, and leaves out IIO triggers, which have a
// name file too (sysfs-bus-iio: triggerX/name).
func TestList(t *testing.T) {
	root := tree(t, map[string]map[string]string{
		"devices/hwmon10": {"name": "lm75", "temp1_input": "1000"},
		"devices/hwmon2":  {"name": "lm75", "temp1_input": "2000"},
		"devices/hwmon1":  {"name": "cpu_thermal", "temp1_input": "3000"},
		"devices/hwmon3":  {},
	})
	class := filepath.Join(root, "class")
	os.MkdirAll(class, 0o755)
	for _, n := range []string{"hwmon10", "hwmon2", "hwmon1", "hwmon3"} {
		if err := os.Symlink(filepath.Join("..", "devices", n), filepath.Join(class, n)); err != nil {
			t.Fatal(err)
		}
	}
	found, err := List(Hwmon, class)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range found {
		got = append(got, fmt.Sprintf("%s/%d=%s", f.Name, f.Index, filepath.Base(f.Dir)))
	}
	want := []string{"cpu_thermal/0=hwmon1", "lm75/0=hwmon2", "lm75/1=hwmon10"}
	if !slices.Equal(got, want) {
		t.Errorf("List = %v, want %v", got, want)
	}
	checkSense(t, open(t, Hwmon, class, "lm75"), map[string]float64{"temperature": 2}, nil)

	iio := tree(t, map[string]map[string]string{
		"trigger0":    {"name": "dht11"},
		"iio:device0": {"name": "dht11", "in_temp_input": "1000"},
	})
	found, err = List(IIO, iio)
	if err != nil || len(found) != 1 || filepath.Base(found[0].Dir) != "iio:device0" {
		t.Errorf("List(IIO) = %+v, %v: want iio:device0 alone", found, err)
	}
}

// Quantity accepts what Channels names, on the interface that has it.
func TestQuantity(t *testing.T) {
	for _, tc := range []struct {
		i    Interface
		name string
		unit string // "" for not known
	}{
		{IIO, "temperature", "Cel"},
		{IIO, "humidity", "%RH"},
		{IIO, "pressure", "Pa"},
		{IIO, "voltage3", "V"},
		{IIO, "illuminance", "lx"},
		{IIO, "power", ""},
		{IIO, "fan", ""},
		{Hwmon, "fan", "1/min"},
		{Hwmon, "power", "W"},
		{Hwmon, "temperature2", "Cel"},
		{Hwmon, "pressure", ""},
		{Hwmon, "illuminance", ""},
		{Hwmon, "3", ""},
		{Hwmon, "temp", ""},
		{Hwmon, "", ""},
	} {
		q, ok := tc.i.Quantity(tc.name)
		if ok != (tc.unit != "") || q.Unit != tc.unit || ok && q.Name != tc.name {
			t.Errorf("%v.Quantity(%q) = %+v, %v; want unit %q", tc.i, tc.name, q, ok, tc.unit)
		}
	}
	var names []string
	for _, q := range Hwmon.Quantities() {
		names = append(names, q.Name)
	}
	if want := []string{"temperature", "humidity", "voltage", "current", "power", "fan"}; !slices.Equal(names, want) {
		t.Errorf("Hwmon.Quantities() = %v, want %v", names, want)
	}
}

// Select reads the quantities asked for, in their order, and refuses
// one the device does not give, saying what it gives.
func TestSelect(t *testing.T) {
	d := open(t, IIO, tree(t, iioDevices), "bme280")
	s, err := d.Select([]string{"pressure", "temperature"})
	if err != nil {
		t.Fatal(err)
	}
	if q := s.Quantities(); len(q) != 2 || q[0].Name != "pressure" || q[1].Name != "temperature" {
		t.Errorf("Quantities() = %v", q)
	}
	checkSense(t, s, map[string]float64{"pressure": 100325, "temperature": 23.45}, nil)
	if _, err := d.Select([]string{"temperature", "voltage"}); err == nil ||
		!strings.Contains(err.Error(), "gives no voltage (it gives humidity, pressure, temperature)") {
		t.Errorf("Select(voltage): %v", err)
	}
}
