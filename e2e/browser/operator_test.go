package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal/gatewayext"
)

// kill ends the gateway as a crash would, and waits until it is gone.
func (g *gateway) kill(t *testing.T) {
	t.Helper()
	g.cmd.Process.Kill()
	select {
	case <-g.exited:
	case <-time.After(waitLong):
		t.Fatal("the gateway did not exit after SIGKILL")
	}
}

// disabled is the JavaScript expression: is the element sel disabled?
func disabled(sel chromedp.CSS) string {
	return fmt.Sprintf(`document.querySelector(%q).disabled`, string(sel))
}

// TestStaleWhileReconnecting: with the gateway killed under an open
// console, the page says since when it is not live; each card greys its
// value and says the time of that value; controls are disabled; STOP is
// disabled and says that a press would stop nothing. With the gateway
// back on the same ports, all of it is live again.
func TestStaleWhileReconnecting(t *testing.T) {
	t.Parallel()
	g := newBench(t)
	admin := g.adminToken(t)
	p := logIn(t, g, admin)
	p.waitText(deviceHook("sim.led", "value"), "^(true|false)$")
	p.do(chromedp.WaitNotPresent(hook("stale")), chromedp.WaitNotPresent(deviceHook("sim.led", "value-time")))

	g.kill(t)
	p.waitText(hook("stale"), `^Not live since \d\d?:\d\d:\d\d.*nothing can be sent \(no write, no STOP\)`)
	p.waitText(deviceHook("sim.led", "value-time"), `^last value at \d\d?:\d\d:\d\d.*, not live$`)
	p.waitJS(fmt.Sprintf(`document.querySelector(%q).className`, string(deviceHook("sim.led", ""))), `\bstale\b`)
	p.waitJS(disabled(deviceHook("sim.led", "control")), "^true$")
	p.waitJS(disabled(deviceHook("sim.fan", "control")), "^true$")
	p.waitJS(disabled(hook("stop")), "^true$")
	p.waitText(hook("stop-offline"), `^STOP is not live: .*pressing it would stop nothing`)
	p.screenshots("reconnecting")

	g = startGateway(t, g.dir, g.httpAddr, g.tcpAddr)
	p.waitText(hook("conn-status"), `^gateway restarted \(new run \w+\), connected$`)
	p.do(chromedp.WaitNotPresent(hook("stale")), chromedp.WaitNotPresent(hook("stop-offline")),
		chromedp.WaitNotPresent(deviceHook("sim.led", "value-time")))
	p.waitJS(disabled(deviceHook("sim.led", "control")), "^false$")
	p.waitJS(disabled(hook("stop")), "^false$")
	p.waitJS(fmt.Sprintf(`document.querySelector(%q).className`, string(deviceHook("sim.led", ""))), `^card$`)
}

// TestControlsDuringStop: during a stop every control is disabled; a
// device with a safe value offers the write of it (the one write a stop
// lets through, spec §6), which the Hub applies; one without (the
// meter) says it has none. Resuming enables the controls again.
func TestControlsDuringStop(t *testing.T) {
	t.Parallel()
	g := newBench(t)
	admin := g.adminToken(t)
	c := g.dial(t, admin)
	p := logIn(t, g, admin)
	ctx := context.Background()
	p.waitJS(disabled(deviceHook("sim.fan", "control")), "^false$")
	p.do(chromedp.WaitNotPresent(deviceHook("sim.fan", "write-safe")))

	if _, err := c.Stop(ctx, "browser test"); err != nil {
		t.Fatalf("stop: %v", err)
	}
	p.waitText(hook("stop-banner"), "EMERGENCY STOP")
	for _, id := range []string{"sim.fan", "sim.led", "sim.heater", "sim.meter"} {
		p.waitJS(disabled(deviceHook(id, "control")), "^true$")
	}
	p.waitText(deviceHook("sim.fan", "write-safe"), `^Set to its safe value, 0 %$`)
	p.waitText(deviceHook("sim.heater", "write-safe"), `^Set to its safe value, false$`)
	p.waitText(deviceHook("sim.meter", "stopped-control"), `no safe value`)
	p.waitText(hook("stop-banner"), `controls are off; a device with a safe value offers to write it`)

	seen := auditSince(t, c, 0, nil)
	p.do(chromedp.Click(deviceHook("sim.fan", "write-safe")))
	auditSince(t, c, seen, func(e gatewayext.AuditEntry) bool {
		return e.Action == "write" && e.Device == "sim.fan" && e.Outcome == "applied" && e.Principal.Name == "admin"
	})
	p.do(chromedp.WaitNotPresent(deviceHook("sim.fan", "") + ` .error`))

	if err := c.Resume(ctx); err != nil {
		t.Fatalf("resume: %v", err)
	}
	p.do(chromedp.WaitNotPresent(hook("stop-banner")), chromedp.WaitNotPresent(deviceHook("sim.fan", "write-safe")))
	p.waitJS(disabled(deviceHook("sim.fan", "control")), "^false$")
	p.waitJS(disabled(deviceHook("sim.heater", "control")), "^false$")
}

