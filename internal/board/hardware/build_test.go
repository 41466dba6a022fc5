package hardware

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpiotest"
	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/i2c/i2ctest"
	"periph.io/x/conn/v3/spi"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/board"
	"github.com/openhal/gateway/internal/board/profile"
	"github.com/openhal/gateway/internal/clock/clocktest"
	"github.com/openhal/gateway/internal/hw/gpioline"
	"github.com/openhal/gateway/internal/hw/pwm"
	"github.com/openhal/gateway/internal/hw/sensor"
	"github.com/openhal/gateway/internal/hw/serialline"
)

// fakeHost hands out gpiotest pins by line, playback buses by name, and
// a temporary sysfs tree for PWM.
type fakeHost struct {
	pins   map[profile.LineRef]*gpiotest.Pin
	busy   map[profile.LineRef]bool
	buses  map[string]*i2ctest.Playback
	root   string
	opened []string
	spi    func(dev string) (spi.PortCloser, error) // build_spi_test.go
	edges  map[profile.LineRef]*edgeLine            // counters' lines (build_counter_test.go)
}

func (h *fakeHost) Line(ref profile.LineRef) (gpio.PinIO, error) {
	if h.busy[ref] {
		return nil, errors.New("line busy")
	}
	p, ok := h.pins[ref]
	if !ok {
		return nil, errors.New("no such line")
	}
	h.opened = append(h.opened, ref.String())
	return p, nil
}

func (h *fakeHost) I2CBus(name string) (i2c.BusCloser, error) {
	b, ok := h.buses[name]
	if !ok {
		return nil, errors.New("no such bus")
	}
	h.opened = append(h.opened, "i2c "+name)
	return b, nil
}

func (h *fakeHost) SysRoot() string { return h.root }

const rpi4Label = "pinctrl-bcm2711"

func bcm(n int) profile.LineRef {
	names := map[int]string{17: "GPIO17", 27: "GPIO27", 18: "GPIO18", 23: "GPIO23"}
	return profile.LineRef{Chip: rpi4Label, Offset: n, Name: names[n]}
}

const benchYAML = `
board: rpi4b
devices:
  bench.relay:
    kind: gpio.output
    pin: pin11
    invert: true
    initial: false
  bench.stop:
    kind: gpio.input
    pin: GPIO27
    pull: up
  bench.fan:
    kind: pwm
    pin: GPIO18
    frequency: 25000
    pwm: {chip: fe20c000.pwm, channel: 0}
    initial: 40
  bench.lamp:
    kind: pwm
    pin: GPIO23
    frequency: 50
    pwm: software
  bench.temp:
    kind: sensor
    driver: tmp102
    bus: "1"
    address: 0x48
    interval: 2s
  bench.meter:
    kind: serial
    port: /dev/ttyUSB0
    baud: 9600
`

