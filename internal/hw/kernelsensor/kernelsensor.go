// Package kernelsensor reads sensors that have a Linux kernel driver,
// through the two sysfs interfaces the kernel gives them, so that any of
// hundreds of chips (the DHT11/DHT22 of the dht11 overlay, a BME280 bound
// by the kernel's bmp280 driver, an LM75 or TMP105 by lm75, the SoC's own
// thermal sensor) is a sensor without a driver of the gateway's:
//
//   - IIO (Documentation/ABI/testing/sysfs-bus-iio): a directory
//     /sys/bus/iio/devices/iio:deviceN with a name file, and a file a
//     channel: in_temp_input, or in_voltage0_raw with in_voltage0_scale
//     (or the type's shared in_voltage_scale) and in_voltage0_offset;
//     the value is (raw + offset) × scale.
//   - hwmon (Documentation/hwmon/sysfs-interface.rst): a directory
//     /sys/class/hwmon/hwmonN with a name file, and temp1_input, in0_input,
//     humidity1_input, curr1_input, power1_input, fan1_input.
//
// A device is chosen by the kernel's name for it (the name file), since
// the N of iio:deviceN and hwmonN depends on the order of probing. Each
// read opens the files anew: a driver that failed one read (the DHT's
// timeouts are common) or a device bound late is a fault of that read
// only.
package kernelsensor

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/openhal/gateway/internal/hw/sensor"
)

// Interface is one of the kernel's two sensor interfaces.
type Interface int

const (
	IIO Interface = iota
	Hwmon
)

func (i Interface) String() string {
	if i == Hwmon {
		return "hwmon"
	}
	return "iio"
}

// Root is where the kernel lists the devices of i.
func (i Interface) Root() string { return i.Under("/sys") }

// Under is where the devices of i are listed in the sysfs tree mounted at
// sys ("/sys", or a test's copy of one).
func (i Interface) Under(sys string) string {
	if i == Hwmon {
		return filepath.Join(sys, "class", "hwmon")
	}
	return filepath.Join(sys, "bus", "iio", "devices")
}

// prefix is the start of the name of a device's directory: IIO lists
// triggers (triggerN, which have a name file too) beside its devices.
func (i Interface) prefix() string {
	if i == Hwmon {
		return "hwmon"
	}
	return "iio:device"
}

// channelType is a kind of channel: the kernel's name for it in each
// interface, the quantity it becomes, its SenML unit, and the power of
// ten that takes a value of the kernel's unit to it.
type channelType struct {
	iio, hwmon string // "" where the interface has none
	quantity   string
	unit       string // SenML
	iioExp     int    // sysfs-bus-iio's unit to ours
	hwmonExp   int    // sysfs-interface.rst's unit to ours
}

var channelTypes = []channelType{
	{"temp", "temp", "temperature", "Cel", -3, -3},              // millidegrees
	{"humidityrelative", "humidity", "humidity", "%RH", -3, -3}, // milli-percent
	{"pressure", "", "pressure", "Pa", 3, 0},                    // IIO: kilopascal
	{"voltage", "in", "voltage", "V", -3, -3},                   // millivolts
	{"current", "curr", "current", "A", -3, -3},                 // milliamperes
	{"illuminance", "", "illuminance", "lx", 0, 0},              // lux
	{"", "power", "power", "W", 0, -6},                          // hwmon: microwatts
	{"", "fan", "fan", "1/min", 0, 0},                           // hwmon: RPM
}

// Quantity is the quantity a configuration names on interface i: a
// channel type's quantity ("temperature"), or one followed by the
// kernel's number of the channel ("voltage1"), as Channels names them,
// with its unit.
func (i Interface) Quantity(name string) (sensor.Quantity, bool) {
	base := strings.TrimRight(name, "0123456789")
	for _, t := range channelTypes {
		if t.quantity == base && base != "" && t.name(i) != "" {
			return sensor.Quantity{Name: name, Unit: t.unit}, true
		}
	}
	return sensor.Quantity{}, false
}

// Quantities are the channel types interface i gives, by quantity, in
// the order of the reader's table.
func (i Interface) Quantities() []sensor.Quantity {
	var out []sensor.Quantity
	for _, t := range channelTypes {
		if t.name(i) != "" {
			out = append(out, sensor.Quantity{Name: t.quantity, Unit: t.unit})
		}
	}
	return out
}

// name is the kernel's name of the channel type in interface i.
func (t channelType) name(i Interface) string {
	if i == Hwmon {
		return t.hwmon
	}
	return t.iio
}

// inUnit takes v from the kernel's unit to the quantity's by exp, a
// power of ten; dividing by an exact power keeps 23400 m°C 23.4 °C.
func inUnit(v float64, exp int) float64 {
	if exp < 0 {
		return v / math.Pow10(-exp)
	}
	return v * math.Pow10(exp)
}

