package inventory

import (
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/openhal/gateway/internal/hw/kernelsensor"
	"github.com/openhal/gateway/internal/hw/w1therm"
)

// configs writes each sensor's entry, each under an id of its own.
func (inv *Inventory) configs() {
	taken := map[string]bool{}
	for i, d := range inv.W1 {
		if d.Driver == "" {
			continue
		}
		_, serial, _ := strings.Cut(d.ID, "-")
		id := uniqueID(d.Driver+"-"+serial, "", taken)
		inv.W1[i].Config = fmt.Sprintf("  %s:\n    kind: sensor\n    driver: %s\n    w1Id: %s\n", id, d.Driver, d.ID)
	}
	for _, group := range []struct {
		iface string
		devs  []Kernel
	}{{"iio", inv.IIO}, {"hwmon", inv.Hwmon}} {
		for i, k := range group.devs {
			if k.Problem != "" || len(k.Quantities) == 0 {
				continue
			}
			base := idOf(k.Name)
			if k.Index > 0 {
				base += "-" + strconv.Itoa(k.Index)
			}
			var names []string
			for _, q := range k.Quantities {
				names = append(names, q.Name)
			}
			text := fmt.Sprintf("  %s:\n    kind: sensor\n    driver: %s\n    name: %s\n", uniqueID(base, group.iface, taken), group.iface, scalar(k.Name))
			if k.Index > 0 {
				text += fmt.Sprintf("    index: %d\n", k.Index)
			}
			group.devs[i].Config = text + "    quantities: [" + strings.Join(names, ", ") + "]\n"
		}
	}
}

// idOf makes a device id of a kernel name: lower case, each run of what
// an id may not hold turned into one '-'.
func idOf(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		case !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	id := strings.Trim(b.String(), "._-")
	if id == "" {
		id = "sensor"
	}
	return id[:min(len(id), 56)]
}

// uniqueID is base, or base with the interface's name, or a number, when
// another entry has it.
func uniqueID(base, iface string, taken map[string]bool) string {
	id := base
	if taken[id] && iface != "" {
		id = base + "-" + iface
	}
	for n := 2; taken[id]; n++ {
		id = base + "-" + strconv.Itoa(n)
	}
	taken[id] = true
	return id
}

var plainWord = regexp.MustCompile(`^[a-z_][a-z0-9_.-]*$`)

// scalar writes s as a YAML string: bare when it is a word YAML reads as
// that string, else double-quoted (Go's escapes are YAML's): a bare
// true, yes, 123 or "a: b" would read as something else. (The yaml
// package's encoder would do it at the cost of 100 KiB of binary.)
func scalar(s string) string {
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "y", "n", "null":
		return strconv.Quote(s)
	}
	if plainWord.MatchString(s) {
		return s
	}
	return strconv.Quote(s)
}

// Configs are the entries of the sensors found, in the order listed.
func (inv *Inventory) Configs() []string {
	var out []string
	for _, d := range inv.W1 {
		if d.Config != "" {
			out = append(out, d.Config)
		}
	}
	for _, devs := range [][]Kernel{inv.IIO, inv.Hwmon} {
		for _, k := range devs {
			if k.Config != "" {
				out = append(out, k.Config)
			}
		}
	}
	return out
}

// WriteText writes the inventory for a person: a section a bus, what to
// put in config.txt where the kernel has made nothing, and the entries
// of the sensors found. sys is the sysfs root it was scanned from.
func (inv *Inventory) WriteText(w io.Writer, sys string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	p := func(format string, a ...any) { fmt.Fprintf(tw, format, a...) }
	p("1-Wire: %s", w1therm.Under(sys))
	switch {
	case len(inv.W1Masters) == 0:
		p("\n  no 1-Wire bus (dtoverlay=w1-gpio in config.txt: the data line on GPIO4, or gpiopin=N)\n")
	case len(inv.W1) == 0:
		p(" (%s)\n  no device on it (check the wiring and the 4.7 kΩ pull-up to 3.3 V)\n", strings.Join(inv.W1Masters, ", "))
	default:
		p(" (%s)\n  ID\tFAMILY\tCHIP\tDRIVER\n", strings.Join(inv.W1Masters, ", "))
		for _, d := range inv.W1 {
			p("  %s\t%s\t%s\t%s\n", d.ID, d.Family, dash(d.Chip), dash(d.Driver))
		}
	}
	inv.kernelText(p, "IIO", kernelsensor.IIO.Under(sys), inv.IIO)
	inv.kernelText(p, "hwmon", kernelsensor.Hwmon.Under(sys), inv.Hwmon)
	p("\nI2C buses: %s\n", filepath.Join(sys, "bus", "i2c", "devices"))
	if len(inv.I2C) == 0 {
		p("  none (dtparam=i2c_arm=on in config.txt)\n")
	}
	for _, b := range inv.I2C {
		dev := b.Device
		if dev == "" {
			dev = fmt.Sprintf("i2c-%d (no /dev/i2c-%d: modprobe i2c-dev)", b.Number, b.Number)
		}
		p("  %s\t%s\t%s\n", dev, dash(b.Name), dash(b.Controller))
	}
	p("\nSPI device files: %s\n", filepath.Join(sys, "class", "spidev"))
	if len(inv.SPI) == 0 {
		p("  none (dtparam=spi=on in config.txt)\n")
	}
	for _, s := range inv.SPI {
		p("  %s\n", s)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	configs := inv.Configs()
	if len(configs) == 0 {
		_, err := fmt.Fprintln(w, "\nNo sensor found that the gateway reads.")
		return err
	}
	_, err := fmt.Fprintf(w, "\nThe sensors found, to paste under devices: (the ids are yours to choose):\n%s", strings.Join(configs, ""))
	return err
}

func (inv *Inventory) kernelText(p func(string, ...any), what, dir string, devs []Kernel) {
	p("\n%s: %s\n", what, dir)
	if len(devs) == 0 {
		p("  none\n")
		return
	}
	p("  NAME\tINDEX\tDEVICE\tQUANTITIES\n")
	for _, k := range devs {
		what := k.Problem
		if what == "" {
			var qs []string
			for _, q := range k.Quantities {
				qs = append(qs, q.Name+" "+q.Unit)
			}
			what = strings.Join(qs, ", ")
		}
		p("  %s\t%d\t%s\t%s\n", k.Name, k.Index, k.Dir, what)
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
