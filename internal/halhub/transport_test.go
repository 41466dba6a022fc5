package halhub

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

// Spec §2: on WebSocket the token comes from the upgrade's bearer header
// or from params.token; both given must agree. A bad bearer never refuses
// the upgrade: hal/initialize answers UNAUTHORIZED.
func TestWebSocketToken(t *testing.T) {
	for _, tc := range []struct {
		name          string
		bearer, param string // "admin" and "agent" stand for those tokens
		principal     string // on success
		reason        string // on UNAUTHORIZED
	}{
		{name: "bearer only", bearer: "admin", principal: "root"},
		{name: "params only", param: "agent", principal: "agent"},
		{name: "both equal", bearer: "agent", param: "agent", principal: "agent"},
		{name: "both differ", bearer: "admin", param: "agent", reason: "token_conflict"},
		{name: "bad bearer", bearer: "gw_unknown", reason: "token_unknown"},
		{name: "bad bearer, good param", bearer: "gw_unknown", param: "admin", reason: "token_conflict"},
		{name: "neither", reason: "token_missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			th := newTestHub(t)
			toks := map[string]string{"admin": th.admin, "agent": th.token(t, "agent", openhal.ScopeRead), "": ""}
			tok := func(s string) string {
				if v, ok := toks[s]; ok {
					return v
				}
				return s
			}
			c := th.dialWS(t, tok(tc.bearer)) // fails the test if the upgrade is refused
			m := c.initWith(tok(tc.param))
			if tc.reason != "" {
				if m.Error == nil || m.Error.Code != openhal.CodeUnauthorized || m.reason() != tc.reason {
					t.Fatalf("got %s, want UNAUTHORIZED %s", m.raw, tc.reason)
				}
				if m := c.call("hal/ping", nil); m.Error == nil || m.Error.Code != openhal.CodeNotInitialized {
					t.Fatalf("after a refused initialize: %s", m.raw)
				}
				return
			}
			var res openhal.InitializeResult
			if m.Error != nil || json.Unmarshal(m.Result, &res) != nil || res.Principal.Name != tc.principal {
				t.Fatalf("got %s, want principal %s", m.raw, tc.principal)
			}
			if m := c.call("hal/ping", nil); m.Error != nil {
				t.Fatalf("after initialize: %s", m.raw)
			}
		})
	}
}

// A conflict is a failed attempt, not the end: the same connection may
// initialize with the bearer alone.
func TestWebSocketTokenConflictThenBearer(t *testing.T) {
	t.Parallel()
	th := newTestHub(t)
	c := th.dialWS(t, th.admin)
	if m := c.initWith(th.token(t, "agent", openhal.ScopeRead)); m.reason() != "token_conflict" {
		t.Fatalf("got %s, want token_conflict", m.raw)
	}
	var res openhal.InitializeResult
	if m := c.initWith(""); m.Error != nil || json.Unmarshal(m.Result, &res) != nil || res.Principal.Scope != openhal.ScopeAdmin {
		t.Fatalf("initialize with the bearer: %s", m.raw)
	}
}

