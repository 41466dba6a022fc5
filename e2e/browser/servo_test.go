package browser

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// armYAML is a servo and a lamp on a PCA9685 whose bus this machine does
// not have: the gateway serves both in fault (issue 30, point 4).
const armYAML = `board: rpi4b
chips:
  servos: {type: pca9685, bus: 1, address: 0x40, frequency: 50}
devices:
  arm.base:
    kind: servo
    label: Arm base
    pwm: {chip: servos, channel: 0}
    minAngle: -90
    maxAngle: 90
    initial: 30
    safe: 0
    risk: low
`

// TestServoCard: the console shows a servo (x.servo) as a number in °
// (its SenML unit deg) with a slider over its angles, a step of 1°, and
// its fault in words.
func TestServoCard(t *testing.T) {
	chromiumPath(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "arm.yaml")
	if err := os.WriteFile(cfg, []byte(armYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, dir, "127.0.0.1:0", "127.0.0.1:0", "--config", cfg)
	p := newPage(t)
	p.do(chromedp.Navigate(g.url()))
	p.fill(hook("login-token"), g.adminToken(t))
	p.do(chromedp.Click(hook("login-submit")), chromedp.WaitVisible(deviceHook("arm.base", "")))
	p.waitText(deviceHook("arm.base", "value"), `^30 °$`)
	p.waitText(deviceHook("arm.base", "state"), `^fault: .*chips\.servos \(pca9685 at 0x40 on I2C bus 1\)`)
	slider := eval[[]string](p, `(() => { const e = document.querySelector('[data-test="device"][data-device="arm.base"] [data-test="control"]');
		return [e.type, e.min, e.max, e.step, e.value, String(e.disabled)]; })()`)
	if want := []string{"range", "-90", "90", "1", "30", "false"}; !equal(slider, want) {
		t.Errorf("arm.base's control (type, min, max, step, value, disabled) = %q, want %q", slider, want)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
