package halhub

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/openhal/gateway/openhal"
)

// Admission (spec §2): connections that have not authenticated hold no
// slot; they have a budget of their own, per peer and in all.

// dialTCPFrom dials the Hub's TCP listener from the local address from
// (any of 127/8 on Linux's loopback), as another machine would.
func (th *testHub) dialTCPFrom(t *testing.T, from string) *client {
	t.Helper()
	c, err := dialFrom(from, th.tcpAddr)
	if err != nil {
		t.Fatal(err)
	}
	return th.tcpClient(t, c)
}

func dialFrom(from, addr string) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	return d.Dial("tcp", addr)
}

// tcpClient is a test client over c.
func (th *testHub) tcpClient(t *testing.T, c net.Conn) *client {
	cl := newClient(t, func(s string) error { _, err := io.WriteString(c, s+"\n"); return err }, func() { c.Close() })
	go func() {
		defer close(cl.closed)
		sc := bufio.NewScanner(c)
		sc.Buffer(make([]byte, 1<<20), 4<<20)
		for sc.Scan() {
			cl.deliver(sc.Text())
		}
	}()
	return cl
}

// serveUnix serves the Hub on a Unix socket too and returns its path.
func (th *testHub) serveUnix(t *testing.T) string {
	t.Helper()
	path := t.TempDir() + "/hal.sock"
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go th.hub.ServeLines(th.hub.Guard("unix", ln, nil))
	return path
}

func (th *testHub) dialUnix(t *testing.T, path string) *client {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	return th.tcpClient(t, c)
}

// idleConns opens n TCP connections from `from` that send nothing, and
// waits until the Hub holds them all; they close at the end of the test.
func (th *testHub) idleConns(t *testing.T, from string, n int) []net.Conn {
	t.Helper()
	net0, _ := th.hub.Unauthenticated()
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := dialFrom(from, th.tcpAddr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		conns[i] = c
	}
	waitFor(t, 5*time.Second, "the hub to hold the idle connections", func() bool {
		n1, _ := th.hub.Unauthenticated()
		return n1 == net0+n
	})
	return conns
}

// wantClosedAtAccept checks that a connection from `from` is closed by the
// Hub without a byte, whatever it sends.
func (th *testHub) wantClosedAtAccept(t *testing.T, from string) {
	t.Helper()
	c, err := dialFrom(from, th.tcpAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, request(1, "hal/initialize", initParams("0.1", th.admin))+"\n")
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if b, err := io.ReadAll(c); len(b) != 0 || err != nil && !isReset(err) {
		t.Fatalf("a connection past the budget from %s got %q, %v; want it closed at accept", from, b, err)
	}
}

func isReset(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "broken pipe"))
}

// Spec §2: idle connections that never send a byte hold no slot: with
// every connection slot but one free and the per-peer budget of idle
// connections used up from one address, agents from another address take
// all the slots, an admin the reserve; the next idle connection from the
// first address is closed at accept. On the old code the idle connections
// filled the slots and the reserve.
func TestIdleConnectionsHoldNoSlot(t *testing.T) {
	t.Parallel()
	const slots, reserve, perPeer = 3, 1, 8
	th := newTestHub(t, func(o *Options) {
		o.Limits.MaxConnections, o.Limits.AdminReserve, o.Limits.MaxUnauthenticatedPerPeer = slots, reserve, perPeer
	})
	agent := th.token(t, "agent", openhal.ScopeControlLow)
	th.idleConns(t, "127.0.0.1", perPeer)
	th.wantClosedAtAccept(t, "127.0.0.1")

	for range slots {
		th.dialTCPFrom(t, "127.0.0.2").init(agent)
	}
	full := th.dialTCPFrom(t, "127.0.0.2")
	wantCode(t, full.initWith(agent), openhal.CodeBusy, "full")
	full.waitClosed()
	admin := th.dialTCPFrom(t, "127.0.0.2")
	admin.init(th.admin)
	past := th.dialTCPFrom(t, "127.0.0.2")
	wantCode(t, past.initWith(th.admin), openhal.CodeBusy, "full")
	past.waitClosed()
	alive(t, admin)
	if got := th.hub.stats.full.Load(); got != 2 {
		t.Errorf("%d answered full, want 2", got)
	}
}

