package hardware

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpiotest"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/board/profile"
	"github.com/openhal/gateway/internal/clock/clocktest"
	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/openhal"
)

// A real board's outputs, declared without a safe value, go to their
// inactive level at an emergency stop (high for an active-low relay), a
// PWM to duty 0, and an output with `safe: none` stays as it is and is
// listed with its reason: the Hub's stop on the devices Build makes.
func TestStopDrivesDefaultSafeValues(t *testing.T) {
	cfg, prof := parse(t, `
board: rpi4b
devices:
  bench.relay: {kind: gpio.output, pin: GPIO17, invert: true, initial: true}
  bench.magnet: {kind: gpio.output, pin: GPIO27, initial: true, safe: none, noSafeReason: "holds the fixture"}
  bench.fan: {kind: pwm, pin: GPIO18, frequency: 25000, pwm: {chip: fe20c000.pwm, channel: 0}, initial: 40}
  bench.lamp: {kind: pwm, pin: GPIO23, frequency: 50, pwm: software, initial: 30}
`)
	h := &fakeHost{pins: map[profile.LineRef]*gpiotest.Pin{
		bcm(17): {N: "GPIO17"}, bcm(27): {N: "GPIO27"}, bcm(23): {N: "GPIO23"},
	}, root: pwmSysfs(t, "fe20c000.pwm")}
	clk := clocktest.NewFake(time.Unix(0, 0))
	devs, release, err := Build(context.Background(), cfg, prof, h, clk, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	reg := device.NewRegistry(clk.Now)
	for _, d := range devs {
		rep, err := reg.Add(d)
		if err != nil {
			t.Fatal(err)
		}
		rep.Value(cfg.Devices[d.Descriptor().ID].InitialValue(), clk.Now())
	}
	if h.pins[bcm(17)].L != gpio.Low {
		t.Fatalf("the active-low relay, on, is at %v; want Low", h.pins[bcm(17)].L)
	}
	hub := halhub.New(reg, halhub.Options{Clock: clk, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	res, err := hub.Stop(openhal.Principal{Kind: openhal.KindHub, Name: "test"}, "test")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(res.SafeApplied, ","); got != "bench.fan,bench.lamp,bench.relay" || len(res.Failed) != 0 {
		t.Errorf("safe applied %s, failed %+v", got, res.Failed)
	}
	if len(res.LeftAsIs) != 1 || res.LeftAsIs[0] != (openhal.LeftAsIs{Device: "bench.magnet", Reason: "holds the fixture"}) {
		t.Errorf("left as is %+v", res.LeftAsIs)
	}
	if l := h.pins[bcm(17)].L; l != gpio.High {
		t.Errorf("relay line at %v after the stop, want High (active low, off)", l)
	}
	if l := h.pins[bcm(27)].L; l != gpio.High {
		t.Errorf("magnet line at %v after the stop, want High (left on)", l)
	}
	duty, err := os.ReadFile(filepath.Join(h.root, "class", "pwm", "pwmchip0", "pwm0", "duty_cycle"))
	if err != nil || strings.TrimSpace(string(duty)) != "0" {
		t.Errorf("fan duty_cycle %q (%v) after the stop, want 0", duty, err)
	}
	for id, want := range map[string]any{"bench.fan": 0.0, "bench.lamp": 0.0, "bench.relay": false, "bench.magnet": true} {
		if s, ok := reg.Value(id); !ok || s.Value != want {
			t.Errorf("%s = %v after the stop, want %v", id, s.Value, want)
		}
	}
}
