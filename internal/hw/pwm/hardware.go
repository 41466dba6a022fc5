package pwm

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openhal/gateway/device"
)

// exportWait bounds how long NewHardware waits, after writing export, for
// the kernel to create pwmN/ and for udev to open its files to the
// gateway's group. Both usually take a few milliseconds; a Pi busy booting
// can take hundreds.
const exportWait = 2 * time.Second

// Hardware is a pwm device on a kernel PWM channel, driven through sysfs
// (Documentation/ABI/testing/sysfs-class-pwm): the PWM block keeps the
// waveform, so it costs no CPU and has no jitter.
//
// The frequency is fixed when the channel is opened; a write changes the
// duty cycle only, by writing duty_cycle.
type Hardware struct {
	desc    device.Descriptor
	chip    string
	channel int
	chipDir string // <root>/class/pwm/<chip>
	dir     string // chipDir/pwm<channel>
	period  time.Duration
	fs      sysfs

	mu     sync.Mutex
	closed bool
}

var _ device.Writer = (*Hardware)(nil)

// sysfs is how a Hardware writes attribute files. Tests replace write to
// play the kernel (creating pwmN/ on export, refusing duty > period) and
// to fail writes as an unprivileged user would see them fail.
type sysfs struct {
	write func(name, data string) error
	wait  time.Duration // bound on the wait after export
}

// NewHardware exports channel of chip (for example "pwmchip0", found
// with profile.FindByController) under sysfsRoot (the sysfs mount point,
// "/sys"; tests pass a directory laid out the same way), sets its period
// to 1/freqHz rounded to the nanosecond, its duty cycle to initial %, and
// enables it, so that the output leaves its reset state for a known one
// before any client can write.
//
// A channel that is already exported (by a previous run that did not
// close it) is taken over as it is. The duty cycle and the period are
// written in the order the kernel accepts whatever they were before: it
// refuses a duty cycle longer than the period at every step.
func NewHardware(desc device.Descriptor, sysfsRoot, chip string, channel int, freqHz, initial float64) (*Hardware, error) {
	return newHardware(desc, sysfsRoot, chip, channel, freqHz, initial, sysfs{write: writeFile, wait: exportWait})
}