// Spec §2: the budget of connections not yet authenticated is bounded in
// all, across peers, and a connection leaves it when it authenticates
// (its slot then counts instead) or closes.
func TestUnauthenticatedTotal(t *testing.T) {
	t.Parallel()
	th := newTestHub(t, func(o *Options) { o.Limits.MaxUnauthenticated, o.Limits.MaxUnauthenticatedPerPeer = 4, 2 })
	th.idleConns(t, "127.0.0.2", 2)
	held := th.idleConns(t, "127.0.0.3", 1)
	waiting := th.dialTCPFrom(t, "127.0.0.4") // the fourth and last
	waitFor(t, 5*time.Second, "four held", func() bool { n, _ := th.hub.Unauthenticated(); return n == 4 })
	th.wantClosedAtAccept(t, "127.0.0.5")

	waiting.init(th.admin) // its ticket goes back
	th.idleConns(t, "127.0.0.5", 1)
	th.wantClosedAtAccept(t, "127.0.0.6")
	held[0].Close()
	waitFor(t, 5*time.Second, "the closed connection's ticket back", func() bool { n, _ := th.hub.Unauthenticated(); return n == 3 })
	th.dialTCPFrom(t, "127.0.0.6").init(th.admin)
	if got := th.hub.stats.refused.Load(); got != 2 {
		t.Errorf("%d refused at accept, want 2", got)
	}
}

// Spec §2: HTTP connections, keep-alive ones included, count toward the
// budget of connections not yet authenticated of their peer, which the
// network listeners share; a WebSocket leaves it once hal/initialize
// gives it a slot. A keep-alive connection waiting idle gives its place
// to a new connection of its peer; one in use (a WebSocket before
// hal/initialize) does not.
func TestHTTPConnectionsCount(t *testing.T) {
	t.Parallel()
	th := newTestHub(t, func(o *Options) { o.Limits.MaxUnauthenticatedPerPeer = 2 })
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	get := func() {
		resp, err := hc.Get(th.httpURL + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	get() // one keep-alive connection, idle now
	ws := th.dialWS(t, th.admin)
	waitFor(t, 5*time.Second, "two held", func() bool { n, _ := th.hub.Unauthenticated(); return n == 2 })
	tcp := th.dialTCPFrom(t, "127.0.0.1") // in place of the idle one
	waitFor(t, 5*time.Second, "the idle one closed for it", func() bool { return th.hub.stats.idleReclaimed.Load() == 1 })
	th.wantClosedAtAccept(t, "127.0.0.1") // the WebSocket and tcp are in use
	if _, resp, err := th.dialWSResponse(th.admin); err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a third connection: %v %v, want 503", resp, err)
	}

	ws.init("")
	waitFor(t, 5*time.Second, "the WebSocket's ticket back", func() bool { n, _ := th.hub.Unauthenticated(); return n == 1 })
	tcp.init(th.admin)
	get()
	tr.CloseIdleConnections()
	waitFor(t, 5*time.Second, "the HTTP connection's ticket back", func() bool { n, _ := th.hub.Unauthenticated(); return n == 0 })
}

// Spec §2: an HTTP keep-alive connection idle for HTTPIdleTimeout is
// closed, counted in /metrics, and its ticket goes back. One that the
// client closes itself is not counted.
func TestHTTPIdleTimeout(t *testing.T) {
	t.Parallel()
	const idle = 200 * time.Millisecond
	th := newTestHub(t, func(o *Options) { o.Limits.HTTPIdleTimeout = idle })
	addr := strings.TrimPrefix(th.httpURL, "http://")
	open := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n")
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /healthz: %v %v", resp, err)
		}
		io.Copy(io.Discard, resp.Body)
		return c, br
	}
	closedByClient, _ := open()
	closedByClient.Close()
	c, br := open()
	start := time.Now()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := br.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("idle keep-alive connection: read %d, %v; want EOF from the Hub", n, err)
	}
	if d := time.Since(start); d < idle/2 {
		t.Errorf("closed after %v, before the idle timeout %v", d, idle)
	}
	waitFor(t, 5*time.Second, "the idle close counted", func() bool { return th.hub.stats.httpIdleClosed.Load() == 1 })
	waitFor(t, 5*time.Second, "the tickets back", func() bool { n, _ := th.hub.Unauthenticated(); return n == 0 })
	var sb strings.Builder
	th.hub.writeMetrics(&sb)
	if !strings.Contains(sb.String(), "\ngateway_http_idle_closed_total 1\n") {
		t.Errorf("metrics:\n%s", sb.String())
	}
}

