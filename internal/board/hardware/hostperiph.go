//go:build linux

package hardware

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"periph.io/x/conn/v3/driver/driverreg"
	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/i2c/i2creg"
	"periph.io/x/host/v3/gpioioctl"
	// periph's sysfs drivers register the I2C buses (i2creg) and SPI
	// ports (spireg) the kernel lists; gpioioctl, imported above,
	// registers the GPIO chips of the character device.
	_ "periph.io/x/host/v3/sysfs"

	"github.com/openhal/gateway/internal/board/profile"
)

// Periph is the real Host: GPIO lines through the kernel's character
// device (gpioioctl), I2C buses through /dev/i2c-N; PWM, 1-Wire, IIO and hwmon under /sys.
type Periph struct{}

// NewPeriph initialises the periph drivers the gateway uses: the GPIO
// character device (gpioioctl) and sysfs's I2C and SPI. Not host.Init,
// which loads every board's memory-mapped drivers too (bcm283x,
// allwinner, rpi...): the gateway never touches registers, and they
// cost 450 KiB of the binary (docs/size.md). A driver that fails is
// logged, not fatal: a machine without I2C has no buses to list.
func NewPeriph(log *slog.Logger) (Host, error) {
	state, err := driverreg.Init()
	if err != nil {
		return nil, fmt.Errorf("initialise periph: %w", err)
	}
	for _, f := range state.Failed {
		log.Info("periph driver not available", "driver", f.D.String(), "err", f.Err)
	}
	return &Periph{}, nil
}

// Line finds the chip by label or name (gpiochipN) and takes the line at
// the offset; without a chip, the line whose kernel name is ref.Name.
func (*Periph) Line(ref profile.LineRef) (gpio.PinIO, error) {
	if ref.Chip == "" {
		return lineByName(ref.Name)
	}
	var labels []string
	for _, c := range gpioioctl.Chips {
		if c.Label() != ref.Chip && c.Name() != ref.Chip && "/dev/"+ref.Chip != c.Name() {
			labels = append(labels, c.Name()+" "+c.Label())
			continue
		}
		lines := c.Lines()
		if ref.Offset < 0 || ref.Offset >= len(lines) {
			return nil, fmt.Errorf("chip %s has %d lines, no offset %d", ref.Chip, len(lines), ref.Offset)
		}
		return lines[ref.Offset], nil
	}
	return nil, fmt.Errorf("no GPIO chip %q on this machine (chips: %s)", ref.Chip, chipList(labels))
}

func lineByName(name string) (gpio.PinIO, error) {
	for _, c := range gpioioctl.Chips {
		for _, l := range c.Lines() {
			if l.Name() == name {
				return l, nil
			}
		}
	}
	return nil, fmt.Errorf("no GPIO line named %q on this machine (gpioinfo lists them)", name)
}

func chipList(labels []string) string {
	if len(labels) == 0 {
		return "none"
	}
	return strings.Join(labels, ", ")
}

// I2CBus opens a bus by number ("1") or device path ("/dev/i2c-1").
// A bus that is not there is said so with the buses that are.
func (*Periph) I2CBus(name string) (i2c.BusCloser, error) {
	var have []string
	for _, r := range i2creg.All() {
		have = append(have, r.Name)
	}
	if len(have) == 0 {
		return nil, errors.New("no I2C bus on this machine (is dtparam=i2c_arm=on in config.txt and the i2c-dev module loaded?)")
	}
	b, err := i2creg.Open(name)
	if err != nil {
		return nil, fmt.Errorf("%w (buses: %s)", err, strings.Join(have, ", "))
	}
	return b, nil
}

// SysRoot is "/sys".
func (*Periph) SysRoot() string { return "/sys" }
