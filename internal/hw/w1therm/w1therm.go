// Package w1therm reads 1-Wire thermometers — the DS18B20, DS18S20 and
// DS1822 (and the DS1825 and DS28EA00 the kernel treats alike) — through
// the kernel's w1 subsystem and its w1_therm driver, as a Raspberry Pi
// has them with the w1-gpio overlay: one directory a sensor under
// /sys/bus/w1/devices, named by family code and serial number
// ("28-0316a2791aff").
//
// Reading a sensor's w1_slave file makes the kernel start a conversion,
// wait for it (up to ConversionTime at 12 bits) and answer two lines
// (Documentation/w1/slaves/w1_therm.rst):
//
//	72 01 4b 46 7f ff 0e 10 57 : crc=57 YES
//	72 01 4b 46 7f ff 0e 10 57 t=23125
//
// the scratchpad's nine bytes with the kernel's CRC check, then the
// temperature in millidegrees Celsius. Nothing is kept between reads, so
// a sensor unplugged is a fault of the read that missed it and clears by
// itself at the first read after it is back.
package w1therm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/openhal/gateway/internal/hw/sensor"
)

// DefaultRoot is where the kernel lists the 1-Wire devices it found.
const DefaultRoot = "/sys/bus/w1/devices"

// Under is where the kernel lists the 1-Wire devices in the sysfs tree
// mounted at sys ("/sys", or a test's copy of one).
func Under(sys string) string { return filepath.Join(sys, "bus", "w1", "devices") }

// ConversionTime is the longest a conversion takes (12 bits, the
// DS18B20's t_CONV): a sensor cannot be read faster than this, and each
// read of w1_slave blocks in the kernel about as long.
const ConversionTime = 750 * time.Millisecond

// families are the family codes w1_therm serves, with their chips.
var families = map[string]string{
	"10": "DS18S20",
	"22": "DS1822",
	"28": "DS18B20",
	"3b": "DS1825",
	"42": "DS28EA00",
}

var idPattern = regexp.MustCompile(`^([0-9a-f]{2})-[0-9a-f]{12}$`)

// CheckID reports whether id names a thermometer: a family code w1_therm
// serves, a dash and the 12 hex digits of the serial number, as the
// kernel names its directory.
func CheckID(id string) error {
	m := idPattern.FindStringSubmatch(id)
	if m == nil {
		return fmt.Errorf("%q is not a 1-Wire id: want the family code, a dash and 12 lower-case hex digits, as in 28-0316a2791aff", id)
	}
	if _, ok := families[m[1]]; !ok {
		return fmt.Errorf("%q is not a thermometer: family %s is none of 10 (DS18S20), 22 (DS1822), 28 (DS18B20), 3b (DS1825), 42 (DS28EA00)", id, m[1])
	}
	return nil
}

// Chip names the chip of a valid id by its family code.
func Chip(id string) string { return families[strings.SplitN(id, "-", 2)[0]] }

