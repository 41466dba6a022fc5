package browser

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestApproveAgentWrite: an agent's (control_low) write of the high-risk
// sim.heater waits as a confirmation; it shows in the console's queue,
// an admin approves it there, and the heater is then on.
func TestApproveAgentWrite(t *testing.T) {
	g := newBench(t)
	admin := g.adminToken(t)
	agent := g.dial(t, g.addToken(t, "bot", "agent", "control_low"))
	c := g.dial(t, admin)
	p := logIn(t, g, admin)
	p.do(chromedp.Click(hook("nav-confirmations")), chromedp.WaitVisible(hook("confirmations")))

	ctx := context.Background()
	res, err := agent.Write(ctx, "sim.heater", true, "preheat for run 7")
	if err != nil || res.Status != "pending" || res.Confirmation == nil {
		t.Fatalf("the agent's write of sim.heater: %+v, %v; want pending", res, err)
	}
	id := res.Confirmation.ID
	item := chromedp.CSS(fmt.Sprintf(`[data-test="confirmation"][data-id=%q]`, id))
	p.waitText(item, `sim\.heater.*true.*agent bot.*preheat for run 7.*\d+ s left`)
	p.waitText(hook("nav-confirmations"), `\(1\)`)
	p.screenshots("confirmation")

	p.do(chromedp.Click(item + ` [data-test="approve"]`))
	p.waitText(item, `approved by operator admin`)
	p.do(chromedp.WaitNotPresent(item + ` [data-test="approve"]`))
	if v, err := c.Read(ctx, "sim.heater", 0); err != nil || v.Value != true {
		t.Errorf("read sim.heater after the approval: %v, %v; want true", v.Value, err)
	}
	p.do(chromedp.Click(hook("nav-bench")))
	p.waitText(deviceHook("sim.heater", "value"), "^true$")
}

// TestOperatorWriteWaits: an operator whose token is control_low ticks
// the heater's checkbox; the write waits for an admin, shown on the
// heater's card with who asked for what, the value now and its
// countdown, and the checkbox stays as the heater is (off); an admin's
// approval (from a Go client) clears it and the heater shows on.
func TestOperatorWriteWaits(t *testing.T) {
	g := newBench(t)
	c := g.dial(t, g.adminToken(t))
	p := logIn(t, g, g.addToken(t, "alice", "operator", "control_low"))

	p.waitText(deviceHook("sim.heater", "value"), "^false$")
	p.do(chromedp.Click(deviceHook("sim.heater", "control")))
	text := p.waitText(deviceHook("sim.heater", "pending"), `^Waiting for approval \(operator alice asked for true, now false\) · c-\d+, \d+ s left$`)
	id := regexp.MustCompile(`c-\d+`).FindString(text)
	checked := fmt.Sprintf(`document.querySelector(%q).checked`, string(deviceHook("sim.heater", "control")))
	if eval[bool](p, checked) {
		t.Error("the heater's checkbox is ticked while the write waits: it shows the wish, not the heater")
	}
	if v, err := c.Read(context.Background(), "sim.heater", 0); err != nil || v.Value != false {
		t.Errorf("read sim.heater while the write waits: %v, %v; want false", v.Value, err)
	}

	if res, err := c.Approve(context.Background(), id); err != nil || res.Status != "approved" {
		t.Fatalf("approve %s: %+v, %v", id, res, err)
	}
	p.do(chromedp.WaitNotPresent(deviceHook("sim.heater", "pending")))
	p.waitText(deviceHook("sim.heater", "value"), "^true$")
	if !eval[bool](p, checked) {
		t.Error("the heater is on and its checkbox is not ticked")
	}
}
