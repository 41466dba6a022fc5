package gateway_test

// Whole-binary test of the security headers (issue 28): every answer of
// the HTTP listener carries them, whoever answers — the console, the
// Hub's routes, the MCP endpoint, net/http's mux redirecting a path it
// cleans or refusing a method, admission refusing a connection (503,
// binary_keepalive_test.go).

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// securityHeaders are the headers every answer carries, with their
// values; the policy is checked apart (the console's pages have their
// own).
var securityHeaders = map[string]string{
	"X-Content-Type-Options":       "nosniff",
	"Referrer-Policy":              "no-referrer",
	"X-Frame-Options":              "DENY",
	"Cross-Origin-Opener-Policy":   "same-origin",
	"Cross-Origin-Resource-Policy": "same-origin",
}

// wantSecurityHeaders checks h against securityHeaders, and that its
// Content-Security-Policy forbids framing.
func wantSecurityHeaders(t *testing.T, what string, h http.Header) {
	t.Helper()
	for k, v := range securityHeaders {
		if h.Get(k) != v {
			t.Errorf("%s: %s %q, want %q", what, k, h.Get(k), v)
		}
	}
	if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("%s: Content-Security-Policy %q, want one with frame-ancestors 'none'", what, csp)
	}
}

// TestBinarySecurityHeaders asks the HTTP listener for every kind of
// answer it gives — a page, 304, the mux's redirect of `/../index.html`,
// 404, 405, 401 from /metrics and /mcp, /healthz, a WebSocket refused for
// its Origin — each on a raw connection, so that nothing is followed or
// hidden, and checks the headers on each. On the old code the redirect,
// the 405 and the Hub's own answers had none of them.
func TestBinarySecurityHeaders(t *testing.T) {
	g := startGateway(t, t.TempDir(), "--mcp")
	etag := rawGet(t, g, "GET /app.js HTTP/1.1\r\nHost: %s\r\n\r\n").Header.Get("ETag")
	if etag == "" {
		t.Fatal("the console's app.js has no ETag")
	}
	tests := []struct {
		name, request string
		status        int
	}{
		{"the console's page", "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", http.StatusOK},
		{"a file not modified", "GET /app.js HTTP/1.1\r\nHost: %s\r\nIf-None-Match: " + etag + "\r\n\r\n", http.StatusNotModified},
		{"a path the mux cleans", "GET /../index.html HTTP/1.1\r\nHost: %s\r\n\r\n", http.StatusTemporaryRedirect},
		{"a path the mux cleans (dot)", "GET /./app.js HTTP/1.1\r\nHost: %s\r\n\r\n", http.StatusTemporaryRedirect},
		{"a missing file", "GET /nope.js HTTP/1.1\r\nHost: %s\r\n\r\n", http.StatusNotFound},
		{"a method the route has not", "POST /healthz HTTP/1.1\r\nHost: %s\r\nContent-Length: 0\r\n\r\n", http.StatusMethodNotAllowed},
		{"/metrics without a token", "GET /metrics HTTP/1.1\r\nHost: %s\r\n\r\n", http.StatusUnauthorized},
		{"/mcp without a token", "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", http.StatusUnauthorized},
		{"/healthz", "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", http.StatusOK},
		{"a WebSocket from another site", "GET /hal HTTP/1.1\r\nHost: %s\r\nOrigin: http://evil.example\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n" +
			"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n", http.StatusForbidden},
	}
	for _, tc := range tests {
		resp := rawGet(t, g, tc.request)
		if resp.StatusCode != tc.status {
			t.Errorf("%s: %d, want %d", tc.name, resp.StatusCode, tc.status)
		}
		wantSecurityHeaders(t, fmt.Sprintf("%s (%d)", tc.name, resp.StatusCode), resp.Header)
	}
	// The console's pages keep their own policy: scripts of its own.
	if csp := rawGet(t, g, tests[0].request).Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("the console's page: Content-Security-Policy %q, want the page's own", csp)
	}
}

// rawGet sends request (its %s is the gateway's address, for Host) on a
// connection of its own and returns the answer, read whole.
func rawGet(t *testing.T, g *gateway, request string) *http.Response {
	t.Helper()
	c := dialHTTP(t, g.httpAddr)
	fmt.Fprintf(c.c, request, g.httpAddr)
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		t.Fatalf("%q: %v", strings.SplitN(request, "\r\n", 2)[0], err)
	}
	resp.Body.Close()
	return resp
}
