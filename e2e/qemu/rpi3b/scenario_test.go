package rpi3b_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/openhal/gateway/e2e/qemu/qemutest"
	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/internal/board/profile"
	"github.com/openhal/gateway/openhal"
)

// scenario holds what the checks drive: the guest (command channel, QMP,
// QEMU's log) and the HAL connection.
type scenario struct {
	ctx      context.Context
	g        *qemutest.Guest
	qmp      *qemutest.QMP
	traceLog string
	conn     *halclient.Conn
	notes    *recorder
	logf     func(format string, args ...any)
}

// pi3bLineNames are the gpio-line-names of the GPIO controller in the
// mainline Raspberry Pi 3 Model B device tree (bcm2837-rpi-3-b.dts), the
// one Debian's kernel package ships; line 28 has no name.
var pi3bLineNames = [54]string{
	"ID_SDA", "ID_SCL", "SDA1", "SCL1", "GPIO_GCLK", "GPIO5", "GPIO6", "SPI_CE1_N", "SPI_CE0_N", "SPI_MISO",
	"SPI_MOSI", "SPI_SCLK", "GPIO12", "GPIO13", "TXD1", "RXD1", "GPIO16", "GPIO17", "GPIO18", "GPIO19",
	"GPIO20", "GPIO21", "GPIO22", "GPIO23", "GPIO24", "GPIO25", "GPIO26", "GPIO27", "", "LAN_RUN_BOOT",
	"CTS0", "RTS0", "TXD0", "RXD0", "SD1_CLK", "SD1_CMD", "SD1_DATA0", "SD1_DATA1", "SD1_DATA2", "SD1_DATA3",
	"PWM0_OUT", "PWM1_OUT", "ETH_CLK", "WIFI_CLK", "SDA0", "SCL0", "SMPS_SCL", "SMPS_SDA", "SD_CLK_R", "SD_CMD_R",
	"SD_DATA0_R", "SD_DATA1_R", "SD_DATA2_R", "SD_DATA3_R",
}

func rpi3b() *profile.Profile {
	p, ok := profile.ByName("rpi3b")
	if !ok {
		panic("no rpi3b profile")
	}
	return p
}

// shell runs command in the guest through the command channel.
func (s *scenario) shell(command string) (string, error) {
	ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
	defer cancel()
	return s.g.Shell(ctx, command)
}

// hmp runs a human monitor command through QMP and returns its text.
func (s *scenario) hmp(command string) (string, error) {
	ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
	defer cancel()
	raw, err := s.qmp.Run(ctx, "human-monitor-command", map[string]string{"command-line": command})
	if err != nil {
		return "", fmt.Errorf("HMP %q: %w", command, err)
	}
	var out string
	if err := json.Unmarshal(raw, &out); err != nil {
		return "", fmt.Errorf("HMP %q: answer %s: %w", command, raw, err)
	}
	return out, nil
}

// reg reads a 32-bit register of the GPIO model at physical address addr
// from the host (HMP xp reads MMIO through the device's read handler).
func (s *scenario) reg(addr uint32) (uint32, error) {
	out, err := s.hmp(fmt.Sprintf("xp /1xw %#x", addr))
	if err != nil {
		return 0, err
	}
	return parseXP(out, addr)
}

// level is line's bit in the model's GPLEV0 (lines 0 to 31).
func (s *scenario) level(line int) (bool, error) {
	v, err := s.reg(gpioBase + regGPLEV0)
	return v&(1<<line) != 0, err
}

// trace turns QEMU's memory_region_ops_write trace event on or off: every
// MMIO write, written to QEMU's log (-D).
func (s *scenario) trace(on bool) error {
	ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
	defer cancel()
	_, err := s.qmp.Run(ctx, "trace-event-set-state", map[string]any{"name": "memory_region_ops_write", "enable": on})
	if err != nil {
		return fmt.Errorf("QMP trace-event-set-state %v: %w", on, err)
	}
	return nil
}

// boot waits for init, then matches the guest's device-tree model to a
// profile as the gateway's board: auto does.
func (s *scenario) boot() error {
	ctx, cancel := context.WithTimeout(s.ctx, 4*time.Minute)
	defer cancel()
	if err := s.g.WaitConsole(ctx, "init: ready", "Kernel panic", "init: insmod"); err != nil {
		return fmt.Errorf("boot: %w", err)
	}
	model, err := s.shell("tr -d '\\0' </proc/device-tree/model")
	if err != nil {
		return err
	}
	p, ok := profile.MatchModel(model)
	if !ok || p.Name != "rpi3b" {
		return fmt.Errorf("model %q: matches no rpi3b profile (got %v)", model, p)
	}
	s.logf("device-tree model %q -> profile %s", model, p.Name)
	return nil
}

