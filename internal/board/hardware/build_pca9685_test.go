package hardware

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/i2c/i2ctest"
	"periph.io/x/conn/v3/physic"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/board/profile"
	"github.com/openhal/gateway/internal/clock/clocktest"
	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/internal/hw/i2c/pca9685"
	"github.com/openhal/gateway/internal/hw/servo"
	"github.com/openhal/gateway/openhal"
)

// armYAML is a small arm: two servos and a lamp on a PCA9685 at 50 Hz,
// and a gripper servo on the Pi's hardware PWM (GPIO18).
const armYAML = `
board: rpi4b
chips:
  servos: {type: pca9685, bus: 1, address: 0x40, frequency: 50}
devices:
  arm.base: {kind: servo, pwm: {chip: servos, channel: 0}, safe: 90, rate: 60}
  arm.lift: {kind: servo, pwm: {chip: servos, channel: 1}, safe: 0, initial: 45}
  arm.lamp: {kind: pwm, pwm: {chip: servos, channel: 15}, initial: 50}
  arm.grip: {kind: servo, pin: GPIO18, minPulseUs: 500, maxPulseUs: 2500, minAngle: -90, maxAngle: 90, safe: 0, initial: 10}
`

// The PCA9685's traffic at 0x40 (datasheet rev. 4): New's set-up from
// MODE1's power-on value (§7.3.1: asleep, the prescaler 121 for 50 Hz
// (§7.3.5), MODE2 totem-pole, awake with auto-increment), then a
// channel's LEDn_ON_L..LEDn_OFF_H in one write (§7.3.3).
func pcaStart() []i2ctest.IO {
	return []i2ctest.IO{
		{Addr: 0x40, W: []byte{0x00}, R: []byte{0x11}},
		{Addr: 0x40, W: []byte{0x00, 0x11}},
		{Addr: 0x40, W: []byte{0xFE, 121}},
		{Addr: 0x40, W: []byte{0x01, 0x04}},
		{Addr: 0x40, W: []byte{0x00, 0x21}},
	}
}

func pcaLED(ch int, on, off uint16) i2ctest.IO {
	return i2ctest.IO{Addr: 0x40, W: []byte{byte(0x06 + 4*ch), byte(on), byte(on >> 8), byte(off), byte(off >> 8)}}
}

// servoSteps is the PCA9685 duty, in steps of 4096 at 50.03 Hz, of a
// 1..2 ms servo's angle of 0..180°.
func servoSteps(angle float64) uint16 {
	pulse := 1e-3 + angle/180*1e-3
	return uint16(math.Round(pulse * pca9685.ActualFrequency(50) * 4096))
}

func armHost(t *testing.T, ops ...i2ctest.IO) *fakeHost {
	return &fakeHost{busy: map[profile.LineRef]bool{}, buses: map[string]*i2ctest.Playback{"1": {DontPanic: true, Ops: ops}},
		root: pwmSysfs(t, "fe20c000.pwm")}
}

func build(t *testing.T, yml string, h *fakeHost) (map[string]device.Device, *clocktest.Fake, func()) {
	t.Helper()
	cfg, prof := parse(t, yml)
	clk := clocktest.NewFake(time.Unix(0, 0))
	devs, release, err := Build(context.Background(), cfg, prof, h, clk, nil)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]device.Device{}
	for _, d := range devs {
		byID[d.Descriptor().ID] = d
	}
	return byID, clk, release
}

