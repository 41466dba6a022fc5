package pwm

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
)

// fakeKernel plays the kernel's PWM sysfs in a temporary directory laid
// out as /sys: class/pwm/pwmchip0 with npwm, export and unexport. It is
// the write function of the Hardware under test: it logs every write
// (as "file=value", the file relative to the chip), fails the writes it
// is told to, and otherwise does what the kernel does: export creates
// pwmN/ (from another goroutine, after the write returned, as the kernel
// may), unexport removes it, and period and duty_cycle refuse a duty
// cycle longer than the period with EINVAL.
type fakeKernel struct {
	t       *testing.T
	root    string // the sysfs root
	chipDir string

	mu       sync.Mutex
	log      []string
	fail     map[string]error // a write to this file fails with it
	denyOnce map[string]int   // a write to this file fails with EACCES this many times (udev not done yet)
	noExport bool             // export is accepted and nothing appears
	async    sync.WaitGroup
}

func newFakeKernel(t *testing.T, npwm int) *fakeKernel {
	t.Helper()
	k := &fakeKernel{t: t, root: t.TempDir(), fail: map[string]error{}, denyOnce: map[string]int{}}
	k.chipDir = filepath.Join(k.root, "class", "pwm", "pwmchip0")
	k.mkfile("npwm", strconv.Itoa(npwm))
	k.mkfile("export", "")
	k.mkfile("unexport", "")
	t.Cleanup(k.async.Wait)
	return k
}

// mkfile creates a file under the chip, with its directories.
func (k *fakeKernel) mkfile(rel, content string) {
	k.t.Helper()
	name := filepath.Join(k.chipDir, rel)
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		k.t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		k.t.Fatal(err)
	}
}

// exported makes channel n exported with the given state, as a previous
// run may have left it. pwmN/ appears at once with its files filled, as
// the kernel makes it: it is built aside and renamed into place.
func (k *fakeKernel) exported(n int, period, duty int64, enable int) {
	k.t.Helper()
	dir := filepath.Join(k.chipDir, "pwm"+strconv.Itoa(n))
	tmp, err := os.MkdirTemp(k.chipDir, ".export")
	if err != nil {
		k.t.Error(err)
		return
	}
	for file, v := range map[string]int64{"period": period, "duty_cycle": duty, "enable": int64(enable)} {
		if err := os.WriteFile(filepath.Join(tmp, file), []byte(strconv.FormatInt(v, 10)), 0o644); err != nil {
			k.t.Error(err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		k.t.Error(err)
	}
}

func (k *fakeKernel) sysfs(wait time.Duration) sysfs { return sysfs{write: k.write, wait: wait} }

func (k *fakeKernel) write(name, data string) error {
	rel, err := filepath.Rel(k.chipDir, name)
	if err != nil || strings.HasPrefix(rel, "..") {
		k.t.Errorf("write %s: outside the chip", name)
		return fs.ErrInvalid
	}
	k.mu.Lock()
	k.log = append(k.log, rel+"="+data)
	ferr := k.fail[rel]
	if k.denyOnce[rel] > 0 {
		k.denyOnce[rel]--
		ferr = fs.ErrPermission
	}
	k.mu.Unlock()
	if ferr != nil {
		return &fs.PathError{Op: "open", Path: name, Err: ferr}
	}
	if err := k.check(rel, data); err != nil {
		return &fs.PathError{Op: "write", Path: name, Err: err}
	}
	if err := writeFile(name, data); err != nil {
		return err
	}
	switch rel {
	case "export":
		if !k.noExport {
			n, _ := strconv.Atoi(data)
			k.async.Go(func() { k.exported(n, 0, 0, 0) })
		}
	case "unexport":
		return os.RemoveAll(filepath.Join(k.chipDir, "pwm"+data))
	}
	return nil
}

// check refuses what the kernel refuses: a duty cycle above the period.
func (k *fakeKernel) check(rel, data string) error {
	dir, file := filepath.Split(rel)
	if file != "period" && file != "duty_cycle" {
		return nil
	}
	v, err := strconv.ParseInt(data, 10, 64)
	if err != nil || v < 0 {
		return syscall.EINVAL
	}
	period, perr := readInt(filepath.Join(k.chipDir, dir, "period"))
	duty, derr := readInt(filepath.Join(k.chipDir, dir, "duty_cycle"))
	if perr != nil || derr != nil {
		return syscall.ENOENT
	}
	if (file == "period" && v < duty) || (file == "duty_cycle" && v > period) {
		return syscall.EINVAL
	}
	return nil
}

func (k *fakeKernel) writes() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.log)
}