// Found is a device of an interface as List finds it.
type Found struct {
	// Name is the kernel's name for it: its name file.
	Name string
	// Index is its place among the devices of that name, in the order
	// of their numbers (hwmon2 before hwmon10): what Open and Find take.
	Index int
	// Dir is its directory.
	Dir string
}

// List returns the devices of interface i under root (i.Root() when "")
// that have a name, in the order of their numbers, each with its index
// among those of its name.
func List(i Interface, root string) ([]Found, error) {
	if root == "" {
		root = i.Root()
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("list %s devices: %w", i, err)
	}
	type numbered struct {
		n   int
		dir string
	}
	var dirs []numbered
	for _, e := range entries {
		n, err := strconv.Atoi(strings.TrimPrefix(e.Name(), i.prefix()))
		if err == nil && strings.HasPrefix(e.Name(), i.prefix()) {
			dirs = append(dirs, numbered{n, filepath.Join(root, e.Name())})
		}
	}
	sort.Slice(dirs, func(a, b int) bool { return dirs[a].n < dirs[b].n }) // not slices.SortFunc: a sort of its own for this type costs the binary 10 KiB
	var out []Found
	count := map[string]int{}
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d.dir, "name"))
		if err != nil {
			continue // a device without a name cannot be chosen by one
		}
		name := strings.TrimSpace(string(b))
		out = append(out, Found{Name: name, Index: count[name], Dir: d.dir})
		count[name]++
	}
	return out, nil
}

// Find returns the directory of the device of interface i under root
// (i.Root() when "") whose name file says name; index picks among several
// of one name (0 is the lowest numbered).
func Find(i Interface, root, name string, index int) (string, error) {
	if root == "" {
		root = i.Root()
	}
	all, err := List(i, root)
	if err != nil {
		return "", fmt.Errorf("find %s device %q: %w", i, name, err)
	}
	var names []string
	n := 0
	for _, f := range all {
		names = append(names, f.Name)
		if f.Name != name {
			continue
		}
		if f.Index == index {
			return f.Dir, nil
		}
		n++
	}
	if n > 0 {
		return "", fmt.Errorf("find %s device %q: %d of that name, no index %d", i, name, n, index)
	}
	slices.Sort(names)
	return "", fmt.Errorf("find %s device %q: none of that name under %s (names there: %s)", i, name, root, orNone(names))
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(slices.Compact(s), ", ")
}

// Channel is one value a device gives, as the kernel's files name it.
type Channel struct {
	Quantity sensor.Quantity
	index    string // the kernel's index of the channel ("" for none)
	input    string // the processed value's file, or ""
	raw      string // else the raw value's file
	scale    string // "" for 1
	offset   string // "" for 0
	exp      int    // the kernel's unit to the quantity's, a power of ten
}

var (
	iioFile   = regexp.MustCompile(`^in_([a-z]+?)(\d*)_(input|raw)$`)
	hwmonFile = regexp.MustCompile(`^([a-z]+?)(\d+)_input$`)
)

// Channels lists the channels of the device at dir, in the order of
// their files' names: a channel type's first is named by its quantity
// ("temperature"), later ones by quantity and kernel index
// ("voltage1").
func Channels(i Interface, dir string) ([]Channel, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list the channels of %s: %w", dir, err)
	}
	files := map[string]bool{}
	for _, e := range entries {
		files[e.Name()] = true
	}
	var out []Channel
	seen := map[string]bool{}
	for _, e := range entries {
		ch, ok := channelOf(i, e.Name(), files)
		if !ok {
			continue
		}
		key := ch.Quantity.Name + ch.index
		if seen[key] {
			continue // in_temp_input beside in_temp_raw: the processed value wins (sorted first)
		}
		seen[key] = true
		out = append(out, ch)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s has no channel this reader knows (temperature, humidity, pressure, voltage, current, illuminance, power, fan)", dir)
	}
	return numbered(out), nil
}

// numbered names each channel by its quantity alone when it is the only
// one of its type, and by quantity and the kernel's index otherwise
// ("voltage0", "voltage1").
func numbered(chs []Channel) []Channel {
	count := map[string]int{}
	for _, ch := range chs {
		count[ch.Quantity.Name]++
	}
	for i := range chs {
		if count[chs[i].Quantity.Name] > 1 {
			chs[i].Quantity.Name += chs[i].index
		}
	}
	return chs
}

