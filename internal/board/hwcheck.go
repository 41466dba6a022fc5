package board

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/board/profile"
)

// target is what the devices of a file are judged against.
type target struct {
	// prof is the board's profile; nil for the sim board.
	prof *profile.Profile
	// auto: board is auto, prof is the generic profile, and header
	// pins are refused (the header is known only once detected).
	auto bool
}

// targetOf returns the target of a board name, or false for a name that
// is not a board.
func targetOf(board string) (target, bool) {
	switch board {
	case BoardSim:
		return target{}, true
	case BoardAuto:
		g, _ := profile.ByName("generic")
		return target{prof: g, auto: true}, true
	}
	if p, ok := profile.ByName(board); ok {
		return target{prof: p}, true
	}
	return target{}, false
}

// usage records what the devices checked so far hold, so that a second
// claim on a line, an I2C address, a PWM channel or a port is reported.
type usage struct {
	pins  map[string]pinUse  // by line (pinKey)
	buses map[int]string     // I2C bus number -> first device or chip on it ("devices.t", "chips.ex1")
	addrs map[[2]int]string  // bus, address -> the device or chip there
	chips map[string]chipUse // the chips that passed their checks, by name
	pwms  map[string]string  // chip:channel -> device
	ports map[string]string  // serial port path -> device or Modbus line ("devices.meter", "modbus.rs485")
	// modbus: the Modbus lines and the devices' registers
	// (hwcheck_modbus.go).
	modbus *modbusUse
	spi    *spiUsage         // SPI ADCs (hwcheck_spi.go)
	w1     map[string]string // 1-Wire id -> sensor (hwcheck_kernel.go; made at its first use)
	// declared are the chips the file declares, valid or not (expander pins).
	declared map[string]ChipConfig
}

// pinUse is who holds a line: its owner ("devices.relay", "chips.ex1"),
// the field that names the line, and the line as the file names it.
type pinUse struct {
	owner, field, shown string
}

func newUsage() *usage {
	return &usage{
		pins: map[string]pinUse{}, buses: map[int]string{}, addrs: map[[2]int]string{},
		pwms: map[string]string{}, ports: map[string]string{}, chips: map[string]chipUse{},
	}
}

// hardware checks the devices a real board's file declares, in the order
// of the file, and returns the descriptors of those that have one. Devices whose kind or driver is
// at fault go to v.skip: rules that name them are not judged again.
func (v *validator) hardware(c *Config, t target) []device.Descriptor {
	u := newUsage()
	v.chips(c, t, u)
	v.modbusLines(c, u) // hwcheck_modbus.go
	u.declared = c.Chips
	var descs []device.Descriptor
	for _, id := range c.fileOrder() {
		path, dc := join("devices", id), c.Devices[id]
		valid := device.ValidID(id)
		if !valid {
			v.add(path, "%q is not a device id: want lowercase letters, digits, '.', '_' or '-', starting with a letter or digit, at most 64", id)
		}
		v.entry(path, dc)
		switch dc.Kind {
		case device.KindGPIOOutput, device.KindGPIOInput:
			v.gpioDevice(path, id, dc, t, u)
		case device.KindPWM:
			v.pwmDevice(path, id, dc, t, u)
		case device.KindSensor:
			v.sensorDevice(path, id, dc, t, u)
		case device.KindSerial:
			v.serialDevice(path, id, dc, u)
		case KindServo:
			v.servoDevice(path, id, dc, t, u) // hwcheck_servo.go
		case KindCounter:
			v.counterDevice(path, id, dc, t, u) // hwcheck_counter.go
		case KindModbus:
			v.modbusDevice(path, id, dc, u) // hwcheck_modbus.go
		}
		d, ok := dc.descriptor(id)
		if !ok || !valid {
			v.skip[id] = true
			continue
		}
		if dc.Initial != nil && slices.Contains(kindFields[dc.Kind], "initial") {
			if err := d.Schema.Validate(dc.Initial); err != nil {
				v.add(path+".initial", "%s does not fit %s: %v", show(dc.Initial), id, err)
			}
		}
		descs = append(descs, d)
	}
	v.busPins(t, u)
	return descs
}

