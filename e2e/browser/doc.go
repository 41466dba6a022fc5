// Package browser drives the operator console (internal/console/web) in a real
// browser, Debian's chromium headless, against a gateway binary on the
// sim board: the tests log in, watch values arrive, approve an agent's
// write, press STOP and restart the gateway under the page, as an operator
// would (docs/testing.md, "The browser tier").
//
// It is a module of its own so that chromedp and its dependencies, which
// only this tier uses, stay out of the gateway's go.mod and go.sum, which
// every build of the gateway, and of an adapter in a module of its own,
// reads.
package browser