func sysfsAttr(t *testing.T, h *fakeHost, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.root, "class", "pwm", "pwmchip0", "pwm0", file))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// Build opens no I2C bus for a PCA9685: the first write sets the chip up
// and writes every channel's value; a rate-limited servo moves a frame
// at a time and then holds no timer; the gripper on GPIO18 starts at its
// initial angle's pulse; a release turns every channel off.
func TestBuildPCA9685Arm(t *testing.T) {
	ops := append(pcaStart(), pcaLED(15, 0, 1024)) // the lamp's 25 %
	ops = append(ops, pcaLED(0, 0, servoSteps(90)))
	for ms := 20; ms <= 500; ms += 20 { // 90° to 120° at 60 °/s, a frame at a time
		ops = append(ops, pcaLED(0, 0, servoSteps(90+60*float64(ms)/1000)))
	}
	ops = append(ops, pcaLED(1, 0, servoSteps(180)), // arm.lift: no rate, at once
		// Released, the last built first: arm.lift, arm.lamp, arm.base.
		pcaLED(1, 0, 0x1000), pcaLED(15, 0, 0x1000), pcaLED(0, 0, 0x1000))
	h := armHost(t, ops...)
	devs, clk, release := build(t, armYAML, h)
	for _, o := range h.opened {
		if strings.HasPrefix(o, "i2c") {
			t.Fatalf("Build opened %s: a PCA9685 is set up at its first use", o)
		}
	}
	if d := devs["arm.base"].Descriptor(); d.Kind != device.KindServo || d.Chip != "pca9685" || *d.Channel != 0 || d.Pin != "" {
		t.Errorf("arm.base's descriptor %+v", d)
	}
	if got := sysfsAttr(t, h, "period") + " " + sysfsAttr(t, h, "duty_cycle"); got != "20000000 1611111" {
		t.Errorf("the gripper's period and duty cycle %s, want 20 ms and 10°'s 1.611111 ms", got)
	}
	write := func(id string, v float64) {
		t.Helper()
		if _, err := devs[id].(device.Writer).Write(context.Background(), device.WriteRequest{Value: v}); err != nil {
			t.Fatalf("write %s %v: %v", id, v, err)
		}
	}
	write("arm.lamp", 25)
	write("arm.base", 120)
	clk.Advance(time.Second)
	if clk.Pending() != 0 {
		t.Errorf("%d timers pending with every servo at rest", clk.Pending())
	}
	write("arm.lift", 180)
	write("arm.grip", -90)
	if got := sysfsAttr(t, h, "duty_cycle"); got != "500000" {
		t.Errorf("the gripper at -90° has duty_cycle %s, want 0.5 ms", got)
	}
	release()
	if err := h.buses["1"].Close(); err != nil { // every op played, and the bus closed
		t.Error(err)
	}
}

// regs is a PCA9685's register file behind a bus, for what no playback
// can order: the stop drives the devices at once, each from its own
// goroutine. MODE1 reads as after power-on (0x11); a write sets the
// registers from its first, auto-incrementing as MODE1's AI bit has it.
type regs struct {
	mu  sync.Mutex
	reg [256]byte
}

func newRegs() *regs {
	r := &regs{}
	r.reg[0x00] = 0x11
	return r
}

func (r *regs) Tx(addr uint16, w, rd []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if addr != 0x40 || len(w) == 0 {
		return fmt.Errorf("no device at %#x", addr)
	}
	for i := range rd {
		rd[i] = r.reg[int(w[0])+i]
	}
	for i, b := range w[1:] {
		r.reg[int(w[0])+i] = b
	}
	return nil
}

func (r *regs) SetSpeed(physic.Frequency) error { return nil }
func (r *regs) String() string                  { return "regs" }
func (r *regs) Close() error                    { return nil }

// off is channel ch's LEDn_OFF (with its full-off bit), as the chip has it.
func (r *regs) off(ch int) uint16 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return uint16(r.reg[0x08+4*ch]) | uint16(r.reg[0x09+4*ch])<<8
}

// regsHost is armHost with the register file on bus 1.
type regsHost struct {
	*fakeHost
	bus *regs
}

func (h regsHost) I2CBus(name string) (i2c.BusCloser, error) {
	if name != "1" {
		return nil, errors.New("no such bus")
	}
	return h.bus, nil
}

