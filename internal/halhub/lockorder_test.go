package halhub

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/halhub/token"
	"github.com/openhal/gateway/openhal"
)

// Tests of the lock order (locksordering.txt). A deadlock is not what
// the race detector finds: each test drives the two paths of an order
// the file forbids and fails, with the Hub's stacks, when the Hub
// wedges instead of going on.

// A connection whose queue overflows under the Hub's lock (eachAudience,
// fanning a notification out) is closed after the lock is let go: its
// close may take the Hub's lock itself. A WebSocket upgraded on a
// keep-alive connection that an /mcp request admitted (AdmitHTTP) holds
// that request's slot; closing it gives the slot back under Hub.mu, which
// a close under the read lock of the same goroutine would wait for
// forever — with the registry's lock held, wedging every event.
func TestOverflowUnderHubLockClosesAfter(t *testing.T) {
	t.Parallel()
	lim := DefaultLimits()
	lim.QueueLength = 16
	reg := device.NewRegistry(nil)
	h := New(reg, Options{Version: "test", Limits: lim, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	store := token.Open(t.TempDir())
	tok, err := store.Add("agent", openhal.KindAgent, openhal.ScopeRead, nil)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	h.SetTokens(tab)
	srv := httptest.NewUnstartedServer(nil)
	srv.Config = h.HTTPServer(HTTPOptions{MCP: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e, ok := h.tokens.Load().Lookup(bearerToken(r))
		if !ok {
			http.Error(w, "unknown token", http.StatusUnauthorized)
			return
		}
		if err := h.AdmitHTTP(r, e.Principal()); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		}
	})})
	srv.Listener = h.Guard("http", srv.Listener, nil)
	srv.Start()
	wedged := false
	t.Cleanup(func() {
		if !wedged {
			srv.Close()
			h.Close()
		}
	})
	dev := lineSensor("bench.probe")
	if _, err := reg.Add(dev); err != nil {
		t.Fatal(err)
	}

	// One connection, kept alive: /mcp first, then the WebSocket on it.
	conn, err := smallRcvbuf().Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Length: 0\r\n\r\n", srv.Listener.Addr(), tok)
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 16), nil) // reads no further than the answer
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Close {
		t.Fatalf("/mcp: %s, close %v", resp.Status, resp.Close)
	}
	var dials atomic.Int32
	hc := &http.Client{Transport: &http.Transport{
		DialContext: func(context.Context, string, string) (net.Conn, error) {
			if dials.Add(1) > 1 {
				return nil, errors.New("one connection only")
			}
			return conn, nil
		},
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/hal", &websocket.DialOptions{HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	h.mu.RLock()
	slots := h.slots
	h.mu.RUnlock()
	if slots != 1 {
		t.Fatalf("the connection holds %d slots before hal/initialize, want the /mcp request's", slots)
	}
	for _, m := range []string{
		request(1, "hal/initialize", map[string]any{"protocolVersion": "0.1", "clientInfo": map[string]string{"name": "deaf", "version": "1"}, "token": tok}),
		`{"jsonrpc":"2.0","method":"hal/initialized"}`,
		request(2, "hal/ping", nil),
	} {
		if err := c.Write(ctx, websocket.MessageText, []byte(m)); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(m, `"id"`) {
			if _, b, err := c.Read(ctx); err != nil || strings.Contains(string(b), `"error"`) {
				t.Fatalf("%s: %q %v", m, b, err)
			}
		}
	}

	// The client reads no more; states of 4 KiB each, which are never
	// coalesced, fill its socket and then its queue.
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		fault := strings.Repeat("x", 4<<10)
		for i := 0; h.Connections() > 0; i++ {
			reg.SetState(dev.Descriptor().ID, device.StateFault, fmt.Sprint(i, fault))
		}
	}()
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		wedged = true // Close would wait for the locks for ever
		panic("the Hub wedged closing a connection whose queue overflowed:\n" + stacksOf("halhub"))
	}
	if got := h.stats.overflows.Load(); got == 0 {
		t.Errorf("the connection closed, but not for its queue's overflow")
	}
}

// stacksOf returns the stacks of the goroutines that run code of pkg.
func stacksOf(pkg string) string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, pkg) {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}
