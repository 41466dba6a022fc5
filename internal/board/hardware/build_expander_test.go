package hardware

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/spi"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/board"
	"github.com/openhal/gateway/internal/board/profile"
	"github.com/openhal/gateway/internal/clock"
	"github.com/openhal/gateway/internal/hw/i2c/mcp23017"
	"github.com/openhal/gateway/internal/hw/i2c/mcp23017/mcp23017test"
)

// expanderHost is a Pi 4 whose bus 1 holds a fake MCP23017 at 0x20, its
// INT wired to GPIO17 (a gpiotest pin the chip drives), and a relay on
// GPIO27.
type expanderHost struct {
	chip  *mcp23017test.Chip
	relay *mcp23017test.Line
	busy  bool // GPIO17 is held by another program
}

func (h *expanderHost) Line(ref profile.LineRef) (gpio.PinIO, error) {
	switch {
	case ref == bcm(17) && h.busy:
		return nil, errors.New("line busy")
	case ref == bcm(17):
		return h.chip.INT(), nil
	case ref == bcm(27):
		return h.relay, nil
	}
	return nil, errors.New("no such line")
}

func (h *expanderHost) I2CBus(name string) (i2c.BusCloser, error) {
	if name != "1" {
		return nil, errors.New("no such bus")
	}
	return h.chip, nil
}

func (*expanderHost) SysRoot() string { return "/nonexistent" }

func (*expanderHost) SPIPort(dev string) (spi.PortCloser, error) {
	return nil, errors.New("no SPI on this bench")
}

const expanderYAML = `
board: rpi4b
chips:
  ex1: {type: mcp23017, bus: 1, address: 0x20, interrupt: GPIO17}
devices:
  arm.guard: {kind: gpio.input, pin: ex1:GPB1, pull: up, invert: true}
  arm.lamp: {kind: gpio.output, pin: ex1:GPA0, initial: true}
  arm.brake: {kind: gpio.output, pin: ex1:GPB7, invert: true, safe: false}
  arm.relay: {kind: gpio.output, pin: GPIO27}
`

type recorder chan any // values; states as device.State

func (r recorder) Value(v any, _ time.Time)           { r <- v }
func (r recorder) State(s device.State, fault string) { r <- s }

func (r recorder) want(t *testing.T, v any) {
	t.Helper()
	select {
	case got := <-r:
		if got != v {
			t.Fatalf("got %v, want %v", got, v)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no %v", v)
	}
}

func buildArm(t *testing.T, h *expanderHost) (map[string]device.Device, func()) {
	t.Helper()
	cfg, err := board.Parse([]byte(expanderYAML))
	if err != nil {
		t.Fatal(err)
	}
	prof, _ := profile.ByName("rpi4b")
	devs, release, err := Build(context.Background(), cfg, prof, h, clock.Real(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]device.Device{}
	for _, d := range devs {
		byID[d.Descriptor().ID] = d
	}
	return byID, release
}

// runDev starts d's Run until the returned function stops it.
func runDev(t *testing.T, d device.Device) (recorder, func()) {
	t.Helper()
	r := make(recorder, 64)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.(device.Runner).Run(ctx, r)
	}()
	return r, func() { cancel(); <-done }
}

// TestBuildExpander: the chip is set up once for its three pins beside a
// Pi line's device, a press on the guard reaches its value through INT
// and GPIO17's edge, the lamp's write reaches the chip, and releasing
// stops the watcher and frees GPIO17.
func TestBuildExpander(t *testing.T) {
	h := &expanderHost{chip: mcp23017test.New(mcp23017.MCP23017, 0x20), relay: mcp23017test.NewLine("GPIO27")}
	devs, release := buildArm(t, h)
	if !h.chip.IsOutput(0) || h.chip.Level(0) != gpio.High || !h.chip.IsOutput(15) || h.chip.Level(15) != gpio.High || h.chip.IsOutput(9) {
		t.Errorf("the chip's setup: GPA0 %v %s, GPB7 %v %s (brake off is high, inverted), GPB1 an output %v",
			h.chip.IsOutput(0), h.chip.Level(0), h.chip.IsOutput(15), h.chip.Level(15), h.chip.IsOutput(9))
	}
	if h.chip.INT().Pull() != gpio.PullUp || h.chip.INT().Ins() != 1 {
		t.Errorf("GPIO17 requested %d times, pull %s", h.chip.INT().Ins(), h.chip.INT().Pull())
	}
	guard, lamp := devs["arm.guard"], devs["arm.lamp"]
	if d := guard.Descriptor(); d.Pin != "ex1:GPB1" || d.Chip != "mcp23017" || d.Address != "0x20" || d.Bus != "/dev/i2c-1" || *d.Channel != 9 {
		t.Errorf("descriptor %+v", d)
	}
	rg, stopGuard := runDev(t, guard)
	_, stopLamp := runDev(t, lamp)
	rg.want(t, false)
	h.chip.Drive(9, gpio.Low)
	rg.want(t, true)
	if rd, err := guard.(device.Reader).Read(context.Background()); err != nil || rd.Value != true {
		t.Errorf("read: %v, %v", rd.Value, err)
	}
	if _, err := lamp.(device.Writer).Write(context.Background(), device.WriteRequest{Value: false}); err != nil || h.chip.Level(0) != gpio.Low {
		t.Errorf("write: %v, GPA0 %s", err, h.chip.Level(0))
	}
	stopGuard()
	stopLamp()
	release()
	if !h.chip.INT().Closed() || !h.relay.Closed() {
		t.Error("GPIO17 or GPIO27 not released")
	}
	n := h.chip.Txs()
	h.chip.Drive(9, gpio.High)
	if h.chip.Txs() != n {
		t.Error("the chip was read after release")
	}
}

// A chip that does not answer does not stop the gateway: Build works,
// its devices are in fault, the Pi line's device is not.
func TestBuildExpanderAbsent(t *testing.T) {
	h := &expanderHost{chip: mcp23017test.New(mcp23017.MCP23017, 0x20), relay: mcp23017test.NewLine("GPIO27")}
	h.chip.SetPresent(false)
	devs, release := buildArm(t, h)
	defer release()
	r, stop := runDev(t, devs["arm.lamp"])
	defer stop()
	r.want(t, device.StateFault)
	_, err := devs["arm.lamp"].(device.Writer).Write(context.Background(), device.WriteRequest{Value: true})
	if err == nil || !strings.Contains(err.Error(), "ex1 (mcp23017 at 0x20 on /dev/i2c-1) did not answer: check its wiring, power and address") {
		t.Errorf("write: %v", err)
	}
	if _, err := devs["arm.relay"].(device.Writer).Write(context.Background(), device.WriteRequest{Value: true}); err != nil {
		t.Errorf("the Pi line's relay: %v", err)
	}
}

// An INT line another program holds fails Build, naming the chip and
// the line; what was opened is released.
func TestBuildExpanderINTBusy(t *testing.T) {
	cfg, err := board.Parse([]byte(expanderYAML))
	if err != nil {
		t.Fatal(err)
	}
	prof, _ := profile.ByName("rpi4b")
	h := &expanderHost{chip: mcp23017test.New(mcp23017.MCP23017, 0x20), relay: mcp23017test.NewLine("GPIO27"), busy: true}
	_, _, err = Build(context.Background(), cfg, prof, h, clock.Real(), nil)
	if err == nil || err.Error() != "devices.arm.brake: chips.ex1.interrupt: open GPIO17 (pinctrl-bcm2711:17): line busy" {
		t.Errorf("Build: %v", err)
	}
}
