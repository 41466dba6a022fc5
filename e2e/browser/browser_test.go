package browser

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// The window of every test, and the two sizes of the screenshots.
const (
	desktopW, desktopH = 1280, 800
	phoneW, phoneH     = 390, 844
)

// chromiumPath finds Debian's chromium ($CHROMIUM overrides it). Without
// one the test is skipped, except in CI (CI set, as .ci/run does), where
// a missing browser is a failure: the tier would pass by testing nothing.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	p, err := exec.LookPath("chromium")
	if err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no chromium on PATH, and CI is set: the browser tests must run in CI (apt-get install chromium)")
	}
	t.Skip("no chromium on PATH: browser tests skipped (apt-get install chromium to run them)")
	return ""
}

// page is one headless chromium, with a fresh profile, showing one tab.
type page struct {
	t   *testing.T
	ctx context.Context
}

// newPage starts chromium for the test, with more of its options if
// given; the end of the test closes it and removes its profile. An
// exception the page's scripts leave uncaught fails the test; console
// errors and warnings go to its log.
func newPage(t *testing.T, more ...chromedp.ExecAllocatorOption) *page {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.NoSandbox, // root in CI, and containers without user namespaces
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(desktopW, desktopH),
		chromedp.DisableGPU,
	)
	opts = append(opts, more...)
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	errs := &pageErrors{}
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf), chromedp.WithListener(errs.listen))
	t.Cleanup(func() { errs.report(t) }) // after the browser is closed: cleanups run last first
	t.Cleanup(func() {
		cancel()
		acancel()
	})
	// The first action starts the browser and ties it to its context: it
	// gets ctx itself, not a context with a timeout that would end it.
	watch := chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: cspWatch})
		return err
	})
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(desktopW, desktopH), watch); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	p := &page{t: t, ctx: ctx}
	return p
}

// do runs actions, failing the test on the first error or after waitLong.
func (p *page) do(actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, waitLong)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.t.Fatalf("browser: %v", err)
	}
}

// eval evaluates a JavaScript expression and returns its value.
func eval[T any](p *page, expr string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, waitLong)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		p.t.Fatalf("browser: evaluate %s: %v", expr, err)
	}
	return v
}

// hook is the CSS selector of a data-test hook (docs/console.md).
func hook(name string) chromedp.CSS {
	return chromedp.CSS(fmt.Sprintf(`[data-test=%q]`, name))
}

// deviceHook is the selector of a hook inside a device's card or row;
// name "" is the card itself.
func deviceHook(id, name string) chromedp.CSS {
	card := fmt.Sprintf(`[data-test="device"][data-device=%q]`, id)
	if name == "" {
		return chromedp.CSS(card)
	}
	return chromedp.CSS(fmt.Sprintf(`%s [data-test=%q]`, card, name))
}

// waitText waits until the text of the first element matching sel matches
// the regular expression pattern (JavaScript syntax), and returns it. It
// polls in the page every 20 ms: a text node's change is no mutation the
// MutationObserver of a mutation poll sees.
func (p *page) waitText(sel chromedp.CSS, pattern string) string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, waitLong+time.Second)
	defer cancel()
	const match = `(sel, pattern) => {
		const e = document.querySelector(sel);
		return e && new RegExp(pattern).test(e.textContent) ? [e.textContent] : null;
	}` // an array, truthy also for an empty text
	text, err := chromedp.Run(ctx, chromedp.PollFunction[[]string](match,
		chromedp.WithPollingArgs(string(sel), pattern),
		chromedp.WithPollingInterval(20*time.Millisecond),
		chromedp.WithPollingTimeout(waitLong)))
	if err != nil {
		now, _ := chromedp.Run(context.WithoutCancel(p.ctx), chromedp.Evaluate[*string](
			fmt.Sprintf(`document.querySelector(%q)?.textContent`, string(sel))))
		shown := "no such element"
		if now != nil {
			shown = fmt.Sprintf("%q", *now)
		}
		p.t.Fatalf("browser: %s never matched /%s/ (%v); it shows %s", sel, pattern, err, shown)
	}
	return text[0]
}

// screenshots writes docs/console/NAME-desktop.png and NAME-phone.png
// when UPDATE_SCREENSHOTS=1, and then gives the page its desktop size back.
func (p *page) screenshots(name string) {
	p.t.Helper()
	p.screenshotsOf(name, "")
}

// screenshotsOf is screenshots of the element sel only (all of it, below
// the fold too); "" is the window.
func (p *page) screenshotsOf(name string, sel chromedp.CSS) {
	p.t.Helper()
	if os.Getenv("UPDATE_SCREENSHOTS") != "1" {
		return
	}
	sizes := []struct {
		suffix string
		w, h   int64
		opts   []chromedp.EmulateViewportOption
	}{
		{"desktop", desktopW, desktopH, nil},
		{"phone", phoneW, phoneH, []chromedp.EmulateViewportOption{chromedp.EmulateMobile}},
	}
	for _, s := range sizes {
		p.do(chromedp.EmulateViewport(s.w, s.h, s.opts...))
		ctx, cancel := context.WithTimeout(p.ctx, waitLong)
		shot := chromedp.CaptureScreenshot()
		if sel != "" {
			shot = chromedp.Screenshot(sel)
		}
		png, err := chromedp.Run(ctx, shot)
		cancel()
		if err != nil {
			p.t.Fatalf("screenshot %s %s: %v", name, s.suffix, err)
		}
		path := filepath.Join("..", "..", "docs", "console", name+"-"+s.suffix+".png")
		if err := os.WriteFile(path, png, 0o644); err != nil {
			p.t.Fatalf("screenshot %s: %v", name, err)
		}
		p.t.Logf("wrote %s", path)
	}
	p.do(chromedp.EmulateViewport(desktopW, desktopH))
}

// fill replaces the text of the input sel with text, typed key by key as
// a person would.
func (p *page) fill(sel chromedp.CSS, text string) {
	p.t.Helper()
	p.do(chromedp.WaitVisible(sel))
	eval[chromedp.Void](p, fmt.Sprintf(`void (document.querySelector(%q).value = "")`, string(sel)))
	p.do(chromedp.SendKeys(sel, text))
}

// logIn opens the console of g in a new browser and logs in with tok; it
// returns once the page is connected and shows sim.led.
func logIn(t *testing.T, g *gateway, tok string) *page {
	t.Helper()
	p := newPage(t)
	p.do(chromedp.Navigate(g.url()))
	p.fill(hook("login-token"), tok)
	p.do(chromedp.Click(hook("login-submit")), chromedp.WaitVisible(deviceHook("sim.led", "")))
	p.waitText(hook("conn-status"), "^connected$")
	return p
}

// not is a pattern (JavaScript syntax) for any text but s.
func not(s string) string {
	return "^(?!" + regexp.QuoteMeta(s) + "$)"
}

// newBench starts a gateway on the sim board for a browser test, once it
// knows that there is a browser to drive: without one, nothing starts.
func newBench(t *testing.T) *gateway {
	t.Helper()
	chromiumPath(t)
	return startGateway(t, t.TempDir(), "127.0.0.1:0", "127.0.0.1:0")
}
