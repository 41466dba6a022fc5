package console

import (
	"io/fs"
	"strings"
	"testing"
)

// The browser tests find the console's elements by their data-test
// attributes (docs/console.md, "Test hooks"): each one is still in the
// page's modules, so that a rename shows here first, without a browser.
func TestPageTestHooks(t *testing.T) {
	files := Files()
	names, err := fs.Glob(files, "*.js")
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, name := range names {
		b, err := fs.ReadFile(files, name)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	src := all.String()
	for _, hook := range []string{
		"login-token", "login-submit", "login-error", "logout", "conn-status",
		"device", "value", "state", "control", "send", "reply", "pending",
		"stop", "stop-banner", "resume", "resume-confirm",
		"confirmations", "confirmation", "approve", "reject", "reason",
		"plot", "adapters", "audit", "audit-entry",
		"about", "about-fingerprint",
	} {
		if !strings.Contains(src, `data-test="`+hook+`"`) {
			t.Errorf(`no element carries data-test="%s"`, hook)
		}
	}
	for _, attr := range []string{"data-device=", "data-id=", "data-series=", `data-test=${"nav-" + v}`} {
		if !strings.Contains(src, attr) {
			t.Errorf("no element carries %s", attr)
		}
	}
	// The views the nav links name, as hash routes.
	for _, view := range []string{"bench", "confirmations", "adapters", "audit"} {
		if !strings.Contains(src, `"`+view+`"`) {
			t.Errorf("view %s is not among the routes", view)
		}
	}
}
