// Package hardware turns the devices a real board's configuration
// declares into running devices: GPIO lines, PWM channels, I2C sensors,
// serial ports and Modbus lines. What it opens comes through a Host, the
// seam between the configuration and the machine: hostperiph.go is the
// real one over periph.io, tests pass fakes. Serial ports and Modbus
// lines open themselves once started, and again after each failure.
package hardware

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"slices"
	"strings"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/spi"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/board"
	"github.com/openhal/gateway/internal/board/profile"
	"github.com/openhal/gateway/internal/clock"
	"github.com/openhal/gateway/internal/hw/expander"
	"github.com/openhal/gateway/internal/hw/gpioevent"
	"github.com/openhal/gateway/internal/hw/gpioline"
	"github.com/openhal/gateway/internal/hw/i2c/pca9685"
	"github.com/openhal/gateway/internal/hw/modbusline"
	"github.com/openhal/gateway/internal/hw/pwm"
	"github.com/openhal/gateway/internal/hw/sensor"
	"github.com/openhal/gateway/internal/hw/serialline"
)

// Host opens what the devices sit on.
type Host interface {
	// Line opens a GPIO line: by chip label or gpiochipN and offset,
	// or by line name when ref.Chip is empty. It is not requested yet:
	// the device's first In or Out requests it.
	Line(ref profile.LineRef) (gpio.PinIO, error)
	// I2CBus opens a bus by number ("1") or path ("/dev/i2c-1").
	I2CBus(name string) (i2c.BusCloser, error)
	// SysRoot is the sysfs root ("/sys") that hardware PWM channels
	// (<root>/class/pwm, which FindByController reads), 1-Wire
	// thermometers (<root>/bus/w1/devices), IIO devices and hwmon
	// sensors live under.
	SysRoot() string
	// SPIPort opens an SPI device file ("/dev/spidev0.0"), each call
	// afresh: one that is missing now may be there at the next.
	SPIPort(dev string) (spi.PortCloser, error)
	// EdgeLine requests a GPIO line, found as Line finds it, as an input
	// whose edges the kernel reports with their timestamps (a counter's).
	EdgeLine(ref profile.LineRef, cfg gpioevent.Config) (gpioevent.Source, error)
}

// Build makes a device for each device cfg declares on prof, in id
// order. cfg must have passed ValidateOn(prof). The returned function
// releases what the devices hold (PWM channels, buses, lines), last
// opened first; on error everything opened so far is already released,
// and the error names the device and what could not be opened.
func Build(ctx context.Context, cfg *board.Config, prof *profile.Profile, h Host, clk clock.Clock, log *slog.Logger) (_ []device.Device, release func(), err error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b := &builder{cfg: cfg, prof: prof, host: h, clk: clk, log: log, buses: map[string]i2c.Bus{}}
	defer func() {
		if err != nil {
			b.release()
		}
	}()
	var devs []device.Device
	for _, desc := range cfg.Descriptors() {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		d, err := b.device(desc, cfg.Devices[desc.ID])
		if err != nil {
			return nil, nil, fmt.Errorf("devices.%s: %w", desc.ID, err)
		}
		devs = append(devs, d)
	}
	if err := b.startExpanders(); err != nil {
		return nil, nil, err
	}
	b.startModbus()
	return devs, b.release, nil
}

// builder holds what Build has opened so far.
type builder struct {
	cfg     *board.Config
	prof    *profile.Profile
	host    Host
	clk     clock.Clock
	log     *slog.Logger
	buses   map[string]i2c.Bus // by the configuration's bus name: sensors share them
	closers []func() error

	pcas map[string]*pca9685.Shared // PCA9685s by chip name (build_pca9685.go)
	// adcs are the SPI ADCs by device file: their channels share them
	// (build_spi.go).
	adcs map[string]*adcChip
	// expanders are the expanders opened, by chip name (build_expander.go).
	expanders map[string]*expander.Chip
	// lines are the Modbus lines, by name (build_modbus.go).
	lines     map[string]*modbusline.Line
	lineOrder []*modbusline.Line
}

func (b *builder) release() {
	for i := len(b.closers) - 1; i >= 0; i-- {
		if err := b.closers[i](); err != nil {
			b.log.Warn("release hardware", "err", err)
		}
	}
	b.closers = nil
}

