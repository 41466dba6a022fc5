package console_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/openhal/gateway/internal/console"
	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/internal/halhub/hubtest"
)

// serveHub serves a real Hub's HTTP handler with the embedded console, as
// the gateway's HTTP listener does, and returns its base URL and tokens.
func serveHub(t *testing.T) (base string, b *hubtest.Bench) {
	t.Helper()
	b = hubtest.New(t)
	web, err := console.New(console.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(b.Hub().Handler(halhub.HTTPOptions{Console: web}))
	t.Cleanup(srv.Close)
	return srv.URL, b
}

func request(t *testing.T, method, url, token string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

// The console at / leaves the Hub's own routes as they were.
func TestConsoleBesideHub(t *testing.T) {
	base, b := serveHub(t)
	for _, tc := range []struct {
		method, path, token string
		status              int
		body                string // a part of it
		console             bool   // carries the console's CSP
	}{
		{"GET", "/", "", 200, `<script type="module" src="app.js">`, true},
		{"GET", "/app.js", "", 200, "useConnection", true},
		{"GET", "/bench.js", "", 200, "hal/devices/list", true},
		{"GET", "/missing.js", "", 404, "not found", true},
		{"GET", "/hal/x", "", 404, "not found", true},
		{"GET", "/healthz", "", 200, "ok", false},
		{"GET", "/metrics", "", 401, "bearer token", false},
		{"GET", "/metrics", b.Admin, 200, "# TYPE", false},
		{"POST", "/", "", 405, "", false},
		{"POST", "/hal", "", 405, "", false},
		{"GET", "/hal", "", 426, "", false}, // not an upgrade: the Hub's WebSocket handler answers
	} {
		resp, body := request(t, tc.method, base+tc.path, tc.token)
		if resp.StatusCode != tc.status || !strings.Contains(body, tc.body) {
			t.Errorf("%s %s: %d %q; want %d with %q", tc.method, tc.path, resp.StatusCode, body, tc.status, tc.body)
		}
		csp := resp.Header.Get("Content-Security-Policy")
		if tc.console != strings.Contains(csp, "default-src 'self'") {
			t.Errorf("%s %s: Content-Security-Policy %q; want the console's: %v", tc.method, tc.path, csp, tc.console)
		}
	}
}

// The page's WebSocket (its own origin) and a client sending no Origin
// reach the Hub; a page of another site is refused before any message.
func TestConsoleOriginCheck(t *testing.T) {
	base, b := serveHub(t)
	wsURL := "ws" + strings.TrimPrefix(base, "http") + "/hal"
	for _, tc := range []struct {
		origin string
		ok     bool
	}{
		{"", true},
		{base, true},
		{"http://evil.example", false},
		{"null", false},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		h := http.Header{}
		if tc.origin != "" {
			h.Set("Origin", tc.origin)
		}
		c, resp, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPHeader: h})
		switch {
		case !tc.ok && err == nil:
			c.CloseNow()
			t.Errorf("Origin %q: upgraded; want refused", tc.origin)
		case !tc.ok && (resp == nil || resp.StatusCode != http.StatusForbidden):
			t.Errorf("Origin %q: %v; want 403", tc.origin, err)
		case tc.ok && err != nil:
			t.Errorf("Origin %q: %v; want upgraded", tc.origin, err)
		case tc.ok:
			initialize(ctx, t, c, b.Admin)
			c.CloseNow()
		}
		cancel()
	}
}

// initialize runs hal/initialize with token as the page does (the token
// in params) and fails unless the Hub accepts it.
func initialize(ctx context.Context, t *testing.T, c *websocket.Conn, token string) {
	t.Helper()
	msg := `{"jsonrpc":"2.0","id":1,"method":"hal/initialize","params":{"protocolVersion":"0.1","clientInfo":{"name":"gateway-console","version":"0.1"},"token":` + quote(token) + `}}`
	if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	_, data, err := c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var answer struct {
		Result struct {
			Principal struct{ Name string }
		}
		Error *struct{ Message string }
	}
	if err := json.Unmarshal(data, &answer); err != nil || answer.Error != nil || answer.Result.Principal.Name != "admin" {
		t.Errorf("hal/initialize: %s; want the admin principal", data)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
