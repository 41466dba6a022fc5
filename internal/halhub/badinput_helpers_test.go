package halhub

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/openhal/gateway/internal/halhub/audit"
)

// Helpers for the bad-input tests (badinput_test.go).

// badBench is a bench with an audit log, a plain number device
// (bench.num, no rules, no safe value) and an admin observer that sees
// every notification. UNAUTHORIZED answers are not rate limited, so that
// a table of bad tokens is not cut short.
type badBench struct {
	*bench
	log *audit.Log
	num writerDevice
	obs *client
}

func newBadBench(t *testing.T, configure ...func(*Options)) *badBench {
	t.Helper()
	log, withLog := withAudit(t)
	noLimit := func(o *Options) { o.AuthFailures, o.AuthWindow = 1<<20, time.Minute }
	b := &badBench{bench: newBench(t, append([]func(*Options){withLog, noLimit}, configure...)...), log: log}
	b.num = numberDevice("bench.num")
	b.addDevice(t, b.num)
	b.reg.Publish("bench.num", 1.0, time.Time{})
	b.obs = b.bench.admin(t)
	return b
}

// drainObs forgets what the observer has received so far.
func (b *badBench) drainObs(t *testing.T) {
	t.Helper()
	wantOK(t, b.obs.call("hal/ping", nil))
	b.obs.received()
	b.obs.pending = nil
}

// hubState is what a bad request must not change.
type hubState struct {
	seq     uint64
	written map[string]int
	stopped bool
	pending int
	audit   int
}

func (b *badBench) state(t *testing.T) hubState {
	t.Helper()
	st := hubState{seq: b.reg.Seq(), stopped: b.hub.Stopped(), pending: b.hub.confirms.pending(), audit: len(entries(t, b.log)), written: map[string]int{}}
	for id, d := range map[string]writerDevice{"bench.led": b.led, "bench.heater": b.heater, "bench.fan": b.fan, "bench.num": b.num} {
		st.written[id] = len(d.written())
	}
	return st
}

// effects are the audit outcomes that say something changed.
var effects = []string{"applied", "pending", "approved", "rejected", "cancelled", "stopped", "resumed", "expired"}

// unchanged checks that nothing changed since before: no device was
// written, no value published, the stop and the pending requests are as
// they were, the audit log claims no effect, and the observer got no
// notification (a round trip to it flushes what would have come).
func (b *badBench) unchanged(t *testing.T, before hubState) {
	t.Helper()
	now := b.state(t)
	if now.seq != before.seq || now.stopped != before.stopped || now.pending != before.pending || !equalCounts(now.written, before.written) {
		t.Errorf("the hub changed: before %+v, after %+v", before, now)
	}
	for _, e := range entries(t, b.log)[before.audit:] {
		if slices.Contains(effects, e.Outcome) {
			t.Errorf("audit entry claims an effect: %+v", e)
		}
	}
	wantOK(t, b.obs.call("hal/ping", nil))
	for _, m := range b.obs.received() {
		t.Errorf("the observer got %s", m.raw)
	}
	b.obs.pending = nil
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// wantError checks an error answer: its code, data.reason, data.param when
// param is not empty (and its absence when param is "-"), and that the
// message names what was wrong (holds each of words).
func wantError(t *testing.T, m msg, code int64, reason, param string, words ...string) {
	t.Helper()
	if m.Error == nil || m.Error.Code != code || m.reason() != reason {
		t.Errorf("got %s, want code %d reason %q", m.raw, code, reason)
		return
	}
	got, has := m.Error.Data["param"]
	switch {
	case param == "-" && has:
		t.Errorf("got %s, want no data.param", m.raw)
	case param != "" && param != "-" && got != param:
		t.Errorf("got %s, want data.param %q", m.raw, param)
	}
	for _, w := range words {
		if !strings.Contains(m.Error.Message, w) {
			t.Errorf("message %q does not name %q", m.Error.Message, w)
		}
	}
}

// alive checks that the connection still serves requests.
func alive(t *testing.T, c *client) {
	t.Helper()
	if m := c.call("hal/ping", nil); m.Error != nil || string(m.Result) != "{}" {
		t.Fatalf("the connection no longer serves: %s", m.raw)
	}
}

// rawParams builds a params object from raw JSON values, so that a test
// controls every byte of a bad param.
func rawParams(base map[string]string, set ...string) string {
	m := map[string]string{}
	for k, v := range base {
		m[k] = v
	}
	for i := 0; i+1 < len(set); i += 2 {
		if set[i+1] == "" {
			delete(m, set[i])
		} else {
			m[set[i]] = set[i+1]
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var sb strings.Builder
	sb.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`"` + k + `":` + m[k])
	}
	sb.WriteByte('}')
	return sb.String()
}

// rawRequest is a request whose id and params are raw JSON.
func rawRequest(id, method, params string) string {
	s := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `"`
	if params != "" {
		s += `,"params":` + params
	}
	return s + "}"
}

// dialTCPConn is dialTCP that also returns the connection, for a test
// that writes bytes that are not a whole line.
func (th *testHub) dialTCPConn(t *testing.T) (*client, net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", th.tcpAddr)
	if err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, func(s string) error { _, err := io.WriteString(c, s+"\n"); return err }, func() { c.Close() })
	go func() {
		defer close(cl.closed)
		sc := bufio.NewScanner(c)
		sc.Buffer(make([]byte, 1<<20), 4<<20)
		for sc.Scan() {
			cl.deliver(sc.Text())
		}
	}()
	return cl, c
}

