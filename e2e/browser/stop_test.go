package browser

import (
	"context"
	"errors"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal"
)

// TestStopAndResume: STOP in the console stops the gateway: the banner
// says who and why and lists sim.meter as left as it is, the heater (on)
// is driven to its safe value, writes are refused; the page reloaded
// during the stop still lists sim.meter (from hal/initialize's stopped);
// an admin resumes through the dialog and writes are accepted again.
func TestStopAndResume(t *testing.T) {
	g := newBench(t)
	admin := g.adminToken(t)
	c := g.dial(t, admin)
	ctx := context.Background()
	if res, err := c.Write(ctx, "sim.heater", true, "browser test"); err != nil || res.Status != "applied" {
		t.Fatalf("the admin's write of sim.heater: %+v, %v; want applied", res, err)
	}
	p := logIn(t, g, admin)
	p.waitText(deviceHook("sim.heater", "value"), "^true$")
	p.do(chromedp.WaitNotPresent(hook("stop-banner")))

	p.do(chromedp.Click(hook("stop")))
	p.waitText(hook("stop-banner"), "EMERGENCY STOP engaged by operator admin since .*: STOP pressed in the console")
	p.waitText(hook("stop-banner"), `Left as they are: sim\.meter \(a line instrument`)
	p.waitText(deviceHook("sim.heater", "value"), "^false$")
	if v, err := c.Read(ctx, "sim.heater", 0); err != nil || v.Value != false {
		t.Errorf("read sim.heater after STOP: %v, %v; want false (its safe value)", v.Value, err)
	}
	var he *halclient.HubError
	if _, err := c.Write(ctx, "sim.led", true, "browser test"); !errors.As(err, &he) || he.Code() != openhal.CodeStopped {
		t.Errorf("a write while stopped: %v; want STOPPED", err)
	}
	p.screenshots("stop-banner")

	// A page that connects during the stop learns what it left as is
	// from hal/initialize, with no hal/stopped to tell it.
	p.do(chromedp.Reload(), chromedp.WaitVisible(deviceHook("sim.led", "")))
	p.waitText(hook("conn-status"), "^connected$")
	p.waitText(hook("stop-banner"), `EMERGENCY STOP engaged by operator admin since .*: STOP pressed in the console\.[\s\S]*Left as they are: sim\.meter \(a line instrument`)

	p.do(chromedp.Click(hook("resume")), chromedp.WaitVisible(hook("resume-confirm")))
	p.do(chromedp.Click(hook("resume-confirm")), chromedp.WaitNotPresent(hook("stop-banner")))
	if _, err := c.Write(ctx, "sim.led", true, "browser test"); err != nil {
		t.Errorf("a write after resume: %v", err)
	}
}
