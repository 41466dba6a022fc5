package browser

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// notifySpy stands in for the browser's Notification before the page's
// scripts run: permission already granted, each notification recorded,
// and the tab hidden (the console notifies only then; a headless browser
// shows no notification a test could see).
const notifySpy = `(() => {
	window.__notes = [];
	window.Notification = class {
		static permission = "granted";
		static requestPermission() { return Promise.resolve("granted"); }
		constructor(title, opts) { window.__notes.push(title + ": " + (opts && opts.body)); }
	};
	Object.defineProperty(document, "hidden", { get: () => true });
})();`

// TestConfirmationNotifies: with notifications allowed and the tab hidden,
// an agent's pending write raises a browser notification naming the
// device, the value and who asked, and the tab's title counts it.
func TestConfirmationNotifies(t *testing.T) {
	g := newBench(t)
	agent := g.dial(t, g.addToken(t, "bot", "agent", "control_low"))
	p := logIn(t, g, g.adminToken(t))
	spy := chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: notifySpy})
		return err
	})
	p.do(spy, chromedp.Reload(), chromedp.WaitVisible(deviceHook("sim.led", "")))
	p.waitText(hook("conn-status"), "^connected$")

	if res, err := agent.Write(context.Background(), "sim.heater", true, "preheat"); err != nil || res.Status != "pending" {
		t.Fatalf("the agent's write of sim.heater: %+v, %v; want pending", res, err)
	}
	const noted = `() => window.__notes.length > 0 ? window.__notes : null`
	notes, err := chromedp.Run(p.ctx, chromedp.PollFunction[[]string](noted,
		chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(waitLong)))
	if err != nil || len(notes) != 1 || !strings.Contains(notes[0], "sim.heater = true") || !strings.Contains(notes[0], "agent bot") {
		t.Fatalf("notifications %q (%v); want one for the agent's sim.heater = true", notes, err)
	}
	const counted = `() => document.title.startsWith("(1)") ? [document.title] : null`
	if _, err := chromedp.Run(p.ctx, chromedp.PollFunction[[]string](counted,
		chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(waitLong))); err != nil {
		t.Errorf("the tab's title is %q (%v); want it to count the pending request", eval[string](p, `document.title`), err)
	}
}
