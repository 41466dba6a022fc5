// Package profile describes the boards the gateway runs on: which
// physical header pin carries which GPIO line, which GPIO chip holds the
// header's lines, and where the I2C buses, UARTs and hardware PWM channels
// are. It only describes; it opens no device. The hw package opens what a
// profile names, and the configuration validator uses ResolvePin to check
// pin names without touching hardware.
//
// Lines are named by chip label and offset, never by the kernel's legacy
// global GPIO numbers (GPIO504..., GPIO512...), which change between
// kernels, and never by gpiochip number alone where a label is known: the
// Raspberry Pi 5's header chip moved from gpiochip4 to gpiochip0 in kernel
// 6.6.45 (raspberrypi/linux#6144).
package profile

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// Kind is what a physical header pin is.
type Kind int

// The kinds of header pins.
const (
	GPIO     Kind = iota + 1 // a GPIO line usable by devices
	Power3V3                 // 3.3 V supply
	Power5V                  // 5 V supply
	Ground                   // GND
	ID                       // GPIO0/GPIO1, the HAT ID EEPROM's I2C bus: reserved
)

// String says what the kind is in the words an error message uses.
func (k Kind) String() string {
	switch k {
	case GPIO:
		return "GPIO"
	case Power3V3:
		return "3.3V power"
	case Power5V:
		return "5V power"
	case Ground:
		return "ground (GND)"
	case ID:
		return "HAT ID EEPROM"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Pin is one physical pin of a 40-pin header.
type Pin struct {
	Number int  // physical pin, 1..40
	Kind   Kind // what the pin is
	// Line is "GPIO17" for a GPIO pin and "ID_SD"/"ID_SC" for the ID pins
	// (the names of the Raspberry Pi pinout); empty for power and ground.
	Line string
	// BCM is the Broadcom (and RP1) GPIO number, which is also the line's
	// offset on the header chip; -1 for power and ground.
	BCM int
}

// Bus is an I2C bus the board brings out to its header.
type Bus struct {
	Name   string // "i2c-1"
	Device string // "/dev/i2c-1"
	SDA    int    // BCM line of SDA
	SCL    int    // BCM line of SCL
	// Controller is the kernel platform device's name (a component of
	// its sysfs path), for FindByController; empty when unknown.
	Controller string
	Enable     string // the config.txt line that enables the bus
	Reserved   bool   // true when the bus is not for devices (the ID EEPROM)
	Note       string
}

// UART is a serial port on the header.
type UART struct {
	Name string // "serial0", "uart3"
	// Device is the usual device path; empty when the number the kernel
	// gives depends on which other UARTs are enabled.
	Device     string
	TX, RX     int    // BCM lines
	Controller string // platform device name for FindByController; empty when it depends on configuration
	Enable     string // the config.txt line(s) that route it to the header
	Note       string
}

// PWM is one hardware PWM channel and the header lines that can carry it.
type PWM struct {
	// Controller is the platform device of the PWM block, for example
	// "fe20c000.pwm": the pwmchip number under /sys/class/pwm is not
	// stable (the Pi 5's is pwmchip2 on early kernels and pwmchip0 on
	// later ones), so resolve it with FindByController(fsys, "pwm", ...).
	Controller string
	Sysfs      string // the usual pwmchip name, a hint only
	Channel    int    // the channel (pwmN) within the chip
	GPIO       []int  // BCM lines that can carry this channel, one at a time
	Enable     string // the config.txt overlay line
	Note       string
}

// Profile is one board.
type Profile struct {
	Name        string   // "rpi4b"; the configuration's board: value
	Description string   // a human name
	Models      []string // /proc/device-tree/model prefixes it matches
	// GPIOChipLabel is the label of the gpiochip carrying the header's
	// lines; empty for the generic profile. Find the chip by this label.
	GPIOChipLabel string
	GPIOChipLines int // the number of lines on that chip; 0 if unknown
	// Pins maps physical pin number (1..40) to what it is; empty for a
	// board without a known header.
	Pins map[int]Pin
	// LineAliases maps other names the kernel gives header lines on this
	// board (schematic names such as "SDA1" on the Pi 3B and on mainline
	// kernels) to BCM numbers, so that names copied from gpioinfo resolve.
	LineAliases map[string]int
	I2C         []Bus
	UART        []UART
	PWM         []PWM
	SPI         []SPI // the SPI controllers on the header (spi.go)

	// Model is the device-tree model Detect read; empty otherwise.
	Model string
	// Note says why Detect fell back to the generic profile; empty when
	// the model matched or the profile came from ByName.
	Note string
}

// ModelPath is the device-tree model file, relative to the root of the
// file system given to Detect (os.DirFS("/") on a real board).
const ModelPath = "proc/device-tree/model"

// all builds every profile afresh, so that no caller can change another's.
func all() []*Profile {
	return []*Profile{rpi3b(), rpi3bplus(), rpi4b(), rpi5(), rpizero2w(), generic()}
}

// Names lists the profile names, in a stable order, for messages such as
// "unknown board (want rpi3b, ...)".
func Names() []string {
	var names []string
	for _, p := range all() {
		names = append(names, p.Name)
	}
	return names
}

// ByName returns the named profile. The sim board is not a profile: it
// has no header and belongs to board/sim.
func ByName(name string) (*Profile, bool) {
	for _, p := range all() {
		if p.Name == name {
			return p, true
		}
	}
	return nil, false
}

// MatchModel returns the profile whose model prefix matches the
// device-tree model string. A prefix matches when the model equals it or
// continues with a space, and the longest matching prefix wins, so that
// "Raspberry Pi 3 Model B Plus Rev 1.3" is a 3B+, not a 3B, and
// "Raspberry Pi 500" is not a Pi 5.
func MatchModel(model string) (*Profile, bool) {
	return matchModel(all(), model)
}

func matchModel(profiles []*Profile, model string) (*Profile, bool) {
	model = cleanModel(model)
	var best *Profile
	bestLen := 0
	for _, p := range profiles {
		for _, m := range p.Models {
			if len(m) > bestLen && prefixWord(model, m) {
				best, bestLen = p, len(m)
			}
		}
	}
	return best, best != nil
}

func prefixWord(s, prefix string) bool {
	return strings.HasPrefix(s, prefix) && (len(s) == len(prefix) || s[len(prefix)] == ' ')
}

// cleanModel trims the NUL the kernel ends device-tree strings with.
func cleanModel(s string) string {
	return strings.TrimRight(s, "\x00 \t\r\n")
}

// Detect reads the device-tree model from fsys (rooted at "/") and returns
// the matching profile with Model set. A board without the file (not a
// device-tree system) or with a model no profile knows gets the generic
// profile, with Note saying why; only a failure to read an existing file
// is an error.
func Detect(fsys fs.FS) (*Profile, error) {
	b, err := fs.ReadFile(fsys, ModelPath)
	if errors.Is(err, fs.ErrNotExist) {
		g := generic()
		g.Note = "no /" + ModelPath + " (not a device-tree board): using the generic profile; name lines by name or CHIP:OFFSET"
		return g, nil
	}
	if err != nil {
		return nil, fmt.Errorf("detect board: read /%s: %w", ModelPath, err)
	}
	model := cleanModel(string(b))
	if p, ok := MatchModel(model); ok {
		p.Model = model
		return p, nil
	}
	g := generic()
	g.Model = model
	if model == "" {
		g.Note = "empty /" + ModelPath + ": using the generic profile; name lines by name or CHIP:OFFSET"
	} else {
		g.Note = fmt.Sprintf("model %q is not a known board (known: %s): using the generic profile; name lines by name or CHIP:OFFSET, or set the board explicitly", model, strings.Join(knownModels(), "; "))
	}
	return g, nil
}

// knownModels lists every model prefix a profile matches.
func knownModels() []string {
	var ms []string
	for _, p := range all() {
		ms = append(ms, p.Models...)
	}
	return ms
}

// HeaderPin returns the physical pin that carries the BCM line, if the
// header has it.
func (p *Profile) HeaderPin(bcm int) (Pin, bool) {
	for _, pin := range p.Pins {
		if (pin.Kind == GPIO || pin.Kind == ID) && pin.BCM == bcm {
			return pin, true
		}
	}
	return Pin{}, false
}
