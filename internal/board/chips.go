package board

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/openhal/gateway/internal/hw/i2c/pca9685"
)

// ChipConfig is a chip on a bus whose pins or outputs are devices of
// their own: an I/O expander's pins are gpio.input and gpio.output
// devices (`pin: ex1:GPA0`), a PWM board's outputs pwm and servo devices
// (`pwm: {chip: servos, channel: 3}`). The chip is declared once, under
// `chips:` by a name of the file's choosing, since what it holds (an
// interrupt line, a frequency) is the chip's, not one device's.
type ChipConfig struct {
	// Type is the chip: mcp23017, mcp23008 or pca9685.
	Type string `yaml:"type"`
	// Bus is its I2C bus, "1" or "/dev/i2c-1".
	Bus string `yaml:"bus"`
	// Address is its 7-bit I2C address.
	Address *int `yaml:"address"`
	// Interrupt is the Pi GPIO line an expander's INT output is wired
	// to (GPIO17, pin11): its inputs are read when it falls, not polled.
	Interrupt string `yaml:"interrupt"`
	// Frequency is a PWM board's frequency in Hz, shared by its outputs.
	Frequency *float64 `yaml:"frequency"`
}

// chipType is what the configuration knows of a chip type.
type chipType struct {
	addrs  []int    // the addresses it can be strapped to
	fields []string // its fields beyond type, bus and address
	what   string   // what its devices are, for messages
}

// chipTypes are the chips a file may declare.
var chipTypes = map[string]chipType{
	"mcp23017": {addrRange(0x20, 0x27), []string{"interrupt"}, "16 pins (GPA0..GPA7, GPB0..GPB7)"},
	"mcp23008": {addrRange(0x20, 0x27), []string{"interrupt"}, "8 pins (GP0..GP7)"},
	// 0x70 is the PCA9685's All Call address, which every board on the
	// bus answers: pca9685.New refuses it.
	"pca9685": {slices.DeleteFunc(addrRange(0x40, 0x7F), func(a int) bool { return a == 0x70 }), []string{"frequency"}, "16 PWM outputs (0..15)"},
}

// chipTypeNames lists the chip types in the order messages name them.
var chipTypeNames = []string{"mcp23017", "mcp23008", "pca9685"}

// chipName is what a chip may be called: a word that cannot be taken for
// a gpiochip's name or label (those hold digits after letters, or
// hyphens and dots, but a file's chip name is short and plain).
var chipName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// chipUse is a chip that passed its checks, for the devices on it.
type chipUse struct {
	ChipConfig
	name string
}

// chips checks the chips a real board's file declares, in name order,
// and keeps those that passed for the devices that name them. A chip
// claims its I2C address as a sensor does, and its interrupt line as a
// device claims its pin.
func (v *validator) chips(c *Config, t target, u *usage) {
	for _, name := range slices.Sorted(maps.Keys(c.Chips)) {
		path, cc := join("chips", name), c.Chips[name]
		ok := true
		if !chipName.MatchString(name) || strings.HasPrefix(name, "gpiochip") {
			v.add(path, "%q is not a chip name: want lowercase letters, digits or '_', starting with a letter, at most 32, and not gpiochipN", name)
			ok = false
		}
		typ, known := chipTypes[cc.Type]
		switch {
		case cc.Type == "":
			v.add(path+".type", "required (%s)", listWords(chipTypeNames))
			ok = false
		case !known:
			v.add(path+".type", "unknown chip %q (want %s)", cc.Type, listWords(chipTypeNames))
			ok = false
		default:
			v.chipFields(path, cc, typ)
		}
		bus, busOK := v.bus(path+".bus", cc.Bus, t.prof)
		ok = ok && busOK && v.chipAddress(path+".address", name, cc, typ, known, bus, u)
		if busOK {
			if _, used := u.buses[bus]; !used {
				u.buses[bus] = path
			}
		}
		if cc.Frequency != nil {
			ok = v.chipFrequency(path+".frequency", *cc.Frequency) && ok
		}
		if cc.Interrupt != "" {
			ok = v.chipInterrupt(path+".interrupt", name, cc.Interrupt, t, u) && ok
		}
		if ok {
			u.chips[name] = chipUse{ChipConfig: cc, name: name}
		}
	}
}

// chipFields refuses the fields a chip's type does not take, and
// requires a PWM board's frequency.
func (v *validator) chipFields(path string, cc ChipConfig, typ chipType) {
	rv := reflect.ValueOf(cc)
	for i := 0; i < rv.NumField(); i++ {
		f, _, _ := strings.Cut(rv.Type().Field(i).Tag.Get("yaml"), ",")
		if slices.Contains([]string{"type", "bus", "address"}, f) || rv.Field(i).IsZero() || slices.Contains(typ.fields, f) {
			continue
		}
		v.add(path+"."+f, "a %s has no %s", cc.Type, f)
	}
	if slices.Contains(typ.fields, "frequency") && cc.Frequency == nil {
		v.add(path+".frequency", "required: the PWM frequency in Hz its outputs share (50 for servos)")
	}
}

// chipAddress checks a chip's address against its type's and claims it
// on its bus.
func (v *validator) chipAddress(path, name string, cc ChipConfig, typ chipType, known bool, bus int, u *usage) bool {
	a := cc.Address
	switch {
	case a == nil:
		v.add(path, "required (the chip's 7-bit I2C address, such as 0x20)")
		return false
	case known && !slices.Contains(typ.addrs, *a):
		msg := addrText(typ.addrs)
		if cc.Type == "pca9685" {
			msg = "0x40 to 0x7f but 0x70, its All Call address"
		}
		v.add(path, "%s is out of range for a %s (%s)", hexAddr(*a), cc.Type, msg)
		return false
	}
	key := [2]int{bus, *a}
	if other, dup := u.addrs[key]; dup {
		v.add(path, "%s on bus %d is also used by %s", hexAddr(*a), bus, other)
		return false
	}
	u.addrs[key] = "chips." + name
	return true
}

func (v *validator) chipFrequency(path string, f float64) bool {
	if math.IsNaN(f) || f < pca9685.MinFrequency || f > pca9685.MaxFrequency {
		v.add(path, "want %.1f to %.1f Hz (the PCA9685's prescaler), got %v", pca9685.MinFrequency, pca9685.MaxFrequency, f)
		return false
	}
	return true
}

// chipInterrupt resolves an expander's interrupt line on the board and
// claims it, as a device's pin.
func (v *validator) chipInterrupt(path, name, spec string, t target, u *usage) bool {
	if t.auto && headerPinSpec.MatchString(spec) {
		v.add(path, "%q is a header pin, and with board auto the header is known only when the gateway starts: set board or name the line (GPIO17)", spec)
		return false
	}
	ref, err := t.prof.ResolvePin(strings.TrimSpace(spec))
	if err != nil {
		v.add(path, "%v", err)
		return false
	}
	key := pinKey(ref)
	if other, dup := u.pins[key]; dup {
		v.add(path, "%s is also used by %s", spec, other.owner)
		return false
	}
	u.pins[key] = pinUse{owner: "chips." + name, field: path, shown: spec}
	return true
}

// chipOf returns the chip a device names, if it passed its checks.
func (u *usage) chipOf(name string) (chipUse, bool) {
	c, ok := u.chips[name]
	return c, ok
}

// describeChip names a chip in messages: "chips.ex1 (mcp23017, 16 pins
// (GPA0..GPA7, GPB0..GPB7))".
func describeChip(c chipUse) string {
	return fmt.Sprintf("chips.%s (%s, %s)", c.name, c.Type, chipTypes[c.Type].what)
}