func newHardware(desc device.Descriptor, root, chip string, channel int, freqHz, initial float64, fsys sysfs) (*Hardware, error) {
	h := &Hardware{desc: describe(desc), chip: chip, channel: channel, fs: fsys}
	if chip == "" || strings.ContainsAny(chip, `/\`) || chip == "." || chip == ".." || channel < 0 {
		return nil, h.errorf("want a pwmchip name and a channel from 0")
	}
	h.chipDir = filepath.Join(root, "class", "pwm", chip)
	h.dir = filepath.Join(h.chipDir, "pwm"+strconv.Itoa(channel))
	var err error
	if h.period, err = periodOf(freqHz); err != nil {
		return nil, h.errorf("%w", err)
	}
	if _, err := dutyValue(initial); err != nil {
		return nil, h.errorf("initial value: %w", err)
	}
	if err := h.open(); err != nil {
		return nil, err
	}
	if err := h.configure(highTime(h.period, initial)); err != nil {
		return nil, err
	}
	return h, nil
}

// errorf prefixes an error with the device, chip and channel.
func (h *Hardware) errorf(format string, args ...any) error {
	return fmt.Errorf("pwm %s: %s channel %d: %w", h.desc.ID, h.chip, h.channel, fmt.Errorf(format, args...))
}

// open checks the chip and exports the channel unless it already is.
func (h *Hardware) open() error {
	if _, err := os.Stat(h.chipDir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return h.errorf("no such chip: %w", notExist(fmt.Sprintf("%s does not exist (is the PWM overlay in config.txt? ls %s lists the chips there are)",
				h.chipDir, filepath.Dir(h.chipDir))))
		}
		return h.errorf("%w", err)
	}
	n, err := readInt(filepath.Join(h.chipDir, "npwm"))
	if err != nil {
		return h.errorf("read npwm: %w", err)
	}
	if int64(h.channel) >= n {
		return h.errorf("no such channel: the chip has %d", n)
	}
	if _, err := os.Stat(h.dir); err == nil {
		return nil
	}
	if err := h.fs.write(filepath.Join(h.chipDir, "export"), strconv.Itoa(h.channel)); err != nil {
		return h.errorf("export: %w", err)
	}
	return nil
}

// configure sets the period and a duty cycle of duty, and enables the
// channel. Right after an
// export the kernel may not have made pwmN/ yet, and udev may not yet
// have given its files to the gateway's group: configure retries what
// fails for those reasons until fs.wait has passed, sleeping 1 ms, 2 ms,
// 4 ms... (at most 100 ms) between tries. Retrying is safe because it
// reads the state afresh each time.
func (h *Hardware) configure(duty time.Duration) error {
	deadline := time.Now().Add(h.fs.wait)
	for pause := time.Millisecond; ; pause = min(2*pause, 100*time.Millisecond) {
		err := h.setPeriod(duty)
		if err == nil {
			err = h.set("enable", "1")
		}
		if err == nil || !(errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission)) {
			return err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("%w (after waiting %v for the kernel and udev)", err, h.fs.wait)
		}
		time.Sleep(min(pause, left))
	}
}

// setPeriod writes period and duty_cycle in the order that keeps the
// duty cycle within the period at every step: when the period shrinks,
// the duty cycle goes first (it fits the old period, being no longer than
// the new one); otherwise the period goes first.
func (h *Hardware) setPeriod(duty time.Duration) error {
	old, err := readInt(filepath.Join(h.dir, "period"))
	if err != nil {
		return h.errorf("read period: %w", err)
	}
	steps := []struct{ file, value string }{
		{"period", strconv.FormatInt(int64(h.period), 10)},
		{"duty_cycle", strconv.FormatInt(int64(duty), 10)},
	}
	if int64(h.period) < old {
		steps[0], steps[1] = steps[1], steps[0]
	}
	for _, s := range steps {
		if err := h.set(s.file, s.value); err != nil {
			return err
		}
	}
	return nil
}

// set writes one attribute of the channel.
func (h *Hardware) set(file, value string) error {
	if err := h.fs.write(filepath.Join(h.dir, file), value); err != nil {
		return h.errorf("set %s to %s: %w", file, value, err)
	}
	return nil
}

// Descriptor implements device.Device.
func (h *Hardware) Descriptor() device.Descriptor { return h.desc }

// Period is the channel's period: 1/frequency, rounded to the nanosecond.
func (h *Hardware) Period() time.Duration { return h.period }

// Write sets the duty cycle to req.Value, a number from 0 to 100 (%):
// duty_cycle becomes period·value/100 ns, rounded. A sysfs write does not
// block on anything slow, so ctx is only checked before it.
func (h *Hardware) Write(ctx context.Context, req device.WriteRequest) (device.WriteResult, error) {
	if err := ctx.Err(); err != nil {
		return device.WriteResult{}, err
	}
	v, err := dutyValue(req.Value)
	if err != nil {
		return device.WriteResult{}, h.errorf("%w", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return device.WriteResult{}, h.errorf("closed")
	}
	return device.WriteResult{}, h.set("duty_cycle", strconv.FormatInt(int64(highTime(h.period, v)), 10))
}

// Close disables the channel, which leaves the line at its idle level
// (low), and unexports it. It tries both and returns both errors; a
// second Close does nothing.
func (h *Hardware) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	h.closed = true
	err := h.set("enable", "0")
	if uerr := h.fs.write(filepath.Join(h.chipDir, "unexport"), strconv.Itoa(h.channel)); uerr != nil {
		err = errors.Join(err, h.errorf("unexport: %w", uerr))
	}
	return err
}

// writeFile writes one sysfs attribute in one write(2), which is how the
// kernel takes it. It never creates the file: an attribute that is not
// there is an error worth seeing.
func writeFile(name, data string) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// readInt reads a sysfs attribute holding one integer.
func readInt(name string) (int64, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parse %s: %w", name, err)
	}
	return n, nil
}

// notExist is an error that says in its own words that something does
// not exist, and matches fs.ErrNotExist.
type notExist string

func (e notExist) Error() string        { return string(e) }
func (e notExist) Is(target error) bool { return target == fs.ErrNotExist }