// channelOf recognises file as a channel of interface i.
func channelOf(i Interface, file string, files map[string]bool) (Channel, bool) {
	if i == Hwmon {
		m := hwmonFile.FindStringSubmatch(file)
		if m == nil {
			return Channel{}, false
		}
		for _, t := range channelTypes {
			if t.hwmon == m[1] {
				return Channel{Quantity: sensor.Quantity{Name: t.quantity, Unit: t.unit}, index: m[2], input: file, exp: t.hwmonExp}, true
			}
		}
		return Channel{}, false
	}
	m := iioFile.FindStringSubmatch(file)
	if m == nil {
		return Channel{}, false
	}
	for _, t := range channelTypes {
		if t.iio != m[1] {
			continue
		}
		ch := Channel{Quantity: sensor.Quantity{Name: t.quantity, Unit: t.unit}, index: m[2], exp: t.iioExp}
		if m[3] == "input" {
			ch.input = file
			return ch, true
		}
		ch.raw = file
		// A channel's own scale and offset, else its type's shared ones.
		for _, prefix := range []string{"in_" + m[1] + m[2], "in_" + m[1]} {
			if ch.scale == "" && files[prefix+"_scale"] {
				ch.scale = prefix + "_scale"
			}
			if ch.offset == "" && files[prefix+"_offset"] {
				ch.offset = prefix + "_offset"
			}
		}
		return ch, true
	}
	return Channel{}, false
}

// Dev is one kernel device and the channels read from it.
type Dev struct {
	i        Interface
	name     string
	dir      string
	channels []Channel
}

var _ sensor.Sensor = (*Dev)(nil)

// Open finds the device of interface i named name (see Find) and reads
// the channels it has.
func Open(i Interface, root, name string, index int) (*Dev, error) {
	dir, err := Find(i, root, name, index)
	if err != nil {
		return nil, err
	}
	chs, err := Channels(i, dir)
	if err != nil {
		return nil, err
	}
	return &Dev{i: i, name: name, dir: dir, channels: chs}, nil
}

// Select returns d reading only the channels of the quantities named,
// in that order, or an error naming a quantity the device does not give
// and those it gives.
func (d *Dev) Select(names []string) (*Dev, error) {
	sel := *d
	sel.channels = nil
	for _, n := range names {
		i := slices.IndexFunc(d.channels, func(ch Channel) bool { return ch.Quantity.Name == n })
		if i < 0 {
			var have []string
			for _, ch := range d.channels {
				have = append(have, ch.Quantity.Name)
			}
			return nil, fmt.Errorf("%s gives no %s (it gives %s)", d, n, strings.Join(have, ", "))
		}
		sel.channels = append(sel.channels, d.channels[i])
	}
	return &sel, nil
}

// Quantities implements sensor.Sensor.
func (d *Dev) Quantities() []sensor.Quantity {
	q := make([]sensor.Quantity, len(d.channels))
	for i, ch := range d.channels {
		q[i] = ch.Quantity
	}
	return q
}

// Sense reads every channel. sysfs reads are short but some drivers
// block in them (the DHT's bit-banged read, about 20 ms); ctx is checked
// before each.
func (d *Dev) Sense(ctx context.Context) (map[string]float64, error) {
	out := make(map[string]float64, len(d.channels))
	for _, ch := range d.channels {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("%s: read %s: %w", d, ch.Quantity.Name, err)
		}
		v, err := ch.read(d.dir)
		if err != nil {
			return nil, fmt.Errorf("%s: read %s: %w", d, ch.Quantity.Name, err)
		}
		out[ch.Quantity.Name] = v
	}
	return out, nil
}

func (d *Dev) String() string { return fmt.Sprintf("%s %q (%s)", d.i, d.name, d.dir) }

// read reads one value: the processed input, or (raw + offset) × scale,
// in the quantity's unit.
func (ch Channel) read(dir string) (float64, error) {
	if ch.input != "" {
		v, err := number(dir, ch.input)
		return inUnit(v, ch.exp), err
	}
	v, err := number(dir, ch.raw)
	if err != nil {
		return 0, err
	}
	offset, scale := 0.0, 1.0
	if ch.offset != "" {
		if offset, err = number(dir, ch.offset); err != nil {
			return 0, err
		}
	}
	if ch.scale != "" {
		if scale, err = number(dir, ch.scale); err != nil {
			return 0, err
		}
	}
	return inUnit((v+offset)*scale, ch.exp), nil
}

// number reads a sysfs file holding one number. A read the driver
// failed comes back as its error (EIO, ETIMEDOUT: the DHT's usual).
func number(dir, file string) (float64, error) {
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, fmt.Errorf("%s is gone: the device was unbound", file)
		}
		return 0, err
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
	if err != nil {
		return 0, fmt.Errorf("%s holds %q, not a number", file, strings.TrimSpace(string(b)))
	}
	return v, nil
}
