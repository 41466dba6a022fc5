package browsertest

import (
	"context"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestApproveAgentWrite: an agent's (control_low) write of the high-risk
// sim.heater waits as a confirmation; it shows in the console's queue,
// an admin approves it there, and the heater is then on.
func TestApproveAgentWrite(t *testing.T) {
	g := newBench(t)
	admin := g.adminToken(t)
	agent := g.dial(t, g.addAgent(t, "bot", "control_low"))
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
