package gateway_test

// Whole-binary tests of the budget of connections not yet authenticated
// against HTTP keep-alive (openhal-0.1 §2, issue 28): idle keep-alive
// connections of an address give their places to its new connections,
// the longest idle first; only when none is idle is a new one refused,
// with 503 and Retry-After on the HTTP and HTTPS listeners, counted and
// logged once. Real sockets, raw HTTP where a client library would hide
// what came. The helpers are in binary_helpers_test.go and
// binary_admission_test.go.

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// httpConn is a raw keep-alive connection to the gateway's HTTP listener.
type httpConn struct {
	c  net.Conn
	br *bufio.Reader
}

func dialHTTP(t *testing.T, addr string) *httpConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &httpConn{c: c, br: bufio.NewReader(c)}
}

// get sends GET path and reads the whole answer; err is the connection's
// (a reset, or its end) when no answer came.
func (h *httpConn) get(path string) (*http.Response, error) {
	fmt.Fprintf(h.c, "GET %s HTTP/1.1\r\nHost: gateway\r\n\r\n", path)
	h.c.SetReadDeadline(time.Now().Add(waitLong))
	resp, err := http.ReadResponse(h.br, nil)
	if err != nil {
		return nil, err
	}
	_, err = io.ReadAll(resp.Body)
	return resp, err
}

// closedByGateway reports whether the gateway has closed the connection:
// a read sees its end at once (an open idle connection would wait).
func (h *httpConn) closedByGateway() bool {
	h.c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	_, err := h.br.ReadByte()
	return err == io.EOF || isReset(err)
}

// TestBinaryIdleKeepAliveReclaimed: twelve keep-alive connections from
// one address, each idle after its request, and a 13th: every request
// is answered. The budget of connections not yet authenticated (8 per
// address) is kept by closing the address's longest-idle connection for
// each newcomer: the first eight connections sent their requests last to
// first, so the eighth went idle first and is closed first, then the
// seventh... (not the oldest connection). On the old code the ninth was
// reset at accept with no status and no log line.
func TestBinaryIdleKeepAliveReclaimed(t *testing.T) {
	g := startGateway(t, t.TempDir())
	admin := readAdminToken(t, g.dir)
	conns := make([]*httpConn, 8)
	for i := range conns {
		conns[i] = dialHTTP(t, g.httpAddr)
	}
	waitMetrics(t, g, admin, func(m map[string]float64) bool { return m["gateway_hal_connections_unauthenticated"] >= 8 })
	for i := len(conns) - 1; i >= 0; i-- {
		if resp, err := conns[i].get("/healthz"); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("connection %d: %v %v", i+1, resp, err)
		}
		// The gateway marks a connection idle just after its answer: the
		// order of the test is the order the gateway saw.
		waitMetrics(t, g, admin, func(m map[string]float64) bool { return m["gateway_http_connections_idle"] == float64(len(conns)-i) })
	}
	for n := 9; n <= 13; n++ {
		c := dialHTTP(t, g.httpAddr)
		resp, err := c.get("/healthz")
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("keep-alive connection %d from the same address, %d idle: %v %v; want it answered", n, 8, resp, err)
		}
		conns = append(conns, c)
		waitMetrics(t, g, admin, func(m map[string]float64) bool {
			return m["gateway_http_idle_reclaimed_total"] == float64(n-8) && m["gateway_http_connections_idle"] == 8
		})
	}
	var closed []int
	for i, c := range conns {
		if c.closedByGateway() {
			closed = append(closed, i+1)
		}
	}
	if fmt.Sprint(closed) != "[4 5 6 7 8]" {
		t.Errorf("connections closed by the gateway: %v, want [4 5 6 7 8] (the longest idle first: 8, 7, 6, 5, 4)", closed)
	}
	for i, c := range conns {
		if !slices.Contains(closed, i+1) {
			if resp, err := c.get("/healthz"); err != nil || resp.StatusCode != http.StatusOK {
				t.Errorf("connection %d, still open, asked again: %v %v", i+1, resp, err)
			}
		}
	}
	m := waitMetrics(t, g, admin, func(map[string]float64) bool { return true })
	if m["gateway_hal_connections_refused_total"] != 0 || m["gateway_http_idle_reclaimed_total"] != 5 {
		t.Errorf("refused %v, idle closed for newcomers %v; want 0 and 5", m["gateway_hal_connections_refused_total"], m["gateway_http_idle_reclaimed_total"])
	}
}

