package halhub

import (
	"bufio"
	"bytes"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/clock/clocktest"
)

// busyConns opens n connections to the Hub's HTTP listener from `from`,
// each in the middle of a request (its headers not yet ended), and waits
// until the Hub holds them all.
func (th *testHub) busyConns(t *testing.T, from string, n int) {
	t.Helper()
	net0, _ := th.hub.Unauthenticated()
	addr := strings.TrimPrefix(th.httpURL, "http://")
	for range n {
		c, err := dialFrom(from, addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: gw\r\n")
	}
	waitFor(t, 5*time.Second, "the hub to hold the busy connections", func() bool {
		n1, _ := th.hub.Unauthenticated()
		return n1 == net0+n
	})
}

// Spec §2: a connection to the HTTP listener past its address's budget,
// none of the address's connections idle, is answered 503 with
// Retry-After and the security headers, counted; the client reads the
// whole answer, then the end of the connection (no reset).
func TestRefusedHTTPAnswered(t *testing.T) {
	t.Parallel()
	th := newTestHub(t, func(o *Options) { o.Limits.MaxUnauthenticatedPerPeer = 2 })
	th.busyConns(t, "127.0.0.1", 2)
	c, err := net.Dial("tcp", strings.TrimPrefix(th.httpURL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: gw\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("the refused connection's answer: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("the 503's body: %v", err)
	}
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "2" || !resp.Close {
		t.Errorf("answer %d, Retry-After %q, close %v; want 503, 2, true", resp.StatusCode, resp.Header.Get("Retry-After"), resp.Close)
	}
	wantSecurityHeaders(t, "the 503", resp.Header)
	if !bytes.Contains(body, []byte(`<meta http-equiv="refresh" content="2">`)) {
		t.Errorf("the 503's page does not try again by itself:\n%s", body)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("after the 503: %v, want the end of the connection", err)
	}
	waitFor(t, 5*time.Second, "the 503 counted", func() bool { return th.hub.stats.refusedBusy.Load() == 1 })
	if got := th.hub.stats.refused.Load(); got != 1 {
		t.Errorf("%d refused at accept, want 1", got)
	}
}

// Spec §2: a connection past its address's budget, none of the
// address's connections idle, waits for room: as soon as one of them
// finishes its request and goes idle, the newcomer takes its place and
// is served. Nothing is refused.
func TestWaitForRoom(t *testing.T) {
	t.Parallel()
	th := newTestHub(t, func(o *Options) { o.Limits.MaxUnauthenticatedPerPeer = 2 })
	th.busyConns(t, "127.0.0.1", 1)
	addr := strings.TrimPrefix(th.httpURL, "http://")
	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	io.WriteString(slow, "GET /healthz HTTP/1.1\r\nHost: gw\r\n") // the budget's second, busy
	waitFor(t, 5*time.Second, "two held", func() bool { n, _ := th.hub.Unauthenticated(); return n == 2 })

	third, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	io.WriteString(third, "GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n")
	waitFor(t, 5*time.Second, "the third waiting", func() bool {
		r := th.hub.refusals
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.held == 1
	})
	io.WriteString(slow, "\r\n") // its request ends: it is answered, then idle
	for _, c := range []net.Conn{slow, third} {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%v %v, want both answered 200", resp, err)
		}
	}
	if w, r := th.hub.stats.waited.Load(), th.hub.stats.refused.Load(); w != 1 || r != 0 {
		t.Errorf("%d admitted after waiting, %d refused; want 1 and 0", w, r)
	}
}

// wantSecurityHeaders checks the headers every answer of the HTTP
// listener carries (headers.go).
func wantSecurityHeaders(t *testing.T, what string, h http.Header) {
	t.Helper()
	for _, kv := range securityHeaders {
		if kv[0] == "Content-Security-Policy" {
			if !strings.Contains(h.Get(kv[0]), "frame-ancestors 'none'") {
				t.Errorf("%s: %s %q", what, kv[0], h.Get(kv[0]))
			}
			continue
		}
		if h.Get(kv[0]) != kv[1] {
			t.Errorf("%s: %s %q, want %q", what, kv[0], h.Get(kv[0]), kv[1])
		}
	}
}

// Connections past their budget cost the gateway a bounded number of
// goroutines, however many come and however long they stay: of 300 from
// one address, each sending a request and then neither reading nor
// closing, at most maxHeldPerPeer are held (waiting for room, then
// answered 503), the others closed at once, and each within admitWait
// and refuseWithin.
// Not parallel: it counts the process's goroutines.
func TestRefusedHTTPFlood(t *testing.T) {
	th := newTestHub(t, func(o *Options) { o.Limits.MaxUnauthenticatedPerPeer = 1 })
	th.busyConns(t, "127.0.0.1", 1)
	g0 := runtime.NumGoroutine()
	addr := strings.TrimPrefix(th.httpURL, "http://")
	const flood = 300
	conns := make([]net.Conn, 0, flood)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	peak := 0
	for range flood {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: gw\r\n\r\n")
		peak = max(peak, runtime.NumGoroutine()-g0)
	}
	waitFor(t, 5*time.Second, "every flooding connection refused", func() bool { return th.hub.stats.refused.Load() == flood })
	var wg sync.WaitGroup
	var mu sync.Mutex
	answered := 0
	for _, c := range conns {
		wg.Go(func() {
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			b, err := io.ReadAll(c)
			if err != nil && !isReset(err) {
				t.Errorf("a refused connection was not closed: %v", err)
			}
			if len(b) > 0 {
				mu.Lock()
				answered++
				mu.Unlock()
			}
		})
		peak = max(peak, runtime.NumGoroutine()-g0-flood) // the readers' own aside
	}
	wg.Wait()
	t.Logf("%d of %d refused connections answered 503; at most %d more goroutines in the gateway at once", answered, flood, peak)
	if peak > maxHeldPerPeer+4 {
		t.Errorf("%d goroutines more at once while refusing, want at most about %d", peak, maxHeldPerPeer)
	}
	if answered == 0 || answered > maxHeldPerPeer {
		t.Errorf("%d refused connections answered, want 1 to %d", answered, maxHeldPerPeer)
	}
	waitFor(t, 5*time.Second, "the answers counted", func() bool { return th.hub.stats.refusedBusy.Load() == uint64(answered) })
}

// A refusing peer is logged at most once a minute, the next line saying
// how many were refused meanwhile; each peer on its own.
func TestRefusalLog(t *testing.T) {
	t.Parallel()
	clk := clocktest.NewFake(time.Unix(1000, 0))
	var buf syncBuffer
	th := newTestHub(t, func(o *Options) {
		o.Clock = clk
		o.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: dropTime}))
	})
	h := th.hub
	for range 5 {
		h.logRefusal("http", "192.0.2.1", boundPeer)
		clk.Advance(10 * time.Second)
	}
	h.logRefusal("wss", "192.0.2.2", boundTotal)
	clk.Advance(20 * time.Second) // 70 s after the first line
	h.logRefusal("http", "192.0.2.1", boundPeer)
	want := []string{
		`level=WARN msg="connection refused: its peer has as many connections not yet authenticated as one peer may, none of them idle" remote=192.0.2.1 listener=http limit=8 refused_since_last_line=0`,
		`level=WARN msg="connection refused: the peers together have as many connections not yet authenticated as the gateway takes, none of them idle" remote=192.0.2.2 listener=wss limit=64 refused_since_last_line=0`,
		`level=WARN msg="connection refused: its peer has as many connections not yet authenticated as one peer may, none of them idle" remote=192.0.2.1 listener=http limit=8 refused_since_last_line=4`,
	}
	if got := strings.Split(strings.TrimSpace(buf.String()), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// syncBuffer is a bytes.Buffer for a logger used from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func dropTime(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}