// gpioChip is gpioinfo's JSON (gpioinfo/info.go).
type gpioChip struct {
	Path, Name, Label string
	Lines             []gpioLine
}

type gpioLine struct {
	Offset                       int
	Name, Consumer               string
	Used, ActiveLow              bool
	Direction, Bias, Edge, Drive string
}

// headerChip runs gpioinfo in the guest and returns the chip labelled as
// the profile's header chip.
func (s *scenario) headerChip() (gpioChip, error) {
	out, err := s.shell("gpioinfo")
	if err != nil {
		return gpioChip{}, err
	}
	var chips []gpioChip
	if err := json.Unmarshal([]byte(out), &chips); err != nil {
		return gpioChip{}, fmt.Errorf("gpioinfo: %w: %q", err, out)
	}
	var labels []string
	for _, c := range chips {
		if c.Label == rpi3b().GPIOChipLabel {
			return c, nil
		}
		labels = append(labels, c.Name+" "+c.Label)
	}
	return gpioChip{}, fmt.Errorf("no chip labelled %s (chips: %v)", rpi3b().GPIOChipLabel, labels)
}

// lineNames compares the header chip with the device tree and the
// profile: line count, every line's name, and each name of lines 0..27
// resolving (ResolvePin) to its own offset, the ID EEPROM's refused.
func (s *scenario) lineNames() error {
	p := rpi3b()
	c, err := s.headerChip()
	if err != nil {
		return err
	}
	if len(c.Lines) != p.GPIOChipLines {
		return fmt.Errorf("%s (%s) has %d lines, the profile says %d", c.Name, c.Label, len(c.Lines), p.GPIOChipLines)
	}
	var errs []error
	for i, l := range c.Lines {
		if l.Name != pi3bLineNames[i] {
			errs = append(errs, fmt.Errorf("line %d is named %q, the device tree says %q", i, l.Name, pi3bLineNames[i]))
		}
	}
	for n := 0; n <= 27; n++ {
		name := c.Lines[n].Name
		ref, err := p.ResolvePin(name)
		switch {
		case n <= 1:
			if err == nil || !strings.Contains(err.Error(), "HAT ID EEPROM") {
				errs = append(errs, fmt.Errorf("%s (line %d): resolves to %v, %v; want refused as the ID EEPROM's", name, n, ref, err))
			}
		case err != nil:
			errs = append(errs, fmt.Errorf("the kernel's name %s (line %d) does not resolve: %v", name, n, err))
		case ref.Chip != c.Label || ref.Offset != n:
			errs = append(errs, fmt.Errorf("the kernel's name %s (line %d) resolves to %v", name, n, ref))
		}
	}
	s.logf("%s: label %s, %d lines", c.Name, c.Label, len(c.Lines))
	return errors.Join(errs...)
}

// controllers checks the profile's I2C and PWM controllers against the
// guest's platform devices, and that the header's serial pins are muxed
// to the mini UART, as the profile's serial0 says of a Pi 3B.
func (s *scenario) controllers() error {
	p := rpi3b()
	out, err := s.shell("ls /sys/bus/platform/devices")
	if err != nil {
		return err
	}
	devs := strings.Fields(out)
	var want []string
	for _, b := range p.I2C {
		if b.Controller != "" {
			want = append(want, b.Controller)
		}
	}
	for _, w := range p.PWM {
		want = append(want, w.Controller)
	}
	want = slices.Compact(want)
	var errs []error
	for _, w := range want {
		if !slices.Contains(devs, w) {
			errs = append(errs, fmt.Errorf("no platform device %s in the guest", w))
		}
	}
	u := p.UART[0]
	for _, line := range []int{u.TX, u.RX} {
		reg, err := s.reg(fselAddr(line))
		if err != nil {
			return err
		}
		if f := fselFunc(reg, line); f != "alt5" {
			errs = append(errs, fmt.Errorf("GPIO%d (%s) is in %s, not alt5 (the mini UART)", line, u.Name, f))
		}
	}
	// The mainline device tree's alias serial1 names the mini UART ttyS1
	// (Raspberry Pi OS's kernel calls it ttyS0), as the profile's note says.
	tty, err := s.shell("ls /sys/bus/platform/devices/3f215040.serial/tty 2>&1")
	if tty = strings.TrimSpace(tty); err != nil || tty != "ttyS1" || !strings.Contains(u.Note, "/dev/ttyS1") {
		errs = append(errs, fmt.Errorf("the mini UART 3f215040.serial is %q (%v); want ttyS1, which the profile's note names", tty, err))
	}
	s.logf("platform devices %v present; the mini UART 3f215040.serial is %s", want, tty)
	return errors.Join(errs...)
}

