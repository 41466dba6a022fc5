package console

import (
	"net/http"
	"strings"
)

// policy is the Content Security Policy of every console response: the
// page runs only scripts and styles from the gateway's own files (none
// inline, no eval), connects only to the gateway, cannot be framed (no
// clickjacking of the STOP or an approval) and submits no form anywhere
// (the login form is handled by script: were it ever submitted, the token
// would land in a URL).
const policy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// setSecurityHeaders sets the headers that every console response carries,
// the 404s included. host is the request's Host.
func setSecurityHeaders(h http.Header, host string) {
	h.Set("Content-Security-Policy", policy+"; connect-src "+connectSources(host))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}

// connectSources lists where the page may connect: its own origin, and
// the WebSocket URLs of the same host spelt out, since browsers that
// predate CSP 3 do not let 'self' match ws: and wss:. A Host that is not
// a plain name or IPv4 address with an optional port (an IPv6 literal,
// which CSP cannot name, or anything odd) gets 'self' alone.
func connectSources(host string) string {
	if !plainHost(host) {
		return "'self'"
	}
	return "'self' ws://" + host + " wss://" + host
}

// plainHost reports whether host is letters, digits, dots and hyphens,
// then optionally a colon and up to 5 digits.
func plainHost(host string) bool {
	name, port, hasPort := strings.Cut(host, ":")
	if name == "" || len(name) > 253 || hasPort && (port == "" || len(port) > 5) {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return false
		}
	}
	for _, c := range port {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