// An emergency stop through the Hub drives each servo to its safe angle
// at once — the rate-limited one mid-move too, ending its move — and the
// lamp to 0 %.
func TestStopDrivesServosSafe(t *testing.T) {
	h := regsHost{fakeHost: armHost(t), bus: newRegs()}
	cfg, prof := parse(t, armYAML)
	clk := clocktest.NewFake(time.Unix(0, 0))
	list, release, err := Build(context.Background(), cfg, prof, h, clk, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	devs := map[string]device.Device{}
	reg := device.NewRegistry(clk.Now)
	for _, d := range list {
		devs[d.Descriptor().ID] = d
		rep, err := reg.Add(d)
		if err != nil {
			t.Fatal(err)
		}
		rep.Value(cfg.Devices[d.Descriptor().ID].InitialValue(), clk.Now())
	}
	if _, err := devs["arm.base"].(device.Writer).Write(context.Background(), device.WriteRequest{Value: 180.0}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(40 * time.Millisecond) // two frames on its way
	if got := h.bus.off(0); got != servoSteps(92.4) {
		t.Fatalf("arm.base mid-move at %d steps, want 92.4°'s %d", got, servoSteps(92.4))
	}
	hub := halhub.New(reg, halhub.Options{Clock: clk, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	res, err := hub.Stop(openhal.Principal{Kind: openhal.KindHub, Name: "test"}, "test")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(res.SafeApplied, ","); got != "arm.base,arm.grip,arm.lamp,arm.lift" || len(res.Failed) != 0 {
		t.Errorf("safe applied %s, failed %+v", got, res.Failed)
	}
	if devs["arm.base"].(*servo.Device).Moving() || clk.Pending() != 0 {
		t.Error("arm.base still moves after the stop")
	}
	for ch, want := range map[int]uint16{0: servoSteps(90), 1: servoSteps(0), 15: 0x1000} {
		if got := h.bus.off(ch); got != want {
			t.Errorf("channel %d's LEDn_OFF %#x after the stop, want %#x", ch, got, want)
		}
	}
	if got := sysfsAttr(t, h.fakeHost, "duty_cycle"); got != "1500000" {
		t.Errorf("the gripper's duty_cycle %s after the stop, want 0°'s 1.5 ms", got)
	}
}

// A PCA9685 that does not answer, or whose bus is not there, is no start
// failure: its devices are built, Run puts each in fault with what
// failed, writes fail the same way, and the rest of the board runs.
func TestPCA9685AbsentIsAFault(t *testing.T) {
	tests := []struct {
		name string
		host func(h *fakeHost)
		want string
	}{
		{"nothing answers", func(*fakeHost) {}, "chips.servos (pca9685 at 0x40 on I2C bus 1): set up: pca9685: read MODE1: "},
		{"no bus", func(h *fakeHost) { delete(h.buses, "1") }, "chips.servos (pca9685 at 0x40 on I2C bus 1): open its bus: open I2C bus 1: no such bus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := armHost(t)
			tt.host(h)
			devs, _, release := build(t, armYAML, h)
			defer release()
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			for _, id := range []string{"arm.base", "arm.lamp"} {
				rep := &stateRecorder{}
				devs[id].(device.Runner).Run(ctx, rep)
				if len(rep.states) != 1 || !strings.HasPrefix(rep.states[0], "fault ") || !strings.Contains(rep.states[0], tt.want) {
					t.Errorf("%s's states %q, want a fault saying %q", id, rep.states, tt.want)
				}
			}
			_, err := devs["arm.lift"].(device.Writer).Write(context.Background(), device.WriteRequest{Value: 30.0})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("write arm.lift: %v, want %q", err, tt.want)
			}
			if _, err := devs["arm.grip"].(device.Writer).Write(context.Background(), device.WriteRequest{Value: 30.0}); err != nil {
				t.Errorf("the gripper on GPIO18: %v", err)
			}
		})
	}
}

type stateRecorder struct{ states []string }

func (r *stateRecorder) Value(any, time.Time) {}
func (r *stateRecorder) State(s device.State, fault string) {
	r.states = append(r.states, string(s)+" "+fault)
}
