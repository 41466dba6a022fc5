package mcpbridge

import (
	"net"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/openhal/gateway/internal/halhub/hubtest"
	"github.com/openhal/gateway/openhal"
)

// cutter is a listener wrapper that can cut every connection the Hub
// accepted through it: with Down, the Hub is away as a gateway that
// crashed is, until Up.
type cutter struct {
	mu    sync.Mutex
	conns []net.Conn
}

func (c *cutter) wrap(_ string, ln net.Listener) net.Listener { return cutListener{ln, c} }

// cut closes every connection accepted so far.
func (c *cutter) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, conn := range c.conns {
		conn.Close()
	}
	c.conns = nil
}

type cutListener struct {
	net.Listener
	c *cutter
}

func (l cutListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err == nil {
		l.c.mu.Lock()
		l.c.conns = append(l.c.conns, conn)
		l.c.mu.Unlock()
	}
	return conn, err
}

// deviceIDs is list_devices' ids.
func deviceIDs(t *testing.T, c *client) []string {
	t.Helper()
	var out struct {
		Devices []struct {
			ID string `json:"id"`
		} `json:"devices"`
	}
	c.ok(t, toolList, nil, &out)
	var ids []string
	for _, d := range out.Devices {
		ids = append(ids, d.ID)
	}
	return ids
}

// TestRedialWhileAway: with Redial, a Hub that goes away makes calls tool
// errors saying the bridge reconnects; when it is back, calls work again
// and the devices are those it has now, not those it had.
func TestRedialWhileAway(t *testing.T) {
	cut := &cutter{}
	bench, url := newBench(t, hubtest.WrapListener(cut.wrap))
	b := newBridge(t, url, bench.Agent, true)
	c := connect(t, b, clientOptions{})

	bench.Down()
	cut.cut()
	b.awaitLog(t, "reconnecting")
	c.failing(t, toolRead, map[string]any{"device": "sim.led"}, "cannot be reached", "reconnecting", "try again")
	c.failing(t, toolList, nil, "reconnecting")
	bench.Add(fan("test.fan")) // while the bridge is away: no notification tells it

	bench.Up()
	b.awaitLog(t, "reconnected")
	if ids := deviceIDs(t, c); !slices.Contains(ids, "test.fan") {
		t.Fatalf("list_devices after the reconnection: %v, want test.fan, added meanwhile", ids)
	}
	c.ok(t, toolWrite, map[string]any{"device": "test.fan", "value": 40}, nil)
	select {
	case <-b.Done():
		t.Fatal("the bridge ended, with Redial")
	default:
	}
}

// TestRedialRestart: a restarted gateway (a new Hub, a new bench) is
// dialled again; the device added to the old one is gone from the list
// and from the tools.
func TestRedialRestart(t *testing.T) {
	bench, url := newBench(t)
	bench.Add(fan("test.fan"))
	b := newBridge(t, url, bench.Agent, true)
	c := connect(t, b, clientOptions{version: proto0618})
	if ids := deviceIDs(t, c); !slices.Contains(ids, "test.fan") {
		t.Fatalf("list_devices %v, want test.fan", ids)
	}
	bench.Restart()
	b.awaitLog(t, "reconnected")
	within(t, c.toolsChanged, "tools/list_changed: test.fan went with the restart")
	if ids := deviceIDs(t, c); slices.Contains(ids, "test.fan") || !slices.Contains(ids, "sim.led") {
		t.Fatalf("list_devices after the restart: %v, want the new bench without test.fan", ids)
	}
	c.ok(t, toolRead, map[string]any{"device": "sim.led"}, nil)
}

// TestNoRedialEnds: without Redial, the bridge ends with its connection,
// and a call says to start a new session.
func TestNoRedialEnds(t *testing.T) {
	cut := &cutter{}
	bench, url := newBench(t, hubtest.WrapListener(cut.wrap))
	b := newBridge(t, url, bench.Agent, false)
	c := connect(t, b, clientOptions{})
	cut.cut()
	closed(t, b.Done(), "Done after the connection was lost")
	c.failing(t, toolRead, map[string]any{"device": "sim.led"}, "connection to the gateway ended", "new MCP session")
}

// TestRevokedToken: a revoked token ends the bridge even with Redial —
// one refused dial, not a loop — and every call then says UNAUTHORIZED
// and that a person must give a new token.
func TestRevokedToken(t *testing.T) {
	bench, url := newBench(t)
	tok := bench.Token("doomed-agent", openhal.KindAgent, openhal.ScopeControlLow)
	b := newBridge(t, url, tok, true)
	c := connect(t, b, clientOptions{})
	c.ok(t, toolRead, map[string]any{"device": "sim.led"}, nil)

	bench.Revoke("doomed-agent")
	closed(t, b.Done(), "Done after the token was revoked")
	if n := b.dials.Load(); n != 2 {
		t.Errorf("%d dials, want 2: the first and one refused", n)
	}
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{toolRead, map[string]any{"device": "sim.led"}},
		{toolWrite, map[string]any{"device": "sim.led", "value": true}},
		{toolList, nil},
		{toolConfirmation, map[string]any{"id": "c-00000001"}},
	} {
		text := c.failing(t, call.tool, call.args, "A person must give the agent a new token")
		if !strings.HasPrefix(text, "UNAUTHORIZED") {
			t.Errorf("%s: %q, want it to start with UNAUTHORIZED", call.tool, text)
		}
	}
}