// pwmSysfs lays out a sysfs root with pwmchip0 belonging to controller,
// channel 0 already exported.
func pwmSysfs(t *testing.T, controller string) string {
	t.Helper()
	root := t.TempDir()
	chip := filepath.Join(root, "devices", "platform", "soc", controller, "pwm", "pwmchip0")
	if err := os.MkdirAll(filepath.Join(chip, "pwm0"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]string{"npwm": "2", "export": "", "unexport": "",
		"pwm0/period": "0", "pwm0/duty_cycle": "0", "pwm0/enable": "0"} {
		if err := os.WriteFile(filepath.Join(chip, name), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	class := filepath.Join(root, "class", "pwm")
	if err := os.MkdirAll(class, 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join("..", "..", "devices", "platform", "soc", controller, "pwm", "pwmchip0")
	if err := os.Symlink(target, filepath.Join(class, "pwmchip0")); err != nil {
		t.Fatal(err)
	}
	return root
}

func benchHost(t *testing.T) *fakeHost {
	return &fakeHost{
		pins: map[profile.LineRef]*gpiotest.Pin{
			bcm(17): {N: "GPIO17"},
			bcm(27): {N: "GPIO27", EdgesChan: make(chan gpio.Level)},
			bcm(23): {N: "GPIO23"},
		},
		busy: map[profile.LineRef]bool{},
		buses: map[string]*i2ctest.Playback{"1": {DontPanic: true, Ops: []i2ctest.IO{
			{Addr: 0x48, W: []byte{0x01}, R: []byte{0x60, 0xA0}}, // TMP102 configuration read
			{Addr: 0x48, W: []byte{0x01, 0x60, 0xA0}},            // and written back
			{Addr: 0x48, W: []byte{0x00}, R: []byte{0x19, 0x00}}, // 25 °C
		}}},
		root: pwmSysfs(t, "fe20c000.pwm"),
	}
}

func parse(t *testing.T, yml string) (*board.Config, *profile.Profile) {
	t.Helper()
	cfg, err := board.Parse([]byte(yml))
	if err != nil {
		t.Fatal(err)
	}
	prof, ok := profile.ByName(cfg.Board)
	if !ok {
		t.Fatalf("no profile %q", cfg.Board)
	}
	return cfg, prof
}

func TestBuildBench(t *testing.T) {
	cfg, prof := parse(t, benchYAML)
	h := benchHost(t)
	devs, release, err := Build(context.Background(), cfg, prof, h, clocktest.NewFake(time.Unix(0, 0)), nil)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]device.Device{}
	for _, d := range devs {
		byID[d.Descriptor().ID] = d
	}
	checks := []struct {
		id string
		ok func(device.Device) bool
	}{
		{"bench.relay", func(d device.Device) bool { _, ok := d.(*gpioline.Output); return ok }},
		{"bench.stop", func(d device.Device) bool { _, ok := d.(*gpioline.Input); return ok }},
		{"bench.fan", func(d device.Device) bool { _, ok := d.(*pwm.Hardware); return ok }},
		{"bench.lamp", func(d device.Device) bool { _, ok := d.(*pwm.Software); return ok }},
		{"bench.temp", func(d device.Device) bool { _, ok := d.(*sensor.Device); return ok }},
		{"bench.meter", func(d device.Device) bool { _, ok := d.(*serialline.LineDevice); return ok }},
	}
	if len(devs) != len(checks) {
		t.Errorf("Build made %d devices, want %d", len(devs), len(checks))
	}
	for _, c := range checks {
		d, ok := byID[c.id]
		if !ok || !c.ok(d) {
			t.Errorf("%s: got %T", c.id, d)
		}
	}

	// The relay is active low and starts off: its line is high.
	if l := h.pins[bcm(17)].L; l != gpio.High {
		t.Errorf("relay line at %v, want High (inverted, off)", l)
	}
	// The stop button's line was requested with its pull-up.
	if p := h.pins[bcm(27)].P; p != gpio.PullUp {
		t.Errorf("stop button pull %v, want PullUp", p)
	}
	// The fan's controller was found as pwmchip0, at 25 kHz and 40 %.
	ch := filepath.Join(h.root, "class", "pwm", "pwmchip0", "pwm0")
	for file, want := range map[string]string{"period": "40000", "duty_cycle": "16000", "enable": "1"} {
		got, err := os.ReadFile(filepath.Join(ch, file))
		if err != nil || strings.TrimSpace(string(got)) != want {
			t.Errorf("fan %s = %q (%v), want %s", file, got, err, want)
		}
	}
	// The sensor was configured over the bus and reads 25 °C.
	r, err := byID["bench.temp"].(device.Reader).Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Value.(map[string]any)["temperature"]; got != 25.0 {
		t.Errorf("temperature %v, want 25", got)
	}
	release()
	if err := h.buses["1"].Close(); err != nil { // Playback: every op played
		t.Error(err)
	}
}

func TestBuildErrorsNameDeviceAndPin(t *testing.T) {
	tests := []struct {
		name string
		host func(h *fakeHost)
		want []string
	}{
		{"busy line", func(h *fakeHost) { h.busy[bcm(17)] = true },
			[]string{"devices.bench.relay", "pin11 (pinctrl-bcm2711:17)", "line busy"}},
		{"missing bus", func(h *fakeHost) { delete(h.buses, "1") },
			[]string{"devices.bench.temp", "I2C bus 1", "no such bus"}},
		{"PWM controller not bound", func(h *fakeHost) { h.root = t.TempDir() },
			[]string{"devices.bench.fan", "fe20c000.pwm", "/sys/class/pwm does not exist", "config.txt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, prof := parse(t, benchYAML)
			h := benchHost(t)
			tt.host(h)
			_, _, err := Build(context.Background(), cfg, prof, h, clocktest.NewFake(time.Unix(0, 0)), nil)
			if err == nil {
				t.Fatal("Build succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// A generic board opens lines by their kernel names.
func TestBuildGenericByName(t *testing.T) {
	cfg, prof := parse(t, `
board: generic
devices:
  door:
    kind: gpio.input
    pin: DOOR_SENSE
`)
	ref := profile.LineRef{Offset: -1, Name: "DOOR_SENSE"}
	h := &fakeHost{pins: map[profile.LineRef]*gpiotest.Pin{ref: {N: "DOOR_SENSE", EdgesChan: make(chan gpio.Level)}}}
	devs, release, err := Build(context.Background(), cfg, prof, h, clocktest.NewFake(time.Unix(0, 0)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if len(devs) != 1 || h.opened[0] != "DOOR_SENSE" {
		t.Errorf("devices %v, opened %v", devs, h.opened)
	}
}

func TestPinName(t *testing.T) {
	tests := []struct {
		spec string
		ref  profile.LineRef
		want string
	}{
		{"pin11", bcm(17), "pin11 (pinctrl-bcm2711:17)"},
		{"GPIO27", bcm(27), "GPIO27 (pinctrl-bcm2711:27)"},
		{"pinctrl-bcm2711:17", bcm(17), "pinctrl-bcm2711:17 (GPIO17)"},
		{"gpiochip0:5", profile.LineRef{Chip: "gpiochip0", Offset: 5}, "gpiochip0:5"},
		{"DOOR_SENSE", profile.LineRef{Offset: -1, Name: "DOOR_SENSE"}, "DOOR_SENSE"},
	}
	for _, tt := range tests {
		if got := pinName(tt.spec, tt.ref); got != tt.want {
			t.Errorf("pinName(%q) = %q, want %q", tt.spec, got, tt.want)
		}
	}
}

// A sensor that does not answer at start does not stop the build: its
// device is set up at its first measurement, fails it with what the chip
// said, and the rest of the board is served.
func TestSensorNotAnsweringIsAFault(t *testing.T) {
	cfg, prof := parse(t, benchYAML)
	h := benchHost(t)
	h.buses["1"].Ops = nil // nothing answers on the bus
	devs, release, err := Build(context.Background(), cfg, prof, h, clocktest.NewFake(time.Unix(0, 0)), nil)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	defer release()
	for _, d := range devs {
		if d.Descriptor().ID != "bench.temp" {
			continue
		}
		if schema := d.Descriptor().Schema; schema.Properties["temperature"].Unit != "Cel" {
			t.Fatalf("schema %+v: want the driver's quantities without the chip", schema)
		}
		_, err := d.(device.Reader).Read(context.Background())
		if err == nil || !strings.Contains(err.Error(), "set up: tmp102 at 0x48 on I2C bus 1") {
			t.Fatalf("read: %v, want the setup's error", err)
		}
		return
	}
	t.Fatal("no bench.temp")
}
