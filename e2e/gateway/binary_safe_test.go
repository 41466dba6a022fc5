package gateway_test

// Whole-binary tests of the safe values (issue 13, point 2): every output
// has one by default, so a stop turns the fan off and its safe value can
// still be written while stopped; an output with `safe: none` is a
// warning of check, marked by devices and left as it is by the stop.

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

// TestBinaryStopDrivesFanSafe: on the default sim board the stop takes
// the fan from 70 to 0; writing 0 passes during the stop, 70 is STOPPED.
func TestBinaryStopDrivesFanSafe(t *testing.T) {
	dir := t.TempDir()
	g := startGateway(t, dir)
	admin := func(args ...string) []string { return append(args, "--hub", g.tcp, "--state-dir", dir) }
	gwOK(t, admin("write", "sim.fan", "70")...)
	gwOK(t, admin("write", "sim.led", "true")...)

	out := gwOK(t, admin("stop", "--reason", "fan test")...)
	for _, re := range []string{`(?m)^safe: sim\.fan$`, `(?m)^safe: sim\.led$`, `(?m)^safe: sim\.heater$`,
		`(?m)^left as they are: sim\.meter \(a line instrument: the stop sends it no line; its safe may name one\)$`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("stop printed\n%s\nwithout %s", out, re)
		}
	}
	if got := gwOK(t, admin("read", "sim.fan")...); got != "0 %\n" {
		t.Errorf("sim.fan after the stop = %q, want 0 %%", got)
	}
	if got := gwOK(t, admin("read", "sim.led")...); got != "false\n" {
		t.Errorf("sim.led after the stop = %q, want false", got)
	}
	gwOK(t, admin("write", "sim.fan", "0")...)
	wantOneLineError(t, gw(t, admin("write", "sim.fan", "70")...), "sim.fan: the emergency stop is engaged")

	var list openhal.DevicesListResult
	if err := json.Unmarshal([]byte(gwOK(t, admin("devices", "--json")...)), &list); err != nil {
		t.Fatal(err)
	}
	safe := map[string]device.Descriptor{}
	for _, d := range list.Devices {
		safe[d.ID] = d
	}
	if safe["sim.fan"].Safe != 0.0 || safe["sim.led"].Safe != false || safe["sim.meter"].Safe != nil ||
		!strings.HasPrefix(safe["sim.meter"].NoSafeReason, "a line instrument") {
		t.Errorf("descriptors: fan %+v, led %+v, meter %+v", safe["sim.fan"], safe["sim.led"], safe["sim.meter"])
	}
}

// TestBinarySafeNone: `safe: none` with a reason is a warning of check
// (exit 0), without a reason an error naming the field; the running
// gateway logs it, devices marks the fan, and the stop leaves it at 70,
// listing it with its reason, to a device-limited token only when it may
// see the fan.
func TestBinarySafeNone(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "keep.yaml")
	writeFile(t, cfg, "board: sim\ndevices:\n  sim.fan:\n    safe: none\n    noSafeReason: keeps the rack cool\n")
	warning := "gateway: warning: devices.sim.fan.safe: none: an emergency stop leaves sim.fan as it is (keeps the rack cool)\n"
	if r := gw(t, "check", "--config", cfg); r.code != 0 || r.stdout != cfg+": ok\n" || r.stderr != warning {
		t.Errorf("check: exit %d, stdout %q, stderr %q; want 0, ok and %q", r.code, r.stdout, r.stderr, warning)
	}
	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, bad, "board: sim\ndevices:\n  sim.fan: {safe: none}\n")
	if r := gw(t, "check", "--config", bad); r.code != 1 || !strings.HasPrefix(r.stderr, "gateway: "+bad+": devices.sim.fan.noSafeReason: required with safe: none") {
		t.Errorf("check without a reason: exit %d, stderr %q", r.code, r.stderr)
	}

	state := filepath.Join(dir, "state")
	g := startGateway(t, state, "--config", cfg)
	g.err.waitFor(t, 0, `level=WARN msg="configuration: none: an emergency stop leaves sim.fan as it is \(keeps the rack cool\)" field=devices.sim.fan.safe`, waitLong)
	admin := func(args ...string) []string { return append(args, "--hub", g.tcp, "--state-dir", state) }
	gwOK(t, admin("write", "sim.fan", "70")...)
	if out := gwOK(t, admin("devices")...); !regexp.MustCompile(`(?m)^sim\.fan\s+pwm\s+rw\s+low\s+ok, no safe value\s+70 % \((?:just now|\d+s ago)\)\s+Fan$`).MatchString(out) {
		t.Errorf("devices printed\n%s", out)
	}
	ledOnly := g.addToken(t, "led-only", "control_low", "--devices", "sim.led")
	var res openhal.StopResult
	if err := json.Unmarshal([]byte(gwOK(t, "stop", "--json", "--hub", g.tcp, "--token", ledOnly)), &res); err != nil ||
		len(res.LeftAsIs) != 0 || strings.Join(res.SafeApplied, ",") != "sim.led" {
		t.Errorf("the LED-only token's stop: %+v (%v)", res, err)
	}
	out := gwOK(t, admin("stop")...)
	if !strings.Contains(out, "left as they are: sim.fan (keeps the rack cool), sim.meter (") || strings.Contains(out, "safe: sim.fan") {
		t.Errorf("stop printed\n%s", out)
	}
	if got := gwOK(t, admin("read", "sim.fan")...); got != "70 %\n" {
		t.Errorf("sim.fan after the stop = %q, want 70 %% (left as it is)", got)
	}
}