// lineInfo checks what the kernel says of the lines the gateway holds.
func (s *scenario) lineInfo() error {
	c, err := s.headerChip()
	if err != nil {
		return err
	}
	var errs []error
	held := func(line int) (gpioLine, bool) {
		l := c.Lines[line]
		if !l.Used || !strings.HasPrefix(l.Consumer, "gateway") {
			errs = append(errs, fmt.Errorf("line %d (%s): used %v by %q, want the gateway's", line, l.Name, l.Used, l.Consumer))
			return l, false
		}
		return l, true
	}
	for _, o := range outputs {
		if l, ok := held(o.line); ok && l.Direction != "output" {
			errs = append(errs, fmt.Errorf("%s: line %d is %s", o.id, o.line, l.Direction))
		}
	}
	for _, in := range inputs {
		l, ok := held(in.line)
		if ok && (l.Direction != "input" || l.Bias != in.pull || l.Edge != in.edge) {
			errs = append(errs, fmt.Errorf("%s: line %d is %s, bias %q, edge %q; want input, %s, %s",
				in.id, in.line, l.Direction, l.Bias, l.Edge, in.pull, in.edge))
		}
	}
	return errors.Join(errs...)
}

// debugLevels parses /sys/kernel/debug/gpio's requested lines:
// " gpio-475 (GPIO17              |gateway@133         ) out lo".
var debugLine = regexp.MustCompile(`gpio-\d+ \((\S*)\s*\|[^)]*\) (in|out)\s+(hi|lo)`)

// debugState returns the kernel's view (gpiolib's debugfs, through the
// driver's get, that is GPLEV) of the named line: "out hi".
func (s *scenario) debugState(name string) (string, error) {
	out, err := s.shell("cat /sys/kernel/debug/gpio")
	if err != nil {
		return "", err
	}
	for _, m := range debugLine.FindAllStringSubmatch(out, -1) {
		if m[1] == name {
			return m[2] + " " + m[3], nil
		}
	}
	return "", fmt.Errorf("line %s is not requested in /sys/kernel/debug/gpio:\n%s", name, out)
}

// outputs checks each output's initial level, then writes true and false
// through the Hub and reads the model's function select and level after
// each (the write is applied when the Hub answers), and the kernel's view.
func (s *scenario) outputs() error {
	for _, o := range outputs {
		name := pi3bLineNames[o.line]
		if err := s.expectOutput(o.id, o.line, name, o.invert); err != nil {
			return fmt.Errorf("%s initially (false): %w", o.id, err)
		}
		for _, v := range []bool{true, false} {
			res, err := s.conn.Write(s.ctx, o.id, v, "qemu raspi3b test")
			if err != nil {
				return fmt.Errorf("write %s %v: %w", o.id, v, err)
			}
			if res.Status != openhal.StatusApplied {
				return fmt.Errorf("write %s %v: status %q", o.id, v, res.Status)
			}
			if err := s.expectOutput(o.id, o.line, name, v != o.invert); err != nil {
				return fmt.Errorf("after writing %s %v: %w", o.id, v, err)
			}
		}
	}
	return nil
}

// expectOutput checks that line is an output at level high in the model
// and in the kernel's view.
func (s *scenario) expectOutput(id string, line int, name string, high bool) error {
	fsel, err := s.reg(fselAddr(line))
	if err != nil {
		return err
	}
	if f := fselFunc(fsel, line); f != "output" {
		return fmt.Errorf("GPFSEL%d %#08x: line %d is %s, want output", line/10, fsel, line, f)
	}
	lev, err := s.level(line)
	if err != nil {
		return err
	}
	if lev != high {
		return fmt.Errorf("GPLEV0 bit %d is %v, want %v", line, lev, high)
	}
	want := map[bool]string{true: "out hi", false: "out lo"}[high]
	if got, err := s.debugState(name); err != nil || got != want {
		return fmt.Errorf("the kernel shows %s as %q (%v), want %q", name, got, err, want)
	}
	return nil
}

// bias reads the GPIO block's writes QEMU traced while the gateway
// started: pinctrl-bcm2835 sets a pull by writing GPPUD and strobing the
// line's bit in GPPUDCLK0. The inputs' pulls must be latched so; the
// outputs (no bias) must have none.
func (s *scenario) bias() error {
	f, err := os.Open(s.traceLog)
	if err != nil {
		return fmt.Errorf("QEMU's log: %w", err)
	}
	defer f.Close()
	ws, err := gpioWrites(f)
	if err != nil {
		return err
	}
	pulls := latchedPulls(ws)
	size := int64(0)
	if st, err := f.Stat(); err == nil {
		size = st.Size()
	}
	s.logf("QEMU's log: %d bytes; %d writes to the GPIO block traced while the gateway started; pulls latched: %v", size, len(ws), pulls)
	var errs []error
	for _, in := range inputs {
		if want := strings.TrimPrefix(in.pull, "pull-"); pulls[in.line] != want {
			errs = append(errs, fmt.Errorf("%s: line %d's pull latched %q, want %q", in.id, in.line, pulls[in.line], want))
		}
	}
	for _, o := range outputs {
		if p, ok := pulls[o.line]; ok {
			errs = append(errs, fmt.Errorf("%s: output line %d got a pull (%s)", o.id, o.line, p))
		}
	}
	return errors.Join(errs...)
}

