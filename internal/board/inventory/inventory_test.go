package inventory

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/openhal/gateway/internal/board"
	"github.com/openhal/gateway/internal/hw/sysfstest"
)

// Scan finds each part of the Pi's tree as the kernel lays it out, and
// each device's index and quantities as the gateway reads them. (The
// whole output is the golden file of gateway hardware, in gatewayd.)
func TestScan(t *testing.T) {
	inv, err := Scan(sysfstest.Pi(t).Root)
	if err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(inv)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"w1Masters":["w1_bus_master1"]`,
		`{"id":"01-000012345678","family":"01","chip":"","driver":"","config":""}`,
		`{"id":"10-000802b4a1c2","family":"10","chip":"DS18S20","driver":"ds18s20","config":"  ds18s20-000802b4a1c2:\n    kind: sensor\n    driver: ds18s20\n    w1Id: 10-000802b4a1c2\n"}`,
		`{"name":"mcp3008","index":0,"dir":"iio:device1","quantities":[{"name":"voltage0","unit":"V"},{"name":"voltage1","unit":"V"}]`,
		`{"name":"adxl345","index":0,"dir":"iio:device2","quantities":[],"problem":"no channel the gateway reads`,
		`{"name":"tmp105","index":0,"dir":"hwmon2","quantities":[{"name":"temperature","unit":"Cel"}]`,
		`"i2c":[{"number":0,"name":"bcm2835 (i2c@7e205000)","controller":"fe205000.i2c","device":""},{"number":1,"name":"bcm2835 (i2c@7e804000)","controller":"fe804000.i2c","device":"/dev/i2c-1"}]`,
		`"spi":["/dev/spidev0.0"]`,
	} {
		if !strings.Contains(string(j), want) {
			t.Errorf("Scan gave\n%s\nwhich does not hold\n%s", j, want)
		}
	}
	if strings.Contains(string(j), "trigger") {
		t.Errorf("Scan lists the IIO trigger: %s", j)
	}
}

// The entries written for the sensors found are a configuration that
// gateway check takes as it is.
func TestConfigsPassCheck(t *testing.T) {
	inv, err := Scan(sysfstest.Pi(t).Root)
	if err != nil {
		t.Fatal(err)
	}
	configs := inv.Configs()
	if len(configs) != 7 { // 3 thermometers, dht11, mcp3008, cpu_thermal, tmp105
		t.Fatalf("%d entries, want 7:\n%s", len(configs), strings.Join(configs, ""))
	}
	c, err := board.Parse([]byte("board: rpi4b\ndevices:\n" + strings.Join(configs, "")))
	if err != nil {
		t.Fatalf("the entries do not pass check: %v", err)
	}
	if n := len(c.Descriptors()); n != 7 {
		t.Errorf("%d descriptors, want 7", n)
	}
}

// A machine without any of it lists empty sections with what to enable;
// a directory that is no sysfs tree is an error.
func TestBareMachine(t *testing.T) {
	root := t.TempDir()
	os.Mkdir(filepath.Join(root, "bus"), 0o755)
	inv, err := Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := inv.WriteText(&b, root); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"no 1-Wire bus (dtoverlay=w1-gpio", "IIO: " + root + "/bus/iio/devices\n  none\n",
		"none (dtparam=i2c_arm=on", "none (dtparam=spi=on", "No sensor found that the gateway reads."} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text\n%s\nsays no %q", b.String(), want)
		}
	}
	j, err := json.Marshal(inv)
	if want := `{"w1Masters":[],"w1":[],"iio":[],"hwmon":[],"i2c":[],"spi":[]}`; err != nil || string(j) != want {
		t.Errorf("JSON %s, want %s (empty lists, not null)", j, want)
	}
	if _, err := Scan(filepath.Join(root, "nothing")); err == nil || !strings.Contains(err.Error(), "is not a sysfs tree") {
		t.Errorf("Scan of no tree: %v", err)
	}
}

// Ids are made valid and kept apart; names YAML would misread are
// quoted.
func TestIDsAndNames(t *testing.T) {
	taken := map[string]bool{}
	for _, tt := range []struct{ base, iface, want string }{
		{idOf("cpu_thermal"), "hwmon", "cpu_thermal"},
		{idOf("BME280:Outside"), "iio", "bme280-outside"},
		{idOf("bme280-outside"), "hwmon", "bme280-outside-hwmon"},
		{idOf("bme280-outside"), "hwmon", "bme280-outside-2"},
		{idOf("__"), "iio", "sensor"},
	} {
		if got := uniqueID(tt.base, tt.iface, taken); got != tt.want {
			t.Errorf("uniqueID(%q) = %q, want %q", tt.base, got, tt.want)
		}
	}
	for in, want := range map[string]string{"dht11": "dht11", "cpu_thermal": "cpu_thermal", "true": `"true"`, "Off": `"Off"`,
		"1234": `"1234"`, "a: b": `"a: b"`, "BME280": `"BME280"`, "-x": `"-x"`, "tab\t": `"tab\t"`} {
		if got := scalar(in); got != want {
			t.Errorf("scalar(%q) = %s, want %s", in, got, want)
		}
		var back struct{ Name string }
		if err := yaml.Unmarshal([]byte("name: "+scalar(in)), &back); err != nil || back.Name != in {
			t.Errorf("name: %s reads back as %q, %v", scalar(in), back.Name, err)
		}
	}
}
