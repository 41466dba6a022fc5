package browser

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestLiveValue: a value written by another client (an admin's Go client)
// shows on the bench without a reload, each time it changes, and the
// device's checkbox follows it; its history plot is there; the card says
// where the device is wired.
func TestLiveValue(t *testing.T) {
	g := newBench(t)
	admin := g.adminToken(t)
	c := g.dial(t, admin)
	p := logIn(t, g, admin)

	value := deviceHook("sim.led", "value")
	before, _ := strconv.ParseBool(p.waitText(value, "^(true|false)$"))
	for _, v := range []bool{!before, before} {
		if _, err := c.Write(context.Background(), "sim.led", v, "browser test"); err != nil {
			t.Fatalf("write sim.led %v: %v", v, err)
		}
		p.waitText(value, fmt.Sprintf("^%v$", v))
		checked := eval[bool](p, fmt.Sprintf(`document.querySelector(%q).checked`, string(deviceHook("sim.led", "control"))))
		if checked != v {
			t.Errorf("sim.led is %v and its checkbox checked=%v", v, checked)
		}
	}
	p.waitText(deviceHook("sim.led", "state"), "^ok$")
	p.waitText(deviceHook("sim.led", "where"), "^GPIO17$") // the descriptor's pin
	p.do(chromedp.WaitVisible(chromedp.CSS(`[data-test="plot"][data-series="sim.led"]`)))
	p.waitText(deviceHook("sim.temperature", "value"), `\d`)
	p.screenshots("bench")
}
