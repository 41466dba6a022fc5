package halhub

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

// bothTransports are the transports a test runs over, each dialling a client that
// gives its token in params.
var bothTransports = []struct {
	name string
	dial func(*testHub, *testing.T) *client
}{
	{"tcp", func(th *testHub, t *testing.T) *client { return th.dialTCP(t) }},
	{"ws", func(th *testHub, t *testing.T) *client { return th.dialWS(t, "") }},
}

// padded returns a hal/ping request of exactly size bytes, padded with
// blanks (JSON whitespace).
func padded(t *testing.T, id, size int) string {
	t.Helper()
	head := `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"hal/ping"`
	if len(head)+1 > size {
		t.Fatalf("size %d too small", size)
	}
	return head + strings.Repeat(" ", size-len(head)-1) + "}"
}

// Spec §2: a message over MaxMessageBytes gets -32600 too_large and the
// connection is closed; one of exactly the limit is served. On WebSocket
// the library's own limit sits above the Hub's, so the Hub answers.
func TestMessageSizeLimit(t *testing.T) {
	const limit = 4096
	for _, tr := range bothTransports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			th := newTestHub(t, func(o *Options) { o.Limits.MaxMessageBytes = limit })
			c := tr.dial(th, t)
			c.init(th.admin)

			c.sendRaw(padded(t, 7, limit))
			if m := c.answer([]byte("7")); m.Error != nil {
				t.Fatalf("a message of exactly the limit: %s", m.raw)
			}
			c.sendRaw(padded(t, 8, limit+1))
			m := c.lastBeforeClose()
			if m.Error == nil || m.Error.Code != -32600 || m.reason() != "too_large" || string(m.ID) != "null" {
				t.Fatalf("a message over the limit: got %s, want -32600 too_large with id null", m.raw)
			}
			c.waitClosed()
			th.waitConnections(t, 0)
		})
	}
}

// A line far over the limit is not held: the Hub answers too_large as
// soon as the limit passes, and reads what the client still sends until
// it closes, so that the client sees the answer rather than a reset.
func TestMessageFarTooLargeTCP(t *testing.T) {
	t.Parallel()
	th := newTestHub(t, func(o *Options) { o.Limits.MaxMessageBytes = 4096 })
	c := th.dialTCP(t)
	c.sendRaw(`{"jsonrpc":"2.0","id":1,"method":"hal/ping","params":{"x":"` + strings.Repeat("x", 1<<20) + `"}}`)
	if m := c.lastBeforeClose(); m.reason() != "too_large" {
		t.Fatalf("got %s, want too_large", m.raw)
	}
	c.waitClosed()
}

// Spec §2: at most MaxInFlight requests are in flight on a connection, a
// request being in flight until its answer is written; more get BUSY at
// once, and once the answers are out new requests are served.
func TestInFlightLimit(t *testing.T) {
	t.Parallel()
	const max = 32
	th := newTestHub(t, func(o *Options) { o.Limits.MaxInFlight = max })
	d := numberDevice("bench.slow")
	entered, release := make(chan struct{}, 1), make(chan struct{})
	d.writeFn = func(ctx context.Context, req device.WriteRequest) (device.WriteResult, error) {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-release
		return device.WriteResult{}, nil
	}
	th.addDevice(t, d)
	c := th.dialTCP(t)
	c.init(th.admin)
	th.waitIdle(t) // the ping of init is no longer in flight

	ids := make([]int, max)
	for i := range ids {
		ids[i] = 100 + i
		c.sendRaw(request(ids[i], "hal/write", map[string]any{"device": "bench.slow", "value": i}))
	}
	waitChan(t, entered, "the first write to reach the device")
	c.sendRaw(request(200, "hal/write", map[string]any{"device": "bench.slow", "value": 99}))
	c.sendRaw(request(201, "hal/ping", nil))
	busy := c.answers([]int{200, 201})
	for id, m := range busy {
		if m.Error == nil || m.Error.Code != openhal.CodeBusy || m.reason() != "too_many_in_flight" {
			t.Errorf("request %d past the limit: got %s, want BUSY", id, m.raw)
		}
	}
	for _, m := range c.received() {
		if m.Method == "" {
			t.Fatalf("a held request was answered before its device was released: %s", m.raw)
		}
	}

	close(release)
	checkApplied(t, c.answers(ids))
	if got := d.written(); len(got) != max {
		t.Errorf("%d writes applied, want %d (the refused one must not be)", len(got), max)
	}
	if m := c.call("hal/ping", nil); m.Error != nil {
		t.Fatalf("after the answers: %s", m.raw)
	}
	if m := c.call("hal/write", map[string]any{"device": "bench.slow", "value": 1}); m.Error != nil {
		t.Fatalf("after the answers: %s", m.raw)
	}
}

