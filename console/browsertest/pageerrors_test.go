package browsertest

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// pageErrors collects what the page's scripts report while a test runs:
// uncaught exceptions (a bug of the page, whatever the test checks) and
// console errors and warnings (worth reading when a test fails).
type pageErrors struct {
	mu         sync.Mutex
	exceptions map[int64]string // by exception id: a promise's rejection handled late is revoked
	console    []string
}

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
		e.console = append(e.console, fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " ")))
	}
}

// report logs the console's lines and fails the test for each exception.
func (e *pageErrors) report(t *testing.T) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range e.console {
		t.Log("page " + s)
	}
	for _, s := range e.exceptions {
		t.Errorf("the page threw: %s", s)
	}
}