// read reads a device afresh through the Hub.
func (s *scenario) read(id string) (bool, error) {
	v, err := s.conn.Read(s.ctx, id, 0)
	if err != nil {
		return false, fmt.Errorf("read %s: %w", id, err)
	}
	b, ok := v.Value.(bool)
	if !ok {
		return false, fmt.Errorf("read %s: value %v is not a boolean", id, v.Value)
	}
	return b, nil
}

// inputLevels: QEMU's model keeps no pulls (GPPUD is write-only and
// ignored), so a pulled-up input that nothing drives reads low, where a
// real Pi reads it high; hal/read must say what GPLEV says. The model's
// GPSET0/GPCLR0 change GPLEV for a line in any function (on hardware
// only for an output), so the guest's devmem sets each input's level
// there, and hal/read must follow.
func (s *scenario) inputLevels() error {
	for _, in := range inputs {
		lev, err := s.level(in.line)
		if err != nil {
			return err
		}
		if lev {
			return fmt.Errorf("%s: GPLEV0 bit %d is set before anything set it (the model keeps no pulls)", in.id, in.line)
		}
		if got, err := s.read(in.id); err != nil || got != lev {
			return fmt.Errorf("%s with %s: hal/read %v (%v), the model's level %v", in.id, in.pull, got, err, lev)
		}
		for _, c := range []struct {
			reg  uint32
			want bool
		}{{regGPSET0, true}, {regGPCLR0, false}} {
			if err := s.devmem(c.reg, 1<<in.line); err != nil {
				return err
			}
			if lev, err := s.level(in.line); err != nil || lev != c.want {
				return fmt.Errorf("%s: after writing %#x to %#x, GPLEV0 bit %d is %v (%v)", in.id, 1<<in.line, gpioBase+c.reg, in.line, lev, err)
			}
			if got, err := s.read(in.id); err != nil || got != c.want {
				return fmt.Errorf("%s: the model's level is %v, hal/read %v (%v)", in.id, c.want, got, err)
			}
		}
	}
	return nil
}

// devmem writes value to the GPIO block's register at off from the guest.
func (s *scenario) devmem(off, value uint32) error {
	cmd := fmt.Sprintf("devmem %#x 32 %#x", gpioBase+off, value)
	out, err := s.shell(cmd)
	if err != nil || strings.TrimSpace(out) != "" {
		return fmt.Errorf("%s in the guest: %q %v", cmd, out, err)
	}
	return nil
}

// edges: the kernel learns of an input's edge from the GPIO block's
// interrupt. If the guest counted any for the inputs' lines while
// inputLevels changed their levels, the gateway must have published the
// rising level of rpi.button; QEMU 7.2's model implements no edge
// detection (GPEDS/GPREN/GPFEN read 0, writes ignored) and raises no
// interrupt, which the check then reports as a SKIP with the count.
func (s *scenario) edges(r *qemutest.Report) {
	const name = "edges: an input's level change -> hal/value"
	out, err := s.shell("grep pinctrl-bcm2835 /proc/interrupts")
	if err != nil {
		r.Check(name, func() error { return err })
		return
	}
	total := 0
	for _, in := range inputs {
		total += irqCount(out, in.line)
	}
	if total == 0 {
		r.Skip(name, fmt.Errorf("QEMU's BCM2835 GPIO model raises no interrupt (no edge detection): "+
			"the inputs' lines counted 0 interrupts while their levels changed; /proc/interrupts:\n%s", out))
		return
	}
	r.Check(name, func() error {
		return s.notes.waitValue(s.ctx, "rpi.button", true, 30*time.Second)
	})
}

// irqCount sums the per-CPU counts of the pinctrl-bcm2835 interrupt of
// line in /proc/interrupts' lines:
// "112:   0   0   0   0  pinctrl-bcm2835  27 Edge      gateway@134".
func irqCount(procInterrupts string, line int) int {
	total := 0
	for _, l := range strings.Split(procInterrupts, "\n") {
		f := strings.Fields(l)
		i := slices.Index(f, "pinctrl-bcm2835")
		if i < 1 || i+1 >= len(f) || f[i+1] != strconv.Itoa(line) {
			continue
		}
		for _, n := range f[1:i] { // one count per CPU
			c, _ := strconv.Atoi(n)
			total += c
		}
	}
	return total
}