// Spec §2: the Unix socket's budget is its own: network peers that used
// up theirs do not keep a local client out.
func TestUnixSocketBudgetApart(t *testing.T) {
	t.Parallel()
	th := newTestHub(t, func(o *Options) { o.Limits.MaxUnauthenticated, o.Limits.MaxUnauthenticatedPerPeer = 2, 2 })
	path := th.serveUnix(t)
	th.idleConns(t, "127.0.0.2", 2)
	th.wantClosedAtAccept(t, "127.0.0.3")
	var local []net.Conn
	for range 2 { // the per-uid budget, idle
		c, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		local = append(local, c)
	}
	waitFor(t, 5*time.Second, "the Unix connections held", func() bool { _, n := th.hub.Unauthenticated(); return n == 2 })
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if b, err := io.ReadAll(c); len(b) != 0 || err != nil && !isReset(err) {
		t.Fatalf("a third Unix connection of one uid: %q %v; want it closed at accept", b, err)
	}
	local[0].Close()
	waitFor(t, 5*time.Second, "a ticket back", func() bool { _, n := th.hub.Unauthenticated(); return n == 1 })
	if res := th.dialUnix(t, path).init(th.admin); res.Principal.Name != "root" {
		t.Fatalf("initialize over the Unix socket: %+v", res)
	}
}

// The budget's rules, table-driven: per peer, in all, and the exempt
// peers (the Unix socket's root and own uid) outside the total.
func TestPeerBudget(t *testing.T) {
	type step struct {
		peer   string
		exempt bool
		want   bool
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"per peer", []step{{"a", false, true}, {"a", false, true}, {"a", false, false}, {"b", false, true}}},
		{"in all", []step{{"a", false, true}, {"b", false, true}, {"c", false, true}, {"d", false, false}}},
		{"exempt beyond the total", []step{{"a", false, true}, {"a", false, true}, {"b", false, true}, {"self", true, true}, {"self", true, true}, {"self", true, false}, {"c", false, false}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := newPeerBudget(2, 3)
			var tickets []*ticket
			for i, s := range tc.steps {
				tk, _, _ := b.take(s.peer, s.exempt, nil)
				if (tk != nil) != s.want {
					t.Fatalf("step %d (%s): admitted %v, want %v", i, s.peer, tk != nil, s.want)
				}
				if tk != nil {
					tickets = append(tickets, tk)
				}
			}
			for _, tk := range tickets {
				tk.release()
				tk.release() // once only
			}
			if b.held() != 0 || b.n != 0 || len(b.byPeer) != 0 {
				t.Errorf("after every release: %d held, %d counted, %d peers", b.held(), b.n, len(b.byPeer))
			}
		})
	}
}

// Spec §2: a client that opens 500 connections at once, each asking for
// hal/initialize with an agent's token, gets MaxConnections slots less
// those taken; the Hub never holds more than the per-peer budget of
// connections not yet authenticated, nor more slots than it has; the rest
// are answered BUSY "full" or closed at accept. An admin still gets in,
// existing clients go on, and once the flood closes the Hub's connections
// and the process's goroutines are back where they were.
// Not parallel: it counts the process's goroutines.
func TestConnectionFlood(t *testing.T) {
	const maxConns, reserve, flood = 8, 2, 500
	for _, tr := range []string{"tcp", "ws"} {
		t.Run(tr, func(t *testing.T) {
			b := newBadBench(t, func(o *Options) { o.Limits.MaxConnections, o.Limits.AdminReserve = maxConns, reserve })
			agent := b.token(t, "agent", openhal.ScopeControlLow)
			existing := b.dialWS(t, "")
			existing.init(agent)
			b.waitConnections(t, 2) // the observer and existing
			b.waitIdle(t)
			g0 := runtime.NumGoroutine()
			refused0, full0 := b.hub.stats.refused.Load(), b.hub.stats.full.Load()

			stopPeak := b.watchPeaks(t, maxConns, b.hub.opt.Limits.MaxUnauthenticatedPerPeer)
			out := b.flood(t, tr, flood, agent)
			stopPeak()
			t.Logf("%d initialized, %d full, %d closed at accept", out.ok, out.full, out.closed)
			if out.ok != maxConns-2 || out.full+out.closed != flood-out.ok {
				t.Errorf("%d initialized, %d full, %d closed; want %d initialized", out.ok, out.full, out.closed, maxConns-2)
			}
			if got := b.hub.stats.refused.Load() - refused0; got != uint64(out.closed) {
				t.Errorf("%d counted refused at accept, %d seen closed", got, out.closed)
			}
			if got := b.hub.stats.full.Load() - full0; got != uint64(out.full) {
				t.Errorf("%d counted full, %d seen", got, out.full)
			}
			b.waitConnections(t, maxConns)

			// The reserve still takes admins, on both transports; past it,
			// an admin is told "full" too.
			adminTCP := b.dialTCP(t)
			adminTCP.init(b.testHub.admin)
			adminWS := b.dialWS(t, b.testHub.admin)
			wantOK(t, adminWS.initWith(""))
			past := b.dialWS(t, b.testHub.admin)
			wantCode(t, past.initWith(""), openhal.CodeBusy, "full")
			past.waitClosed()
			for _, c := range []*client{b.obs, existing, adminTCP, adminWS} {
				alive(t, c)
			}
			wantOK(t, write(adminTCP, "bench.led", true))
			b.obs.notification(openhal.NotifyValue)

			out.closeAll()
			adminTCP.close()
			adminWS.close()
			b.waitConnections(t, 2)
			waitGoroutines(t, g0)
			alive(t, existing)
		})
	}
}