func (b *builder) device(desc device.Descriptor, dc board.DeviceConfig) (device.Device, error) {
	if d, ok, err := b.expanderDevice(desc, dc); ok {
		return d, err
	}
	switch dc.Kind {
	case device.KindGPIOOutput:
		return b.output(desc, dc)
	case device.KindGPIOInput:
		return b.input(desc, dc)
	case device.KindPWM:
		return b.pwm(desc, dc)
	case device.KindSensor:
		return b.sensor(desc, dc)
	case device.KindSerial:
		return serialline.NewPortDevice(desc, dc.PortConfig(), b.clk, b.log), nil
	case board.KindServo:
		return b.servo(desc, dc) // build_pca9685.go
	case board.KindCounter:
		return b.counter(desc, dc) // build_counter.go
	case board.KindModbus:
		return b.modbusDevice(desc, dc) // build_modbus.go
	}
	return nil, fmt.Errorf("kind %q: not a hardware kind", dc.Kind)
}

// line resolves and opens dc's pin, and releases it with the others.
func (b *builder) line(dc board.DeviceConfig) (gpio.PinIO, string, error) {
	ref, err := b.prof.ResolvePin(dc.Pin)
	if err != nil {
		return nil, dc.Pin, err
	}
	name := pinName(dc.Pin, ref)
	p, err := b.host.Line(ref)
	if err != nil {
		return nil, name, fmt.Errorf("open %s: %w", name, err)
	}
	switch c := p.(type) {
	case io.Closer:
		b.closers = append(b.closers, c.Close)
	case interface{ Close() }:
		b.closers = append(b.closers, func() error { c.Close(); return nil })
	}
	return p, name, nil
}

// pinName says which pin in errors: as the file names it, and the line.
func pinName(spec string, ref profile.LineRef) string {
	if ref.Chip == "" || spec == fmt.Sprintf("%s:%d", ref.Chip, ref.Offset) {
		return ref.String()
	}
	return fmt.Sprintf("%s (%s:%d)", spec, ref.Chip, ref.Offset)
}

func (b *builder) output(desc device.Descriptor, dc board.DeviceConfig) (device.Device, error) {
	initial, ok := dc.InitialValue().(bool)
	if !ok {
		return nil, fmt.Errorf("initial value %v is not a boolean", dc.InitialValue())
	}
	p, name, err := b.line(dc)
	if err != nil {
		return nil, err
	}
	invert := dc.Invert != nil && *dc.Invert
	o, err := gpioline.NewOutput(desc, p, initial, invert)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	return o, nil
}

func (b *builder) input(desc device.Descriptor, dc board.DeviceConfig) (device.Device, error) {
	p, name, err := b.line(dc)
	if err != nil {
		return nil, err
	}
	in, err := gpioline.NewInput(desc, p, dc.InputOpts(), b.clk)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	return in, nil
}

func (b *builder) pwm(desc device.Descriptor, dc board.DeviceConfig) (device.Device, error) {
	if _, _, ok := b.cfg.PCA9685(dc); ok {
		return b.pca9685PWM(desc, dc) // build_pca9685.go
	}
	initial, ok := dc.InitialValue().(float64)
	if !ok {
		return nil, fmt.Errorf("initial value %v is not a number", dc.InitialValue())
	}
	if dc.Frequency == nil {
		return nil, errors.New("no frequency")
	}
	freq := *dc.Frequency
	if dc.PWM != nil && dc.PWM.Software {
		p, name, err := b.line(dc)
		if err != nil {
			return nil, err
		}
		s, err := pwm.NewSoftware(desc, p, freq, initial)
		if err != nil {
			return nil, fmt.Errorf("software PWM on %s: %w", name, err)
		}
		b.closers = append(b.closers, s.Close)
		return s, nil
	}
	chip, channel, err := b.pwmChannel(dc)
	if err != nil {
		return nil, err
	}
	hw, err := pwm.NewHardware(desc, b.host.SysRoot(), chip, channel, freq, initial)
	if err != nil {
		return nil, err
	}
	b.closers = append(b.closers, hw.Close)
	return hw, nil
}

