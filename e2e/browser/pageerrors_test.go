package browser

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// pageErrors collects what the page's scripts report while a test runs:
// uncaught exceptions and violations of the page's CSP (bugs of the page,
// whatever the test checks), and console errors and warnings (worth
// reading when a test fails).
type pageErrors struct {
	mu         sync.Mutex
	exceptions map[int64]string // by exception id: a promise's rejection handled late is revoked
	violations []string         // of the page's Content-Security-Policy, reported by cspWatch
	console    []string
}

// cspWatch runs in the page before its own scripts: the console's CSP
// (docs/console.md) blocks inline scripts and styles, eval and other
// origins, and a blocked thing breaks the page only in a real browser, so
// each violation is reported as a console error the listener recognises.
// (Scripts added through the DevTools protocol are not subject to the CSP.)
const cspWatch = `document.addEventListener("securitypolicyviolation",
	(e) => console.error("` + cspMark + `", e.violatedDirective, e.blockedURI, e.sourceFile + ":" + e.lineNumber));`

const cspMark = "CSP violation:"

// listen is a chromedp listener: it runs on the tab's reader and only
// records.
func (e *pageErrors) listen(ev any) {
	switch ev := ev.(type) {
	case *runtime.EventExceptionThrown:
		msg := (&chromedp.ExceptionError{ExceptionDetails: ev.ExceptionDetails}).Error()
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.exceptions == nil {
			e.exceptions = map[int64]string{}
		}
		e.exceptions[ev.ExceptionDetails.ExceptionID] = msg
	case *runtime.EventExceptionRevoked:
		e.mu.Lock()
		defer e.mu.Unlock()
		delete(e.exceptions, ev.ExceptionID)
	case *runtime.EventConsoleAPICalled:
		if ev.Type != runtime.ConsoleAPICalledTypeError && ev.Type != runtime.ConsoleAPICalledTypeWarning {
			return
		}
		args := make([]string, len(ev.Args))
		for i, a := range ev.Args {
			args[i] = string(a.Value)
			if a.Value == nil {
				args[i] = a.Description
			}
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		if len(args) > 0 && args[0] == fmt.Sprintf("%q", cspMark) {
			e.violations = append(e.violations, strings.Join(args[1:], " "))
			return
		}
		e.console = append(e.console, fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " ")))
	}
}

// report logs the console's lines and fails the test for each exception
// and each violation of the CSP.
func (e *pageErrors) report(t *testing.T) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range e.console {
		t.Log("page " + s)
	}
	for _, s := range e.exceptions {
		t.Errorf("the page threw: %s", s)
	}
	for _, s := range e.violations {
		t.Errorf("the page broke its Content-Security-Policy: %s", s)
	}
}