// watchPeaks checks, until the returned function is called, that the Hub
// never holds more slots or connections not yet authenticated than it may.
func (b *badBench) watchPeaks(t *testing.T, slots, unauthenticated int) (stop func()) {
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		mostSlots, mostPending := 0, 0
		for {
			b.hub.mu.RLock()
			mostSlots = max(mostSlots, b.hub.slots)
			b.hub.mu.RUnlock()
			n, _ := b.hub.Unauthenticated()
			mostPending = max(mostPending, n)
			select {
			case <-done:
				if mostSlots > slots || mostPending > unauthenticated {
					t.Errorf("at most %d slots and %d not authenticated at once, want %d and %d", mostSlots, mostPending, slots, unauthenticated)
				}
				return
			default:
				runtime.Gosched()
			}
		}
	}()
	return func() { close(done); <-ended }
}

// floodOutcome counts how the flood's connections ended.
type floodOutcome struct {
	ok, full, closed int
	closeAll         func()
}

// flood opens n connections at once over tr ("tcp" or "ws"), each sending
// hal/initialize with tok, and sorts what each got: a result, BUSY full,
// or nothing (closed at accept; on WebSocket the upgrade fails).
func (b *badBench) flood(t *testing.T, tr string, n int, tok string) floodOutcome {
	t.Helper()
	var mu sync.Mutex
	var out floodOutcome
	var closers []func()
	var wg sync.WaitGroup
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for range n {
		wg.Go(func() {
			answer, closer := b.floodOne(tr, hc, tok)
			mu.Lock()
			defer mu.Unlock()
			if closer != nil {
				closers = append(closers, closer)
			}
			switch m := answer; {
			case m == nil: // closed at accept (the refused count must agree)
				out.closed++
			case m.Method != "":
				t.Errorf("flood: %s", m.raw)
			case m.Error == nil:
				out.ok++
			case m.Error.Code == openhal.CodeBusy && m.reason() == "full":
				out.full++
			default:
				t.Errorf("flood: %s", m.raw)
			}
		})
	}
	wg.Wait()
	out.closeAll = func() {
		for _, c := range closers {
			c()
		}
	}
	return out
}

// floodOne is one connection of a flood: its answer to hal/initialize
// (nil if none) and how to close it.
func (b *badBench) floodOne(tr string, hc *http.Client, tok string) (*msg, func()) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	init := request(1, "hal/initialize", initParams("0.1", tok))
	var line []byte
	var closer func()
	if tr == "tcp" {
		c, err := net.Dial("tcp", b.tcpAddr)
		if err != nil {
			return nil, nil // the kernel's backlog is full: not the Hub's doing
		}
		closer = func() { c.Close() }
		io.WriteString(c, init+"\n")
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		line, _ = bufio.NewReader(c).ReadBytes('\n')
	} else {
		c, _, err := websocket.Dial(ctx, b.wsURL, &websocket.DialOptions{HTTPClient: hc})
		if err != nil {
			return nil, nil // closed at accept: no HTTP answer at all
		}
		closer = func() { c.CloseNow() }
		if c.Write(ctx, websocket.MessageText, []byte(init)) == nil {
			_, line, _ = c.Read(ctx)
		}
	}
	if len(line) == 0 {
		return nil, closer
	}
	var m msg
	if err := json.Unmarshal(line, &m); err != nil || m.ID == nil {
		m.Error = nil
		m.Method = "unparseable: " + string(line) // lands in flood's default case
	}
	m.raw = strings.TrimSpace(string(line))
	return &m, closer
}