// fileOrder returns the device ids in the order of the file they were
// parsed from; ids the file did not have (added since) come first, sorted.
func (c *Config) fileOrder() []string {
	ids := slices.Sorted(maps.Keys(c.Devices))
	slices.SortStableFunc(ids, func(a, b string) int { return c.lines[a] - c.lines[b] })
	return ids
}

// entry checks the fields every device has on a real board: its kind,
// the fields its kind does not take, its tags.
func (v *validator) entry(path string, dc DeviceConfig) {
	switch {
	case dc.Kind == "":
		v.add(path+".kind", "required (%s)", listWords(hwKinds))
	case !slices.Contains(hwKinds, dc.Kind):
		v.add(path+".kind", "unknown kind %q (want %s)", dc.Kind, listWords(hwKinds))
	default:
		for _, f := range dc.setFields() {
			if !slices.Contains(commonFields, f) && !slices.Contains(kindFields[dc.Kind], f) {
				v.add(path+"."+f, "a %s device has no %s (%s is for %s devices)", dc.Kind, f, f, listWords(kindsWith(f)))
			}
		}
	}
	seen := map[string]bool{}
	for i, tag := range dc.Tags {
		p := fmt.Sprintf("%s.tags[%d]", path, i)
		switch {
		case tag == "" || strings.ContainsAny(tag, " \t\n,"):
			v.add(p, "%q is not a tag: want a word without spaces or commas", tag)
		case seen[tag]:
			v.add(p, "tag %q listed twice", tag)
		}
		seen[tag] = true
	}
}

// setFields names the fields of dc that the file sets, in the order of
// the struct.
func (dc DeviceConfig) setFields() []string {
	var out []string
	rv := reflect.ValueOf(dc)
	for i := 0; i < rv.NumField(); i++ {
		name, _, _ := strings.Cut(rv.Type().Field(i).Tag.Get("yaml"), ",")
		if !rv.Field(i).IsZero() {
			out = append(out, name)
		}
	}
	return out
}

// kindsWith lists the kinds that take field f.
func kindsWith(f string) []string {
	var out []string
	for _, k := range hwKinds {
		if slices.Contains(kindFields[k], f) {
			out = append(out, k)
		}
	}
	return out
}

// simEntries refuses the fields that declare hardware on the sim board,
// whose devices are built in.
func (v *validator) simEntries(c *Config) {
	for _, name := range slices.Sorted(maps.Keys(c.Chips)) {
		v.add(join("chips", name), "the sim board has no buses: chips are for a real board")
	}
	for _, name := range slices.Sorted(maps.Keys(c.Modbus)) {
		v.add(join("modbus", name), "the sim board's devices are built in: Modbus lines are for a real board (board: generic runs on any Linux machine)")
	}
	for _, id := range slices.Sorted(maps.Keys(c.Devices)) {
		for _, f := range c.Devices[id].setFields() {
			if !slices.Contains([]string{"risk", "safe", "noSafeReason", "confirmTtl", "rules"}, f) {
				v.add(join("devices", id)+"."+f, "the sim board's devices are built in: %s is for devices of a real board", f)
			}
		}
	}
}

var headerPinSpec = regexp.MustCompile(`(?i)^pin[0-9]+$`)