// isReset reports an error that is the peer resetting the connection.
func isReset(err error) bool {
	return err != nil && (errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE))
}

// TestBinaryBusyAnswered503: with eight connections from one address all
// in use — four in the middle of a request, four WebSockets upgraded and
// not yet initialized — nothing can make room: the ninth HTTP connection
// is answered 503 with Retry-After and the security headers, then closed
// (the client reads the whole answer, then the end: no reset); the same
// over HTTPS after the TLS handshake, and to Go's HTTP client; a TCP
// connection has no status to read and is closed without a byte. Each is
// counted, and the log has one line for the address (at most one a
// minute). Once the busy connections end, a request goes through again.
// On the old code every one of them was reset at accept.
func TestBinaryBusyAnswered503(t *testing.T) {
	t.Parallel()
	g := startGateway(t, t.TempDir(), "--wss", "127.0.0.1:0", "--tls", "127.0.0.1:0")
	wss, _, _ := tlsURLs(t, g)
	wssAddr := strings.TrimSuffix(strings.TrimPrefix(wss, "wss://"), "/hal")
	admin := readAdminToken(t, g.dir)
	var busy []net.Conn
	for range 4 {
		c := dialHTTP(t, g.httpAddr)
		io.WriteString(c.c, "GET /healthz HTTP/1.1\r\nHost: gateway\r\n") // headers not ended
		busy = append(busy, c.c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	var sockets []*websocket.Conn
	for range 4 {
		ws, _, err := websocket.Dial(ctx, g.ws, nil)
		if err != nil {
			t.Fatalf("WebSocket %d: %v", len(sockets)+1, err)
		}
		defer ws.CloseNow()
		sockets = append(sockets, ws)
	}
	waitMetrics(t, g, admin, func(m map[string]float64) bool { return m["gateway_hal_connections_unauthenticated"] >= 8 })
	mark := g.err.len()

	resp, err := dialHTTP(t, g.httpAddr).get("/")
	if err != nil {
		t.Fatalf("the ninth connection (HTTP): %v; want a 503", err)
	}
	wantBusy(t, "the ninth connection (HTTP)", resp)

	tc, err := tls.Dial("tcp", wssAddr, &tls.Config{InsecureSkipVerify: true}) // the gateway's answer is what is tested, not its certificate
	if err != nil {
		t.Fatalf("the ninth connection (HTTPS): %v", err)
	}
	defer tc.Close()
	resp, err = (&httpConn{c: tc, br: bufio.NewReader(tc)}).get("/healthz")
	if err != nil {
		t.Fatalf("the ninth connection (HTTPS): %v; want a 503", err)
	}
	wantBusy(t, "the ninth connection (HTTPS)", resp)

	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	goResp, err := hc.Get("http://" + g.httpAddr + "/healthz")
	if err != nil {
		t.Fatalf("Go's HTTP client: %v; want a 503", err)
	}
	io.Copy(io.Discard, goResp.Body)
	goResp.Body.Close()
	if goResp.StatusCode != http.StatusServiceUnavailable || goResp.Header.Get("Retry-After") != "2" {
		t.Errorf("Go's HTTP client: %d, Retry-After %q", goResp.StatusCode, goResp.Header.Get("Retry-After"))
	}

	line, err := net.Dial("tcp", g.tcpAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer line.Close()
	line.SetReadDeadline(time.Now().Add(waitLong))
	if b, err := io.ReadAll(line); len(b) != 0 || err != nil && !isReset(err) {
		t.Errorf("the ninth connection (TCP): %q %v, want it closed without a byte", b, err)
	}

	m := waitMetrics(t, g, admin, func(m map[string]float64) bool { return m["gateway_http_refused_busy_total"] >= 3 })
	if m["gateway_http_refused_busy_total"] != 3 || m["gateway_hal_connections_refused_total"] != 4 {
		t.Errorf("answered 503: %v, refused: %v; want 3 and 4", m["gateway_http_refused_busy_total"], m["gateway_hal_connections_refused_total"])
	}
	g.err.waitFor(t, mark, `level=WARN msg="connection refused: its peer has as many connections not yet authenticated as one peer may, none of them idle" remote=127.0.0.1 listener=http limit=8 refused_since_last_line=0$`, waitLong)
	if n := strings.Count(g.err.text(), `msg="connection refused`); n != 1 {
		t.Errorf("%d log lines of refusals from one address within a minute, want 1", n)
	}

	for _, c := range busy {
		c.Close()
	}
	for _, ws := range sockets {
		ws.CloseNow()
	}
	deadline := time.Now().Add(waitLong)
	for {
		resp, err := dialHTTP(t, g.httpAddr).get("/healthz")
		if err == nil && resp.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("once the busy connections closed: %v %v", resp, err)
		}
		<-time.After(20 * time.Millisecond) // the gateway sees each close when its read ends
	}
}

// wantBusy checks a refused connection's answer.
func wantBusy(t *testing.T, what string, resp *http.Response) {
	t.Helper()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "2" || !resp.Close {
		t.Errorf("%s: %d, Retry-After %q, close %v; want 503, 2, true", what, resp.StatusCode, resp.Header.Get("Retry-After"), resp.Close)
	}
	wantSecurityHeaders(t, what, resp.Header)
}

// TestBinaryRefusalFloodBounded: from one address, eight busy connections
// and then 500 more to the HTTP listener, each sending a request and
// then neither reading nor closing. What the gateway spends on them stays
// bounded — at most 4 of them held at once (waiting for room, then
// answered 503), the others closed at once — and an admin from another
// address stops the gateway within a second meanwhile.
func TestBinaryRefusalFloodBounded(t *testing.T) {
	g := startGateway(t, t.TempDir())
	admin := readAdminToken(t, g.dir)
	before := waitMetrics(t, g, admin, func(map[string]float64) bool { return true })["go_goroutines"]
	for range 8 {
		c := dialHTTP(t, g.httpAddr)
		io.WriteString(c.c, "GET /healthz HTTP/1.1\r\nHost: gateway\r\n") // headers not ended
	}
	waitMetrics(t, g, admin, func(m map[string]float64) bool { return m["gateway_hal_connections_unauthenticated"] >= 8 })
	const flood = 500
	most := 0.0
	for i := range flood {
		c := dialHTTP(t, g.httpAddr)
		io.WriteString(c.c, "GET / HTTP/1.1\r\nHost: gateway\r\n\r\n")
		if i%100 == 99 {
			most = max(most, waitMetrics(t, g, admin, func(map[string]float64) bool { return true })["go_goroutines"])
		}
	}
	tookWS := wsStopFrom(t, "127.0.0.2", g.ws, admin)
	m := waitMetrics(t, g, admin, func(m map[string]float64) bool { return m["gateway_hal_connections_refused_total"] == flood })
	most = max(most, m["go_goroutines"])
	t.Logf("goroutines: %v before, at most %v during the flood; refused %v, answered 503 %v; the stop from another address took %v",
		before, most, m["gateway_hal_connections_refused_total"], m["gateway_http_refused_busy_total"], tookWS.Round(time.Millisecond))
	if tookWS > stopWithin {
		t.Errorf("the stop from another address took %v during the flood", tookWS)
	}
	// The 8 busy connections' goroutines, 4 held ones, and /metrics'
	// own; 500 held connections would be 500 more.
	if most > before+8+4+8 {
		t.Errorf("%v goroutines during the flood, %v before: the flood is not bounded", most, before)
	}
	if m["gateway_http_refused_busy_total"] > 4*flood/100 {
		t.Errorf("%v of %d answered 503: more than 4 held at once?", m["gateway_http_refused_busy_total"], flood)
	}
}
