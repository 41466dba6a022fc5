package browser

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// storage is what the page keeps: sessionStorage, localStorage and
// cookies as one JSON text, and the address it shows.
const storage = `JSON.stringify({session: {...sessionStorage}, local: {...localStorage}, cookie: document.cookie, url: location.href})`

// TestLogin: a token the gateway does not know shows the error and leaves
// nothing stored (not in the tab, not in the URL); the admin token shows
// the devices and is kept in this tab's sessionStorage only; log out
// forgets it.
func TestLogin(t *testing.T) {
	g := newBench(t)
	p := newPage(t)
	p.do(chromedp.Navigate(g.url()), chromedp.WaitVisible(hook("login-token")))
	empty := eval[string](p, storage)

	const bad = "gw-not-a-token-0000000000"
	p.fill(hook("login-token"), bad)
	p.do(chromedp.Click(hook("login-submit")))
	p.waitText(hook("login-error"), "does not know this token")
	p.do(chromedp.WaitVisible(hook("login-token")))
	if now := eval[string](p, storage); now != empty {
		t.Errorf("after a refused token the page keeps %s; want what it had before, %s", now, empty)
	}

	admin := g.adminToken(t)
	p.fill(hook("login-token"), admin)
	p.do(chromedp.Click(hook("login-submit")),
		chromedp.WaitVisible(deviceHook("sim.led", "")))
	p.do(chromedp.WaitNotPresent(hook("login-error")))
	kept := eval[string](p, storage)
	if strings.Count(kept, admin) != 1 || !strings.Contains(kept, `"session":{"gateway.token":"`+admin+`"}`) {
		t.Errorf("logged in, the page keeps %s; want the token once, in sessionStorage", kept)
	}

	p.do(chromedp.Click(hook("logout")), chromedp.WaitVisible(hook("login-token")))
	if now := eval[string](p, storage); now != empty {
		t.Errorf("after log out the page keeps %s; want %s", now, empty)
	}
}