// pin resolves a device's pin on the board and claims its line. It
// reports whether the pin is usable.
func (v *validator) pin(path, id string, dc DeviceConfig, t target, u *usage) (profile.LineRef, bool) {
	if isExp, ok := v.expanderPin(path, dc, u); isExp {
		return profile.LineRef{}, ok
	}
	spec := strings.TrimSpace(dc.Pin)
	switch {
	case spec == "":
		v.add(path+".pin", "required for a %s device (a line name GPIO17, a header pin pin11, or CHIP:OFFSET gpiochip0:17)", dc.Kind)
		return profile.LineRef{}, false
	case t.auto && headerPinSpec.MatchString(spec):
		v.add(path+".pin", "%q is a header pin, and with board auto the header is known only when the gateway starts: set board (%s) or name the line (GPIO17)",
			spec, strings.Join(profile.Names(), ", "))
		return profile.LineRef{}, false
	}
	ref, err := t.prof.ResolvePin(spec)
	if err != nil {
		v.add(path+".pin", "%v", err)
		return profile.LineRef{}, false
	}
	shown := spec
	if ref.Name != "" && !strings.EqualFold(ref.Name, spec) {
		shown = fmt.Sprintf("%s (%s)", spec, ref.Name)
	}
	key := pinKey(ref)
	if other, dup := u.pins[key]; dup {
		v.add(path+".pin", "%s is also used by %s", shown, other.owner)
		return ref, true
	}
	u.pins[key] = pinUse{owner: path, field: path + ".pin", shown: shown}
	return ref, true
}

// pinKey names a line the same way whichever form named it, as far as
// can be known without the hardware: a line by chip and offset, or by
// its kernel name. (gpiochip0:17 and GPIO17 may be one line on a real
// board; that is only known once the chips are opened.)
func pinKey(r profile.LineRef) string {
	if r.Chip == "" {
		return "name:" + r.Name
	}
	return r.Chip + ":" + strconv.Itoa(r.Offset)
}

// gpioDevice checks a gpio.output or gpio.input.
func (v *validator) gpioDevice(path, id string, dc DeviceConfig, t target, u *usage) {
	v.pin(path, id, dc, t, u)
	if dc.Kind != device.KindGPIOInput {
		return
	}
	if _, ok := pulls[dc.Pull]; dc.Pull != "" && !ok {
		v.add(path+".pull", "unknown pull %q (want up, down or none)", dc.Pull)
	}
	if _, ok := edges[dc.Edge]; dc.Edge != "" && !ok {
		v.add(path+".edge", "unknown edge %q (want both, rising or falling)", dc.Edge)
	}
	if dc.Debounce != nil && *dc.Debounce < 0 {
		v.add(path+".debounce", "must not be negative, got %v", *dc.Debounce)
	}
}

// pwmDevice checks a pwm device: its frequency, and its pin and channel
// against the board's PWM blocks.
func (v *validator) pwmDevice(path, id string, dc DeviceConfig, t target, u *usage) {
	if v.pwmOnChip(path, id, dc, u) { // hwcheck_servo.go
		return
	}
	p := dc.PWM
	software := p != nil && p.Software
	v.frequency(path+".frequency", dc.Frequency, software)
	header := t.prof.GPIOChipLabel != ""
	explicit := p != nil && !software && p.Chip != "" && p.Channel != nil
	var ref profile.LineRef
	pinOK := false
	if dc.Pin != "" || header || !explicit {
		ref, pinOK = v.pin(path, id, dc, t, u)
	}
	if software {
		return
	}
	if p != nil && p.Channel != nil && *p.Channel < 0 {
		v.add(path+".pwm.channel", "must not be negative, got %d", *p.Channel)
		return
	}
	if p != nil && strings.ContainsAny(p.Chip, "/ \t") {
		v.add(path+".pwm.chip", "%q is not a PWM chip: want its name under /sys/class/pwm (pwmchip0) or its controller (fe20c000.pwm)", p.Chip)
		return
	}
	if !header {
		if !explicit {
			v.add(path+".pwm", "the %s board knows no PWM channels: want {chip, channel} (chip as in /sys/class/pwm: pwmchip0) or software", t.prof.Name)
			return
		}
		v.claimPWM(path+".pwm", id, p.Chip, *p.Channel, u)
		return
	}
	if pinOK {
		v.piPWM(path, id, ref, p, t.prof, u)
	}
}

