// Package browsertest drives the operator console (console/web) in a real
// browser, Debian's chromium headless, against a gateway binary on the
// sim board: the tests log in, watch values arrive, approve an agent's
// write, press STOP and restart the gateway under the page, as an operator
// would (docs/testing.md, "The browser tier").
//
// It is a module of its own so that chromedp, which needs Go 1.25, stays
// out of the gateway's module, which builds with Go 1.24.0.
package browsertest