// get fetches url with an optional bearer token.
func get(t *testing.T, url, bearer string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := (&http.Client{Timeout: 15 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(body)
}

// Spec §2: /healthz answers 200 "ok" while every part makes progress.
func TestHealthz(t *testing.T) {
	t.Parallel()
	th := newTestHub(t)
	if code, _, body := get(t, th.httpURL+"/healthz", ""); code != http.StatusOK || body != "ok\n" {
		t.Fatalf("/healthz: %d %q, want 200 ok", code, body)
	}
}

// Spec §2: /metrics needs a bearer token of any scope, unless public.
func TestMetricsToken(t *testing.T) {
	t.Parallel()
	th := newTestHub(t)
	reader := th.token(t, "watcher", openhal.ScopeRead)
	for _, tc := range []struct {
		name, bearer string
		want         int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"unknown token", "gw_unknown", http.StatusUnauthorized},
		{"read token", reader, http.StatusOK},
		{"admin token", th.admin, http.StatusOK},
	} {
		code, hdr, body := get(t, th.httpURL+"/metrics", tc.bearer)
		if code != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, code, tc.want)
			continue
		}
		switch code {
		case http.StatusOK:
			if !strings.Contains(body, "\ngateway_hal_connections 0\n") || !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain") {
				t.Errorf("%s: not Prometheus text: %s\n%s", tc.name, hdr.Get("Content-Type"), body)
			}
			if !regexp.MustCompile(`\ngo_goroutines [1-9][0-9]*\n`).MatchString(body) {
				t.Errorf("%s: no go_goroutines (make soak watches it):\n%s", tc.name, body)
			}
		case http.StatusUnauthorized:
			if !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") || strings.Contains(body, "gateway_") {
				t.Errorf("%s: %v %q", tc.name, hdr, body)
			}
		}
	}

	public := httptest.NewServer(th.hub.Handler(HTTPOptions{MetricsPublic: true}))
	defer public.Close()
	if code, _, body := get(t, public.URL+"/metrics", ""); code != http.StatusOK || !strings.Contains(body, "gateway_hal_seq") {
		t.Errorf("public /metrics without a token: %d %q", code, body)
	}
}

// Spec §2: a part that shows no progress makes /healthz 503 naming it;
// the others are not named.
func TestHealthzStuckPart(t *testing.T) {
	t.Parallel()
	th := newTestHub(t)
	srv := httptest.NewServer(th.hub.Handler(HTTPOptions{Probes: map[string]func(context.Context) error{
		"audit":      func(context.Context) error { return errors.New("no progress for 7 s") },
		"supervisor": func(context.Context) error { return nil },
	}}))
	defer srv.Close()
	if code, _, body := get(t, srv.URL+"/healthz", ""); code != http.StatusServiceUnavailable || body != "stuck: audit\n" {
		t.Fatalf("/healthz: %d %q, want 503 naming audit", code, body)
	}
}

// Spec §2: a part that hangs is stuck too, and so is the Hub's own event
// path when a registry subscriber is wedged: /healthz answers 503 naming
// both once the deadline passes. The deadline is the spec's 5 s or the
// request's own if that is sooner; the server here gives each request
// 300 ms (as a proxy in front of it might), so that the test is quick.
func TestHealthzHangingParts(t *testing.T) {
	t.Parallel()
	const deadline = 300 * time.Millisecond
	th := newTestHub(t)
	h := th.hub.Handler(HTTPOptions{Probes: map[string]func(context.Context) error{
		"supervisor": func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() },
		"audit":      func(context.Context) error { return nil },
	}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), deadline)
		defer cancel()
		h.ServeHTTP(w, r.WithContext(ctx))
	}))
	defer srv.Close()
	th.addDevice(t, sensor("bench.temp"))

	// Wedge the event path: a subscriber that blocks holds the registry.
	wedged, unwedge := make(chan struct{}), make(chan struct{})
	unsub := th.reg.Subscribe(func(e device.Event) {
		if e.Device == "bench.temp" {
			close(wedged)
			<-unwedge
		}
	})
	published := make(chan struct{})
	go func() { defer close(published); th.reg.Publish("bench.temp", 1.0, time.Time{}) }()
	waitChan(t, wedged, "the subscriber to wedge the registry")
	defer func() { close(unwedge); <-published; unsub() }()

	start := time.Now()
	code, _, body := get(t, srv.URL+"/healthz", "")
	if code != http.StatusServiceUnavailable || body != "stuck: hub, supervisor\n" {
		t.Fatalf("/healthz: %d %q, want 503 naming hub and supervisor", code, body)
	}
	if d := time.Since(start); d < deadline {
		t.Errorf("stuck parts named after %v, before the deadline %v", d, deadline)
	}
}