// pwmChannel finds the sysfs chip and channel of a hardware PWM: the
// file's, or the one the board's profile says the pin carries; a chip
// given as its controller's name is looked up under /sys/class/pwm.
func (b *builder) pwmChannel(dc board.DeviceConfig) (string, int, error) {
	var chip string
	channel := -1
	if p := dc.PWM; p != nil {
		chip = p.Chip
		if p.Channel != nil {
			channel = *p.Channel
		}
	}
	if chip == "" || channel < 0 {
		ch, err := b.carried(dc.Pin)
		if err != nil {
			return "", 0, err
		}
		if chip == "" {
			chip = ch.Controller
		}
		if channel < 0 {
			channel = ch.Channel
		}
	}
	if path.Base(chip) != chip || !isPWMChipName(chip) {
		found, err := profile.FindByController(pwmFS(b.host.SysRoot()), "pwm", chip)
		if err != nil {
			return "", 0, err
		}
		chip = found[0]
	}
	return chip, channel, nil
}

// carried is the hardware PWM channel the profile says pin carries.
func (b *builder) carried(pin string) (profile.PWM, error) {
	ref, err := b.prof.ResolvePin(pin)
	if err != nil {
		return profile.PWM{}, err
	}
	for _, ch := range b.prof.PWM {
		if ref.Chip == b.prof.GPIOChipLabel && slices.Contains(ch.GPIO, ref.Offset) {
			return ch, nil
		}
	}
	return profile.PWM{}, fmt.Errorf("%s carries no hardware PWM channel on the %s", pinName(pin, ref), b.prof.Name)
}

func isPWMChipName(s string) bool {
	const prefix = "pwmchip"
	if len(s) <= len(prefix) || s[:len(prefix)] != prefix {
		return false
	}
	for _, c := range s[len(prefix):] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// sysRootFS presents a sysfs root ("/sys", or a test's directory) as
// the tree from "/" that FindByController reads ("sys/class/pwm").
type sysRootFS struct{ dir fs.FS }

func pwmFS(root string) fs.FS { return sysRootFS{dir: os.DirFS(root)} }

func (s sysRootFS) rel(op, name string) (string, error) {
	rest, ok := strings.CutPrefix(name, "sys/")
	if !ok {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return rest, nil
}

func (s sysRootFS) Open(name string) (fs.File, error) {
	rel, err := s.rel("open", name)
	if err != nil {
		return nil, err
	}
	return s.dir.Open(rel)
}

func (s sysRootFS) ReadLink(name string) (string, error) {
	rel, err := s.rel("readlink", name)
	if err != nil {
		return "", err
	}
	return fs.ReadLink(s.dir, rel)
}

func (s sysRootFS) Lstat(name string) (fs.FileInfo, error) {
	rel, err := s.rel("lstat", name)
	if err != nil {
		return nil, err
	}
	return fs.Lstat(s.dir, rel)
}

func (b *builder) sensor(desc device.Descriptor, dc board.DeviceConfig) (device.Device, error) {
	if adc, ok := dc.SPIADC(); ok {
		return b.spiADC(desc, dc, adc)
	}
	if d, ok := b.kernelSensor(desc, dc); ok {
		return d, nil
	}
	if dc.Address == nil {
		return nil, errors.New("no address")
	}
	bus, err := b.bus(dc.Bus)
	if err != nil {
		return nil, err
	}
	quantities, err := sensorQuantities(dc.Driver, dc.Options)
	if err != nil {
		return nil, err
	}
	// The chip is set up at the first poll, not here: one that does not
	// answer (unplugged, at a wrong address) is a device in fault until it
	// does, and the gateway serves the rest meanwhile.
	addr := uint16(*dc.Address)
	s := sensor.Defer(quantities, func() (sensor.Sensor, error) {
		s, err := newSensor(dc.Driver, bus, addr, dc.Options)
		if err != nil {
			return nil, fmt.Errorf("%s at %#02x on I2C bus %s: %w", dc.Driver, addr, dc.Bus, err)
		}
		return s, nil
	})
	opts := sensor.PollOpts{Interval: dc.SensorInterval(), Thresholds: dc.Thresholds}
	return sensor.NewDevice(desc, s, opts, b.clk), nil
}

func (b *builder) bus(name string) (i2c.Bus, error) {
	if bus, ok := b.buses[name]; ok {
		return bus, nil
	}
	bus, err := b.host.I2CBus(name)
	if err != nil {
		return nil, fmt.Errorf("open I2C bus %s: %w", name, err)
	}
	b.closers = append(b.closers, bus.Close)
	b.buses[name] = bus
	return bus, nil
}