func (v *validator) frequency(path string, f *float64, software bool) {
	limit, what := MaxPWMFrequency, "a hardware PWM"
	if software {
		limit, what = MaxSoftwarePWMFrequency, "a software PWM"
	}
	switch {
	case f == nil:
		v.add(path, "required (in Hz)")
	case math.IsNaN(*f) || math.IsInf(*f, 0):
		v.add(path, "want a finite number, got %v", *f)
	case *f <= 0:
		v.add(path, "must be a positive number of Hz, got %v", *f)
	case *f > limit:
		v.add(path, "%v Hz is above what %s can make (%v Hz)", *f, what, limit)
	}
}

// piPWM finds the hardware channel a Raspberry Pi header line carries,
// and checks it against the one the file names, if any.
func (v *validator) piPWM(path, id string, ref profile.LineRef, p *PWMConfig, prof *profile.Profile, u *usage) {
	field := path + ".pin"
	if p != nil {
		field = path + ".pwm"
	}
	if ref.Chip != prof.GPIOChipLabel {
		v.add(field, "cannot tell which PWM channel %s carries: name the line as GPIO18 or pin12", ref)
		return
	}
	var carried []profile.PWM
	var able []string
	for _, ch := range prof.PWM {
		for _, line := range ch.GPIO {
			able = append(able, fmt.Sprintf("GPIO%d", line))
			if line == ref.Offset {
				carried = append(carried, ch)
			}
		}
	}
	if len(carried) == 0 {
		slices.Sort(able)
		v.add(field, "%s carries no hardware PWM channel on the %s (%s do): use one of those, or pwm: software",
			ref.Name, prof.Description, listWords(slices.Compact(able)))
		return
	}
	ch := carried[0]
	if p != nil && p.Chip != "" && p.Chip != ch.Controller {
		v.add(path+".pwm.chip", "%s's PWM is controller %s (pwmchip numbers change between kernels: name the controller), got %q",
			ref.Name, ch.Controller, p.Chip)
		return
	}
	if p != nil && p.Channel != nil && *p.Channel != ch.Channel {
		v.add(path+".pwm.channel", "%s carries channel %d of %s, not channel %d", ref.Name, ch.Channel, ch.Controller, *p.Channel)
		return
	}
	v.claimPWM(field, id, ch.Controller, ch.Channel, u)
}

func (v *validator) claimPWM(path, id, chip string, channel int, u *usage) {
	key := chip + ":" + strconv.Itoa(channel)
	if other, dup := u.pwms[key]; dup {
		v.add(path, "channel %d of %s is also used by devices.%s", channel, chip, other)
		return
	}
	u.pwms[key] = id
}

// sensorDevice checks an I2C sensor: driver, bus, address, interval,
// thresholds and options.
func (v *validator) sensorDevice(path, id string, dc DeviceConfig, t target, u *usage) {
	if v.spiADC(path, id, dc, t, u) || v.kernelSensor(path, id, dc, u) {
		return
	}
	drv, known := drivers[dc.Driver]
	switch {
	case dc.Driver == "":
		v.add(path+".driver", "required (%s)", listWords(driverNames))
	case !known:
		v.add(path+".driver", "unknown driver %q (want %s)", dc.Driver, listWords(driverNames))
	}
	bus, busOK := v.bus(path+".bus", dc.Bus, t.prof)
	switch a := dc.Address; {
	case a == nil:
		v.add(path+".address", "required (the sensor's 7-bit I2C address, such as 0x76)")
	case known && !slices.Contains(drv.addrs, *a):
		v.add(path+".address", "%s is out of range for %s (%s)", hexAddr(*a), dc.Driver, addrText(drv.addrs))
	case !known && (*a < 0x08 || *a > 0x77):
		v.add(path+".address", "%s is not a 7-bit device address (0x08 to 0x77)", hexAddr(*a))
	case busOK:
		key := [2]int{bus, *a}
		if other, dup := u.addrs[key]; dup {
			v.add(path+".address", "%s on bus %d is also used by %s", hexAddr(*a), bus, other)
		} else {
			u.addrs[key] = path
		}
	}
	if busOK {
		if _, used := u.buses[bus]; !used {
			u.buses[bus] = path
		}
	}
	if dc.Interval != nil {
		v.duration(path+".interval", *dc.Interval)
	}
	if known {
		v.thresholds(path+".thresholds", dc, drv)
		v.sensorOptions(path+".options", dc.Driver, drv, dc.options())
	}
}

