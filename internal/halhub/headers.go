package halhub

import "net/http"

// securityHeaders are on every answer of the HTTP and HTTPS listeners:
// the pages, /healthz, /metrics, /mcp, the WebSocket's refusals, and the
// mux's own redirects (a path it cleans, "/../index.html") and errors
// (404, 405). None of these answers is a page to run: the policy lets a
// browser load nothing from them and frame none of them. The console
// replaces the policy with its page's own (package console), keeping the
// rest.
var securityHeaders = [...][2]string{
	{"Content-Security-Policy", "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"},
	{"X-Content-Type-Options", "nosniff"},
	{"Referrer-Policy", "no-referrer"},
	{"X-Frame-Options", "DENY"},
	{"Cross-Origin-Opener-Policy", "same-origin"},
	{"Cross-Origin-Resource-Policy", "same-origin"},
}

// withSecurityHeaders sets securityHeaders before next answers, so that
// whatever answers — a route, or the mux itself — sends them.
func withSecurityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		for _, kv := range securityHeaders {
			h.Set(kv[0], kv[1])
		}
		next.ServeHTTP(w, r)
	})
}