// List returns the ids of the thermometers the kernel lists under root,
// sorted; other 1-Wire devices and the bus masters are left out. A root
// that does not exist means no w1 bus: the overlay is not loaded.
func List(root string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("list 1-Wire devices: %s does not exist: no 1-Wire bus (is the w1-gpio overlay loaded? dtoverlay=w1-gpio in config.txt)", root)
	}
	if err != nil {
		return nil, fmt.Errorf("list 1-Wire devices: %w", err)
	}
	var ids []string
	for _, e := range entries {
		if CheckID(e.Name()) == nil {
			ids = append(ids, e.Name())
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// Dev is one thermometer.
type Dev struct {
	id   string
	file string // its w1_slave
}

var _ sensor.Sensor = (*Dev)(nil)

// New returns the thermometer id under root (DefaultRoot when ""). The
// sensor need not be present yet: until it is, each read is a fault.
func New(root, id string) (*Dev, error) {
	if err := CheckID(id); err != nil {
		return nil, fmt.Errorf("w1therm: %w", err)
	}
	if root == "" {
		root = DefaultRoot
	}
	return &Dev{id: id, file: filepath.Join(root, id, "w1_slave")}, nil
}

// Quantities implements sensor.Sensor.
func (d *Dev) Quantities() []sensor.Quantity { return Quantities() }

// Quantities are what a thermometer measures.
func Quantities() []sensor.Quantity {
	return []sensor.Quantity{{Name: "temperature", Unit: "Cel"}}
}

// Sense reads the temperature. The read blocks in the kernel for the
// conversion, which ctx cannot interrupt; ctx is checked before it.
func (d *Dev) Sense(ctx context.Context) (map[string]float64, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("w1therm: read %s: %w", d.id, err)
	}
	b, err := os.ReadFile(d.file)
	if errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Stat(filepath.Dir(filepath.Dir(d.file))); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("w1therm: read %s: no 1-Wire bus (is the w1-gpio overlay loaded? dtoverlay=w1-gpio in config.txt)", d.id)
		}
		return nil, fmt.Errorf("w1therm: %s is not on the 1-Wire bus (unplugged, or its data line is broken)", d.id)
	}
	if err != nil {
		return nil, fmt.Errorf("w1therm: read %s: %w", d.id, err)
	}
	c, err := parse(b)
	if err != nil {
		return nil, fmt.Errorf("w1therm: read %s: %w", d.id, err)
	}
	return map[string]float64{"temperature": c}, nil
}

func (d *Dev) String() string { return fmt.Sprintf("%s{%s}", Chip(d.id), d.id) }

// parse decodes w1_slave's two lines into degrees Celsius, refusing what
// the kernel reports as a failed read and what a failed read looks like
// though its CRC matches.
func parse(b []byte) (float64, error) {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) != 2 {
		return 0, fmt.Errorf("w1_slave has %d lines, want 2: %q", len(lines), b)
	}
	pad, ok := scratchpad(lines[0])
	switch {
	case !ok:
		return 0, fmt.Errorf("w1_slave's first line is not nine bytes and a CRC check: %q", lines[0])
	case !strings.HasSuffix(lines[0], " YES"):
		return 0, errors.New("CRC mismatch: noise on the 1-Wire line (a long cable, a missing 4.7 kΩ pull-up?)")
	case bytes.Count(pad, []byte{0}) == len(pad):
		// Nine zeros have a CRC of zero: the kernel says YES.
		return 0, errors.New("read all zeros: the data line is held low (shorted, or the sensor is wired backwards)")
	case pad[6] == 0x0c && (pad[0] == 0x50 && pad[1] == 0x05 || pad[0] == 0xff && pad[1] == 0x07):
		// w1_therm's own check (its features bit 1), done here whatever
		// the driver's settings: 85 °C is the power-on value, 127.94 °C
		// what a sensor short of power leaves.
		return 0, errors.New("the conversion did not run: the power-on value is still in the scratchpad (parasite power too weak?)")
	}
	t, ok := strings.CutPrefix(lines[1][strings.LastIndexByte(lines[1], ' ')+1:], "t=")
	milli, err := strconv.Atoi(t)
	if !ok || err != nil {
		return 0, fmt.Errorf("w1_slave's second line has no t=<millidegrees>: %q", lines[1])
	}
	return float64(milli) / 1000, nil
}

// scratchpad decodes the nine hex bytes that begin a w1_slave line.
func scratchpad(line string) ([]byte, bool) {
	fields := strings.Fields(line)
	if len(fields) < 11 || fields[9] != ":" {
		return nil, false
	}
	pad := make([]byte, 9)
	for i := range pad {
		v, err := strconv.ParseUint(fields[i], 16, 8)
		if err != nil {
			return nil, false
		}
		pad[i] = byte(v)
	}
	return pad, true
}