// auditSince returns the last seq of the audit log once an entry after
// seq since matches match (nil: at once), waiting for one.
func auditSince(t *testing.T, c *halclient.Conn, since uint64, match func(gatewayext.AuditEntry) bool) uint64 {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for {
		res, err := c.Audit(context.Background(), since, 1000)
		if err != nil {
			t.Fatalf("audit: %v", err)
		}
		last := since
		for _, raw := range res.Entries {
			var e gatewayext.AuditEntry
			if err := json.Unmarshal(raw, &e); err != nil {
				t.Fatalf("audit entry %s: %v", raw, err)
			}
			if e.Seq <= since {
				continue
			}
			last = max(last, e.Seq)
			if match != nil && match(e) {
				return last
			}
		}
		if match == nil {
			return last
		}
		if time.Now().After(deadline) {
			t.Fatalf("no audit entry after seq %d matched; the log has %d entries since", since, len(res.Entries))
		}
		time.Sleep(20 * time.Millisecond) // a poll of the log, which has no notification
	}
}

// TestPendingOnAdminsBench: an agent's write of the high-risk heater
// waits for an admin; the admin's bench, open before the request (the
// Hub's notification), marks the heater "Waiting for approval (agent bot
// asked for true, now false)", with the way to the queue; so does the
// page loaded again (the Hub's listing). A rejection from elsewhere
// clears it.
func TestPendingOnAdminsBench(t *testing.T) {
	t.Parallel()
	g := newBench(t)
	admin := g.adminToken(t)
	c := g.dial(t, admin)
	agent := g.dial(t, g.addToken(t, "bot", "agent", "control_low"))
	p := logIn(t, g, admin)
	p.waitText(deviceHook("sim.heater", "value"), "^false$")
	p.do(chromedp.WaitNotPresent(deviceHook("sim.heater", "pending")))

	res, err := agent.Write(context.Background(), "sim.heater", true, "preheat for run 7")
	if err != nil || res.Status != "pending" || res.Confirmation == nil {
		t.Fatalf("the agent's write of sim.heater: %+v, %v; want pending", res, err)
	}
	id := res.Confirmation.ID
	want := `^Waiting for approval \(agent bot asked for true, now false\) · ` + id + `, \d+ s left · approve or reject$`
	p.waitText(deviceHook("sim.heater", "pending"), want)
	p.screenshots("bench-pending")

	p.do(chromedp.Reload(), chromedp.WaitVisible(deviceHook("sim.heater", "")))
	p.waitText(hook("conn-status"), "^connected$")
	p.waitText(deviceHook("sim.heater", "pending"), want)

	if _, err := c.Reject(context.Background(), id, "not now"); err != nil {
		t.Fatalf("reject %s: %v", id, err)
	}
	p.do(chromedp.WaitNotPresent(deviceHook("sim.heater", "pending")))
	p.do(chromedp.Click(hook("nav-confirmations")))
	p.waitText(chromedp.CSS(fmt.Sprintf(`[data-test="confirmation"][data-id=%q]`, id)), `rejected by operator admin`)
}

// TestPendingWithUnits: with the fan made high risk (configuration), an
// agent's write of 40 waits; the fan's card says "asked for 40 %, now
// 0 %" and the queue's card "asks: 40 % · now: 0 %": values with their
// units wherever the console shows them.
func TestPendingWithUnits(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	config := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(config, []byte("board: sim\ndevices:\n  sim.fan: {risk: high}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, t.TempDir(), "127.0.0.1:0", "127.0.0.1:0", "--config", config)
	agent := g.dial(t, g.addToken(t, "bot", "agent", "control_low"))
	p := logIn(t, g, g.adminToken(t))
	p.waitText(deviceHook("sim.fan", "value"), "^0 %$")

	res, err := agent.Write(context.Background(), "sim.fan", 40, "more air")
	if err != nil || res.Status != "pending" || res.Confirmation == nil {
		t.Fatalf("the agent's write of sim.fan: %+v, %v; want pending", res, err)
	}
	p.waitText(deviceHook("sim.fan", "pending"), `^Waiting for approval \(agent bot asked for 40 %, now 0 %\) · `+res.Confirmation.ID)
	p.do(chromedp.Click(deviceHook("sim.fan", "pending-review")), chromedp.WaitVisible(hook("confirmations")))
	item := fmt.Sprintf(`[data-test="confirmation"][data-id=%q]`, res.Confirmation.ID)
	p.waitText(chromedp.CSS(item+` [data-test="asked"]`), `^40 %$`)
	p.waitText(chromedp.CSS(item+` [data-test="current"]`), `^0 %$`)
}