func hexAddr(a int) string {
	if a < 0 {
		return strconv.Itoa(a)
	}
	return fmt.Sprintf("%#02x", a)
}

// bus parses an I2C bus, "1" or "/dev/i2c-1", and refuses one the board
// reserves.
func (v *validator) bus(path, s string, prof *profile.Profile) (int, bool) {
	if s == "" {
		v.add(path, "required (a bus number such as 1, or /dev/i2c-1)")
		return 0, false
	}
	digits := strings.TrimPrefix(s, "/dev/i2c-")
	n, err := strconv.Atoi(digits)
	if err != nil || n < 0 || strings.HasPrefix(digits, "+") || strings.HasPrefix(digits, "-") {
		v.add(path, "want a bus number (1) or /dev/i2c-N, got %q", s)
		return 0, false
	}
	for _, b := range prof.I2C {
		if b.Device == "/dev/i2c-"+strconv.Itoa(n) && b.Reserved {
			v.add(path, "bus %d is reserved on the %s: %s", n, prof.Description, b.Note)
			return 0, false
		}
	}
	return n, true
}

// thresholds checks that each names a quantity the driver measures and
// is a change worth publishing.
func (v *validator) thresholds(path string, dc DeviceConfig, drv driver) {
	var names []string
	for _, q := range drv.quantities(dc.options()) {
		names = append(names, q.Name)
	}
	for _, q := range slices.Sorted(maps.Keys(dc.Thresholds)) {
		th := dc.Thresholds[q]
		switch {
		case !slices.Contains(names, q):
			v.add(path+"."+q, "%s measures no %q (want %s)", dc.Driver, q, listWords(names))
		case math.IsNaN(th) || math.IsInf(th, 0):
			v.add(path+"."+q, "want a finite number, got %v", th)
		case th < 0:
			v.add(path+"."+q, "must not be negative, got %v", th)
		}
	}
}

// sensorOptions checks the options a driver takes, and refuses the
// others.
func (v *validator) sensorOptions(path, name string, drv driver, o SensorOptions) {
	rv := reflect.ValueOf(o)
	for i := 0; i < rv.NumField(); i++ {
		f, _, _ := strings.Cut(rv.Type().Field(i).Tag.Get("yaml"), ",")
		if !rv.Field(i).IsZero() && !slices.Contains(drv.options, f) {
			v.add(path+"."+f, "not an option of %s (its options: %s)", name, strings.Join(drv.options, ", "))
		}
	}
	oneOf := func(field string, x *int, allowed []int, unit string) {
		if x != nil && !slices.Contains(allowed, *x) {
			var words []string
			for _, a := range allowed {
				words = append(words, strconv.Itoa(a))
			}
			v.add(path+"."+field, "want %s%s, got %d", listWords(words), unit, *x)
		}
	}
	word := func(field, x string) {
		if x != "" && !slices.Contains([]string{"high", "medium", "low"}, x) {
			v.add(path+"."+field, "want high, medium or low, got %q", x)
		}
	}
	switch name {
	case "ads1115":
		seen := map[int]bool{}
		for i, ch := range o.Channels {
			p := fmt.Sprintf("%s.channels[%d]", path, i)
			switch {
			case ch < 0 || ch > 3:
				v.add(p, "channel %d: the inputs are 0 to 3", ch)
			case seen[ch]:
				v.add(p, "channel %d listed twice", ch)
			}
			seen[ch] = true
		}
		oneOf("fullScale", o.FullScale, []int{6144, 4096, 2048, 1024, 512, 256}, " (mV)")
		oneOf("dataRate", o.DataRate, []int{8, 16, 32, 64, 128, 250, 475, 860}, " (samples per second)")
	case "bme280":
		if ov := o.Oversampling; ov != nil {
			factors := []int{1, 2, 4, 8, 16}
			oneOf("oversampling.temperature", ov.Temperature, factors, "")
			oneOf("oversampling.pressure", ov.Pressure, factors, "")
			oneOf("oversampling.humidity", ov.Humidity, factors, "")
		}
		oneOf("filter", o.Filter, []int{0, 2, 4, 8, 16}, " (0: off)")
	case "sht3x":
		word("repeatability", o.Repeatability)
	case "sht4x":
		word("precision", o.Precision)
	case "mcp9808":
		if r := o.Resolution; r != nil && !slices.Contains([]float64{0.0625, 0.125, 0.25, 0.5}, *r) {
			v.add(path+".resolution", "want 0.0625, 0.125, 0.25 or 0.5 (°C), got %v", *r)
		}
	case "tmp105":
		if b := o.Bits; b != nil && (*b < 9 || *b > 12) {
			v.add(path+".bits", "want 9 to 12, got %d", *b)
		}
	}
}