func (k *fakeKernel) resetLog() {
	k.mu.Lock()
	k.log = nil
	k.mu.Unlock()
}

// attr reads an attribute of the chip.
func (k *fakeKernel) attr(rel string) string {
	k.t.Helper()
	b, err := os.ReadFile(filepath.Join(k.chipDir, rel))
	if err != nil {
		k.t.Fatal(err)
	}
	return string(b)
}

func pwmDesc() device.Descriptor {
	return device.Descriptor{ID: "bench.fan", Access: device.AccessReadWrite, Risk: device.RiskLow}
}

func write(t *testing.T, w device.Writer, v any) error {
	t.Helper()
	_, err := w.Write(context.Background(), device.WriteRequest{Value: v})
	return err
}

func TestHardwareLifecycle(t *testing.T) {
	k := newFakeKernel(t, 2)
	h, err := newHardware(pwmDesc(), k.root, "pwmchip0", 1, 1000, 25, k.sysfs(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if d := h.Descriptor(); d.Kind != device.KindPWM || d.Schema.Unit != "%" || d.ID != "bench.fan" {
		t.Errorf("Descriptor() = %+v", d)
	}
	want := []string{"export=1", "pwm1/period=1000000", "pwm1/duty_cycle=250000", "pwm1/enable=1"}
	if got := k.writes(); !slices.Equal(got, want) {
		t.Errorf("opening wrote %q, want %q", got, want)
	}
	k.resetLog()
	for _, v := range []float64{50, 100, 0, 33.3333} {
		if err := write(t, h, v); err != nil {
			t.Fatal(err)
		}
	}
	want = []string{"pwm1/duty_cycle=500000", "pwm1/duty_cycle=1000000", "pwm1/duty_cycle=0", "pwm1/duty_cycle=333333"}
	if got := k.writes(); !slices.Equal(got, want) {
		t.Errorf("writes wrote %q, want %q", got, want)
	}
	k.resetLog()
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	want = []string{"pwm1/enable=0", "unexport=1"}
	if got := k.writes(); !slices.Equal(got, want) {
		t.Errorf("Close wrote %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(k.chipDir, "pwm1")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("pwm1/ after Close: %v, want it gone", err)
	}
	if err := write(t, h, 50.0); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Write after Close = %v, want an error saying closed", err)
	}
}

// A channel left exported is taken over, and the period and duty cycle
// are written in the order the kernel (here fakeKernel.check) accepts.
func TestHardwareOrder(t *testing.T) {
	tests := []struct {
		name       string
		period     int64 // as left
		duty       int64
		hz, value  float64
		want       []string
		period2    string
		dutyAfter  string
		enableWant string
	}{
		{"raising the period", 1000000, 900000, 50, 80,
			[]string{"pwm0/period=20000000", "pwm0/duty_cycle=16000000", "pwm0/enable=1"}, "20000000", "16000000", "1"},
		{"lowering the period", 20000000, 15000000, 1000, 50,
			[]string{"pwm0/duty_cycle=500000", "pwm0/period=1000000", "pwm0/enable=1"}, "1000000", "500000", "1"},
		{"lowering, new duty above the old", 20000000, 0, 1000, 100,
			[]string{"pwm0/duty_cycle=1000000", "pwm0/period=1000000", "pwm0/enable=1"}, "1000000", "1000000", "1"},
		{"same period", 1000000, 1000000, 1000, 10,
			[]string{"pwm0/period=1000000", "pwm0/duty_cycle=100000", "pwm0/enable=1"}, "1000000", "100000", "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newFakeKernel(t, 2)
			k.exported(0, tt.period, tt.duty, 1)
			h, err := newHardware(pwmDesc(), k.root, "pwmchip0", 0, tt.hz, tt.value, k.sysfs(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if got := k.writes(); !slices.Equal(got, tt.want) {
				t.Errorf("wrote %q, want %q", got, tt.want)
			}
			if p, d, e := k.attr("pwm0/period"), k.attr("pwm0/duty_cycle"), k.attr("pwm0/enable"); p != tt.period2 || d != tt.dutyAfter || e != tt.enableWant {
				t.Errorf("period, duty_cycle, enable = %s, %s, %s; want %s, %s, %s", p, d, e, tt.period2, tt.dutyAfter, tt.enableWant)
			}
			if err := h.Close(); err != nil {
				t.Error(err)
			}
		})
	}
}

// The fake kernel itself must refuse the wrong order, or TestHardwareOrder
// proves nothing.
func TestFakeKernelRefusesDutyAbovePeriod(t *testing.T) {
	k := newFakeKernel(t, 1)
	k.exported(0, 20000000, 15000000, 1)
	err := k.write(filepath.Join(k.chipDir, "pwm0", "period"), "1000000")
	if !errors.Is(err, syscall.EINVAL) {
		t.Errorf("period below the duty cycle: %v, want EINVAL", err)
	}
}

// udev gives the files to the gateway's group a moment after the kernel
// makes them: writes refused meanwhile are tried again.
func TestHardwareWaitsForUdev(t *testing.T) {
	k := newFakeKernel(t, 1)
	k.denyOnce["pwm0/period"] = 2
	k.denyOnce["pwm0/enable"] = 1
	h, err := newHardware(pwmDesc(), k.root, "pwmchip0", 0, 50, 0, k.sysfs(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if e := k.attr("pwm0/enable"); e != "1" {
		t.Errorf("enable = %q, want 1", e)
	}
}

func TestHardwareErrors(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(k *fakeKernel)
		chip    string
		channel int
		hz      float64
		initial float64
		is      error    // want errors.Is(err, is), when not nil
		says    []string // and the message to hold these
	}{
		{name: "missing chip", chip: "pwmchip3", hz: 50, is: fs.ErrNotExist,
			says: []string{"pwmchip3 channel 0", "no such chip: ", "/class/pwm/pwmchip3 does not exist (is the PWM overlay in config.txt? ls ", "/class/pwm lists the chips there are)"}},
		{name: "channel beyond npwm", chip: "pwmchip0", channel: 2, hz: 50,
			says: []string{"channel 2", "no such channel: the chip has 2"}},
		{name: "export refused", chip: "pwmchip0", hz: 50, is: syscall.EBUSY,
			setup: func(k *fakeKernel) { k.fail["export"] = syscall.EBUSY },
			says:  []string{"export", "pwmchip0/export"}},
		{name: "export makes nothing", chip: "pwmchip0", hz: 50, is: fs.ErrNotExist,
			setup: func(k *fakeKernel) { k.noExport = true },
			says:  []string{"read period", "pwm0/period", "after waiting 50ms"}},
		{name: "permission denied", chip: "pwmchip0", hz: 50, is: fs.ErrPermission,
			setup: func(k *fakeKernel) { k.fail["pwm0/period"] = fs.ErrPermission },
			says:  []string{"set period to 20000000", "pwm0/period: permission denied", "after waiting 50ms"}},
		{name: "attribute is a directory", chip: "pwmchip0", hz: 50, is: syscall.EISDIR,
			setup: func(k *fakeKernel) {
				k.exported(0, 0, 0, 0)
				if err := os.Remove(filepath.Join(k.chipDir, "pwm0", "enable")); err != nil {
					t.Fatal(err)
				}
				if err := os.Mkdir(filepath.Join(k.chipDir, "pwm0", "enable"), 0o755); err != nil {
					t.Fatal(err)
				}
			},
			says: []string{"set enable to 1", "pwm0/enable"}},
		{name: "frequency zero", chip: "pwmchip0", hz: 0, says: []string{"frequency 0 Hz"}},
		{name: "initial out of range", chip: "pwmchip0", hz: 50, initial: 101, says: []string{"initial value", "101%"}},
		{name: "initial NaN", chip: "pwmchip0", hz: 50, initial: math.NaN(), says: []string{"initial value"}},
		{name: "chip is a path", chip: "../pwmchip0", hz: 50, says: []string{"want a pwmchip name"}},
		{name: "negative channel", chip: "pwmchip0", channel: -1, hz: 50, says: []string{"want a pwmchip name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newFakeKernel(t, 2)
			if tt.setup != nil {
				tt.setup(k)
			}
			_, err := newHardware(pwmDesc(), k.root, tt.chip, tt.channel, tt.hz, tt.initial, k.sysfs(50*time.Millisecond))
			if err == nil {
				t.Fatal("no error")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v, want errors.Is %v", err, tt.is)
			}
			for _, s := range append([]string{"pwm bench.fan: "}, tt.says...) {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
		})
	}
}

func TestHardwareWriteRefused(t *testing.T) {
	k := newFakeKernel(t, 1)
	h, err := newHardware(pwmDesc(), k.root, "pwmchip0", 0, 50, 10, k.sysfs(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	k.resetLog()
	for _, v := range []any{101.0, -1.0, math.NaN(), "50", 50, nil} {
		if err := write(t, h, v); err == nil || !strings.Contains(err.Error(), "pwm bench.fan: pwmchip0 channel 0: ") {
			t.Errorf("Write(%#v) = %v, want an error naming the device", v, err)
		}
	}
	if got := k.writes(); len(got) != 0 {
		t.Errorf("refused values wrote %q", got)
	}
	if d := k.attr("pwm0/duty_cycle"); d != "2000000" {
		t.Errorf("duty_cycle = %s, want 2000000 still", d)
	}

	k.fail["pwm0/duty_cycle"] = syscall.EIO
	err = write(t, h, 20.0)
	dutyFile := filepath.Join(k.chipDir, "pwm0", "duty_cycle")
	if !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), fmt.Sprintf("set duty_cycle to 4000000: open %s: ", dutyFile)) {
		t.Errorf("failed write: %v, want EIO naming %s", err, dutyFile)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.Write(ctx, device.WriteRequest{Value: 30.0}); !errors.Is(err, context.Canceled) {
		t.Errorf("Write with a cancelled context = %v", err)
	}
}

func TestHardwareCloseErrors(t *testing.T) {
	k := newFakeKernel(t, 1)
	h, err := newHardware(pwmDesc(), k.root, "pwmchip0", 0, 50, 10, k.sysfs(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	k.fail["pwm0/enable"] = syscall.EIO
	k.fail["unexport"] = syscall.EINVAL
	err = h.Close()
	if !errors.Is(err, syscall.EIO) || !errors.Is(err, syscall.EINVAL) {
		t.Errorf("Close = %v, want both the enable and the unexport errors", err)
	}
}

// NewHardware on the real sysfs root fails cleanly where there is no PWM.
func TestNewHardwareNoChip(t *testing.T) {
	_, err := NewHardware(pwmDesc(), t.TempDir(), "pwmchip0", 0, 50, 0)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "no such chip") {
		t.Errorf("NewHardware on an empty root = %v", err)
	}
}
