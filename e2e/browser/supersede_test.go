package browser

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestSupersededCard: an agent's request for sim.heater = true shows on
// the admin's confirmation card beside the heater's value now (asks:
// true, now: false); when the agent turns the heater off itself, the card
// says the request is superseded by that write, not applied, and offers
// no approval any more; an approval from elsewhere then applies nothing.
func TestSupersededCard(t *testing.T) {
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
	item := fmt.Sprintf(`[data-test="confirmation"][data-id=%q]`, id)
	p.waitText(chromedp.CSS(item+` [data-test="asked"]`), `^true$`)
	p.waitText(chromedp.CSS(item+` [data-test="current"]`), `^false$`)
	p.waitText(chromedp.CSS(item), `sim\.heater asks: true · now: false`)

	if w, err := agent.Write(ctx, "sim.heater", false, "changed my mind"); err != nil || w.Status != "applied" {
		t.Fatalf("the agent's write of false: %+v, %v; want applied", w, err)
	}
	p.waitText(chromedp.CSS(item), `superseded by agent bot's write of false at .*: not applied`)
	p.do(chromedp.WaitNotPresent(item+` [data-test="approve"]`), chromedp.WaitNotPresent(item+` [data-test="current"]`))

	if _, err := c.Approve(ctx, id); err == nil || !strings.Contains(err.Error(), "superseded") {
		t.Errorf("approve %s after it was superseded: %v, want CONFIRMATION_CLOSED superseded", id, err)
	}
	if v, err := c.Read(ctx, "sim.heater", 0); err != nil || v.Value != false {
		t.Errorf("read sim.heater: %v, %v; want false", v.Value, err)
	}
}