// Spec §2: slots are taken at hal/initialize, once the token is known:
// MaxConnections for any token, AdminReserve more for admin tokens only.
// Past that, hal/initialize is answered BUSY "full" and the connection is
// closed, on every transport alike (a WebSocket upgrades first: the token
// may come in params).
func TestConnectionLimit(t *testing.T) {
	t.Parallel()
	th := newTestHub(t, func(o *Options) { o.Limits.MaxConnections, o.Limits.AdminReserve = 3, 2 })
	agent := th.token(t, "agent", openhal.ScopeControlLow)
	var agents []*client
	for range 3 {
		c := th.dialTCP(t)
		c.init(agent)
		agents = append(agents, c)
	}
	full := func(c *client, tok string) {
		t.Helper()
		wantCode(t, c.initWith(tok), openhal.CodeBusy, "full")
		c.waitClosed()
	}

	// Past the maximum, within the reserve: an admin gets in, an agent is
	// told why and closed.
	admin1 := th.dialTCP(t)
	admin1.init(th.admin)
	full(th.dialTCP(t), agent)
	full(th.dialWS(t, agent), "")
	admin2 := th.dialWS(t, th.admin)
	wantOK(t, admin2.initWith(""))
	th.waitConnections(t, 5)

	// Past both: full whatever the token.
	full(th.dialTCP(t), th.admin)
	full(th.dialWS(t, ""), th.admin)
	if got := th.hub.stats.full.Load(); got != 4 {
		t.Errorf("answered full: %d, want 4", got)
	}
	for _, c := range []*client{agents[0], admin1, admin2} {
		alive(t, c)
	}

	// Admins count against the maximum too: an agent gets in again once
	// fewer than MaxConnections are open.
	for _, c := range agents {
		c.close()
	}
	th.waitConnections(t, 2)
	c := th.dialTCP(t)
	c.init(agent)
}

// Spec §2: a connection that has not completed hal/initialize within
// InitTimeout is closed, even after a failed attempt; one that did stays
// open past it.
func TestInitTimeout(t *testing.T) {
	const timeout = 200 * time.Millisecond
	for _, tr := range bothTransports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			th := newTestHub(t, func(o *Options) { o.Limits.InitTimeout = timeout })
			ok := tr.dial(th, t)
			ok.init(th.admin)
			start := time.Now()
			idle, failed := tr.dial(th, t), tr.dial(th, t)
			if m := failed.initWith("gw_unknown"); m.reason() != "token_unknown" {
				t.Fatalf("got %s, want token_unknown", m.raw)
			}

			idle.waitClosed()
			if d := time.Since(start); d < timeout {
				t.Errorf("closed after %v, before InitTimeout %v", d, timeout)
			}
			failed.waitClosed()
			select {
			case <-ok.closed:
				t.Fatal("an initialized connection was closed")
			case <-time.After(2 * timeout):
			}
			if m := ok.call("hal/ping", nil); m.Error != nil {
				t.Fatalf("an initialized connection: %s", m.raw)
			}
		})
	}
}
