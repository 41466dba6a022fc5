package console

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// get serves one request of method to h and returns the recorded answer.
func get(t *testing.T, h http.Handler, method, target string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// checkSecurityHeaders fails unless w carries every header that each
// console answer must carry.
func checkSecurityHeaders(t *testing.T, target string, w *httptest.ResponseRecorder) {
	t.Helper()
	h := w.Header()
	csp := h.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'self'", "script-src 'self'", "frame-ancestors 'none'", "form-action 'none'", "connect-src 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("%s: Content-Security-Policy %q lacks %q", target, csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-") {
		t.Errorf("%s: Content-Security-Policy %q allows something unsafe", target, csp)
	}
	for name, want := range map[string]string{
		"X-Content-Type-Options": "nosniff",
		"Referrer-Policy":        "no-referrer",
		"X-Frame-Options":        "DENY",
	} {
		if got := h.Get(name); got != want {
			t.Errorf("%s: %s = %q; want %q", target, name, got, want)
		}
	}
}

func TestServeEmbedded(t *testing.T) {
	h, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, target string
		status         int
		contentType    string
		body           string // a part of the body
	}{
		{"GET", "/", 200, "text/html; charset=utf-8", `<script type="module" src="app.js">`},
		{"GET", "/index.html", 200, "text/html; charset=utf-8", "<title>"},
		{"HEAD", "/", 200, "text/html; charset=utf-8", ""},
		{"GET", "/app.js", 200, "text/javascript; charset=utf-8", "sessionStorage"},
		{"GET", "/hub.js", 200, "text/javascript; charset=utf-8", "hal/initialize"},
		{"GET", "/style.css", 200, "text/css; charset=utf-8", "prefers-color-scheme"},
		{"GET", "/favicon.svg", 200, "image/svg+xml", "<svg"},
		{"GET", "/vendor/htm/standalone.module.js", 200, "text/javascript; charset=utf-8", "export{"},
		{"GET", "/vendor/uplot/uPlot.iife.min.js", 200, "text/javascript; charset=utf-8", "uPlot"},
		{"GET", "/vendor/uplot/uPlot.min.css", 200, "text/css; charset=utf-8", ".uplot"},
		{"GET", "/vendor/htm/LICENSE", 200, "text/plain; charset=utf-8", "Apache License"},
		{"GET", "/vendor/VENDOR.md", 404, "", ""}, // in the tree, not in the binary
		{"GET", "/vendor/vendor.json", 404, "", ""},
		{"GET", "/nope.html", 404, "text/plain; charset=utf-8", "not found"},
		{"GET", "/vendor", 404, "", ""},
		{"GET", "/vendor/", 404, "", ""},
		{"GET", "/vendor/htm/", 404, "", ""},
		{"GET", "/vendor//htm/LICENSE", 404, "", ""},
		{"GET", "/vendor/../index.html", 404, "", ""},
		{"GET", "/.git/config", 404, "", ""},
		{"GET", "/index.html/", 404, "", ""},
	} {
		w := get(t, h, tc.method, tc.target)
		checkSecurityHeaders(t, tc.target, w)
		if w.Code != tc.status {
			t.Errorf("%s %s: status %d; want %d", tc.method, tc.target, w.Code, tc.status)
			continue
		}
		if ct := w.Header().Get("Content-Type"); tc.contentType != "" && ct != tc.contentType {
			t.Errorf("%s %s: Content-Type %q; want %q", tc.method, tc.target, ct, tc.contentType)
		}
		if !strings.Contains(w.Body.String(), tc.body) {
			t.Errorf("%s %s: body lacks %q", tc.method, tc.target, tc.body)
		}
		if tc.status == 200 && (w.Header().Get("ETag") == "" || w.Header().Get("Cache-Control") != "no-cache") {
			t.Errorf("%s %s: ETag %q, Cache-Control %q; want an ETag and no-cache", tc.method, tc.target, w.Header().Get("ETag"), w.Header().Get("Cache-Control"))
		}
	}
}

// A browser that has a file revalidates it by its ETag and gets 304, with
// the security headers still on.
func TestServeNotModified(t *testing.T) {
	h, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	etag := get(t, h, "GET", "/vendor/uplot/uPlot.iife.min.js").Header().Get("ETag")
	w := get(t, h, "GET", "/vendor/uplot/uPlot.iife.min.js", "If-None-Match", etag)
	if w.Code != http.StatusNotModified || w.Body.Len() != 0 {
		t.Errorf("revalidate with %s: status %d, %d bytes; want 304 and none", etag, w.Code, w.Body.Len())
	}
	checkSecurityHeaders(t, "304", w)
	if other := get(t, h, "GET", "/app.js").Header().Get("ETag"); other == etag {
		t.Errorf("two files share the ETag %s", etag)
	}
}

func TestFileName(t *testing.T) {
	for _, tc := range []struct {
		path, want string
		ok         bool
	}{
		{"/", "index.html", true},
		{"/app.js", "app.js", true},
		{"/vendor/htm/LICENSE", "vendor/htm/LICENSE", true},
		{"", "", false},
		{"app.js", "", false},
		{"/vendor/", "", false},
		{"//app.js", "", false},
		{"/./app.js", "", false},
		{"/../app.js", "", false},
		{"/vendor/../app.js", "", false},
		{"/.env", "", false},
		{"/vendor/.cache/x", "", false},
	} {
		got, ok := fileName(tc.path)
		if got != tc.want || ok != tc.ok {
			t.Errorf("fileName(%q) = %q, %v; want %q, %v", tc.path, got, ok, tc.want, tc.ok)
		}
	}
}

func TestConnectSources(t *testing.T) {
	for _, tc := range []struct{ host, want string }{
		{"127.0.0.1:7750", "'self' ws://127.0.0.1:7750 wss://127.0.0.1:7750"},
		{"bench-pi.local", "'self' ws://bench-pi.local wss://bench-pi.local"},
		{"[::1]:7750", "'self'"},
		{"", "'self'"},
		{"a b", "'self'"},
		{"host;script-src *", "'self'"},
		{"host:", "'self'"},
		{"host:77x", "'self'"},
		{"host:123456", "'self'"},
	} {
		if got := connectSources(tc.host); got != tc.want {
			t.Errorf("connectSources(%q) = %q; want %q", tc.host, got, tc.want)
		}
	}
}

func TestContentType(t *testing.T) {
	for name, want := range map[string]string{
		"index.html":      "text/html; charset=utf-8",
		"a/b.mjs":         "text/javascript; charset=utf-8",
		"x.json":          "application/json",
		"icon.png":        "image/png",
		"vendor/x/NOTICE": "text/plain; charset=utf-8",
		"font.woff2":      "application/octet-stream",
	} {
		if got := contentType(name); got != want {
			t.Errorf("contentType(%q) = %q; want %q", name, got, want)
		}
	}
}