// serialDevice checks a serial device's port settings with serialline's
// own PortConfig.Validate, each fault on its field.
func (v *validator) serialDevice(path, id string, dc DeviceConfig, u *usage) {
	reported := map[string]bool{}
	if dc.Port == "" {
		v.add(path+".port", "required (such as /dev/ttyUSB0, or better a /dev/serial/by-id/... link)")
		reported["port"] = true
	}
	if dc.Baud == nil {
		v.add(path+".baud", "required (bits per second, such as 9600 or 115200)")
		reported["baud"] = true
	}
	if dc.Delimiter != "" && (len(dc.Delimiter) != 1 || dc.Delimiter == "\x00") {
		v.add(path+".delimiter", "want one byte other than NUL, such as \"\\n\" or \"\\r\", got %q", dc.Delimiter)
		reported["delimiter"] = true
	}
	var joined interface{ Unwrap() []error }
	if err := dc.PortConfig().Validate(); errors.As(err, &joined) {
		for _, e := range joined.Unwrap() {
			msg := e.Error()
			field := msg[:strings.IndexAny(msg+" ", " :")]
			if field == "path" {
				field = "port"
			}
			if !reported[field] {
				v.add(path+"."+field, "%s", msg)
			}
		}
	}
	if dc.Port == "" {
		return
	}
	if other, dup := u.ports[dc.Port]; dup {
		v.add(path+".port", "%s is also used by %s", dc.Port, other)
		return
	}
	u.ports[dc.Port] = "devices." + id
}

// busPins reports GPIO devices on the header lines of an I2C bus or a
// UART that a device uses.
func (v *validator) busPins(t target, u *usage) {
	label := t.prof.GPIOChipLabel
	if label == "" {
		return
	}
	clash := func(line int, what, user string) {
		key := label + ":" + strconv.Itoa(line)
		if pu, ok := u.pins[key]; ok {
			v.add(pu.field, "%s is %s, used by %s", pu.shown, what, user)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(u.buses)) {
		for _, b := range t.prof.I2C {
			if b.Device == "/dev/i2c-"+strconv.Itoa(n) {
				clash(b.SDA, fmt.Sprintf("SDA of I2C bus %d", n), u.buses[n])
				clash(b.SCL, fmt.Sprintf("SCL of I2C bus %d", n), u.buses[n])
			}
		}
	}
	for _, port := range slices.Sorted(maps.Keys(u.ports)) {
		for _, uart := range t.prof.UART {
			if uart.Device != "" && uart.Device == port {
				clash(uart.TX, fmt.Sprintf("TX of %s (%s)", uart.Name, port), u.ports[port])
				clash(uart.RX, fmt.Sprintf("RX of %s (%s)", uart.Name, port), u.ports[port])
			}
		}
	}
	v.spiPins(t, u)
}