// dialWSConn is dialWS that also returns the connection, for a test that
// writes part of a message.
func (th *testHub) dialWSConn(t *testing.T) (*client, *websocket.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, th.wsURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(8 << 20)
	cl := newClient(t, func(s string) error { return c.Write(context.Background(), websocket.MessageText, []byte(s)) }, func() { c.CloseNow() })
	go func() {
		defer close(cl.closed)
		for {
			_, b, err := c.Read(context.Background())
			if err != nil {
				return
			}
			cl.deliver(string(b))
		}
	}()
	return cl, c
}

// wsStatus dials /hal with a bearer token and returns the HTTP status of
// the answer, on a connection not kept alive (so that it leaves no
// goroutine behind).
func (th *testHub) wsStatus(t *testing.T, bearer string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	c, resp, err := websocket.Dial(ctx, th.wsURL, &websocket.DialOptions{HTTPClient: hc, HTTPHeader: http.Header{"Authorization": {"Bearer " + bearer}}})
	if err == nil {
		c.CloseNow()
	}
	if resp == nil {
		t.Fatalf("dial: %v", err)
	}
	return resp.StatusCode
}

// smallRcvbuf is a dialer whose sockets offer a small receive window from
// the start, so that a client that stops reading fills its socket soon.
func smallRcvbuf() *net.Dialer {
	return &net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		if cerr := rc.Control(func(fd uintptr) {
			err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		}); cerr != nil {
			return cerr
		}
		return err
	}}
}

// deafConn is an initialized connection whose client never reads again:
// it only sends.
type deafConn struct {
	send  func(string) error
	close func()
}

// dialDeaf opens a connection on the transport named tr ("tcp" or "ws"),
// initializes it with tok reading the answers, then stops reading.
func (th *testHub) dialDeaf(t *testing.T, tr, tok string) deafConn {
	t.Helper()
	if tr == "tcp" {
		rc := th.dialRaw(t, tok, 4096)
		return deafConn{send: func(s string) error { _, err := rc.c.Write([]byte(s + "\n")); return err }, close: func() { rc.c.Close() }}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hc := &http.Client{Transport: &http.Transport{DialContext: smallRcvbuf().DialContext}}
	c, _, err := websocket.Dial(ctx, th.wsURL, &websocket.DialOptions{HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	hello := []string{
		request(1, "hal/initialize", map[string]any{"protocolVersion": "0.1", "clientInfo": map[string]string{"name": "deaf", "version": "1"}, "token": tok}),
		`{"jsonrpc":"2.0","method":"hal/initialized"}`,
		request(2, "hal/ping", nil),
	}
	for _, m := range hello {
		if err := c.Write(ctx, websocket.MessageText, []byte(m)); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(m, `"id"`) {
			_, b, err := c.Read(ctx)
			if err != nil || strings.Contains(string(b), `"error"`) {
				t.Fatalf("%s: %q %v", m, b, err)
			}
		}
	}
	return deafConn{
		send:  func(s string) error { return c.Write(context.Background(), websocket.MessageText, []byte(s)) },
		close: func() { c.CloseNow() },
	}
}

// goroutines returns the states ("IO wait", "running", ...) of the
// goroutines whose stack holds fn.
func goroutines(fn string) (states []string) {
	for _, g := range stacks(fn) {
		head, _, _ := strings.Cut(g, "\n")
		_, st, _ := strings.Cut(head, "[")
		st, _, _ = strings.Cut(st, "]")
		st, _, _ = strings.Cut(st, ",") // "IO wait, 2 minutes"
		states = append(states, st)
	}
	return states
}

// stacks returns the stacks of the goroutines whose stack holds fn.
func stacks(fn string) []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, fn) {
			out = append(out, g)
		}
	}
	return out
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// heapAlloc is the live heap after a collection.
func heapAlloc() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// waitGoroutines waits until the process runs at most n goroutines: the
// ones a closed connection used end a moment after it closes.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, want at most %d:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(time.Millisecond)
	}
}

// session finds the Hub's session of a principal.
func (th *testHub) session(t *testing.T, name string) *session {
	t.Helper()
	var found *session
	waitFor(t, 5*time.Second, "the session of "+name, func() bool {
		found = th.stalledSession(t, name)
		return found != nil
	})
	return found
}

// decodeResult decodes an answer's result into a map.
func decodeResult(t *testing.T, m msg) map[string]any {
	t.Helper()
	var r map[string]any
	if m.Error != nil || json.Unmarshal(m.Result, &r) != nil {
		t.Fatalf("got %s", m.raw)
	}
	return r
}

// hubMessages and hubRequests are the Hub's counts of messages and
// requests received.
func hubMessages(h *Hub) uint64 { m, _ := h.received(); return m }
func hubRequests(h *Hub) uint64 { _, r := h.received(); return r }
