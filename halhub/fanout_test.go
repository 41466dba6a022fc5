package halhub

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/openhal"
)

// The fan-out (fanout.go) gives every value to every watcher, over TCP
// and WebSocket, in order and with no gap, while a TCP and a WebSocket
// client that never read sit among them: what their sockets do not take
// goes to their writers, and the fan-out goes on. The publisher is paced
// by the watchers (the next value once every watcher has the last), so
// that none can fall behind far enough for the spec to let its values
// coalesce: a gap is the Hub's.
func TestFanoutEveryWatcherEveryValue(t *testing.T) {
	const watchers, values = 24, 400
	th := newTestHub(t)
	th.addDevice(t, lineSensor("bench.scope"))
	var ws []*client
	for i := range watchers {
		var c *client
		if i%2 == 0 {
			c = th.dialTCP(t)
		} else {
			c = th.dialWS(t, "")
		}
		c.init(th.admin)
		ws = append(ws, c)
	}
	th.dialDeaf(t, "tcp", th.token(t, "deaf-tcp", openhal.ScopeRead))
	th.dialDeaf(t, "ws", th.token(t, "deaf-ws", openhal.ScopeRead))
	for _, s := range th.sessions() {
		if s.tw == nil || s.q.fan == nil {
			t.Fatalf("session of %s: not served by the fan-out", s.principalName())
		}
	}
	last := make([]uint64, watchers)
	for i := range values {
		th.reg.Publish("bench.scope", scopeLine(i), time.Time{})
		for j, c := range ws {
			v := valueOf(t, c.notification(openhal.NotifyValue))
			if i > 0 && v.Seq != last[j]+1 {
				t.Fatalf("watcher %d, value %d: seq %d after %d", j, i, v.Seq, last[j])
			}
			if want := fmt.Sprintf(`"%06d,`, i); !strings.HasPrefix(fmt.Sprintf("%q", v.Value), want) {
				t.Fatalf("watcher %d, value %d: got %.40q", j, i, v.Value)
			}
			last[j] = v.Seq
		}
	}
	// Answers still come, on connections the fan-out writes to.
	for _, c := range ws {
		if m := c.call("hal/ping", nil); m.Error != nil {
			t.Fatalf("ping after the values: %s", m.raw)
		}
	}
}

// A stretch of the fan-out is followed by a rest three times as long, up
// to what the pass has left of its rests; a short one by none, and one
// that found a connection half-way to having its values coalesced by
// none either.
func TestFanoutRest(t *testing.T) {
	for _, tc := range []struct {
		pass    time.Duration
		largest int
		left    time.Duration
		rest    time.Duration
	}{
		{0, 1, maxFanoutRest, 0},
		{10 * time.Microsecond, 1, maxFanoutRest, 0},
		{100 * time.Microsecond, 1, maxFanoutRest, 300 * time.Microsecond},
		{2 * time.Millisecond, fanoutBehind - 1, maxFanoutRest, 6 * time.Millisecond},
		{2 * time.Millisecond, fanoutBehind, maxFanoutRest, 0},
		{time.Second, 1, maxFanoutRest, maxFanoutRest},
		{time.Second, valueSlack, maxFanoutRest, 0},
		// What the pass's earlier rests left bounds this one.
		{2 * time.Millisecond, 1, time.Millisecond, time.Millisecond},
		{2 * time.Millisecond, 1, 0, 0},
		{2 * time.Millisecond, 1, minFanoutRest - 1, 0},
	} {
		if got := restAfter(tc.pass, tc.largest, tc.left); got != tc.rest {
			t.Errorf("rest after a stretch of %v, batches up to %d, %v left: %v, want %v", tc.pass, tc.largest, tc.left, got, tc.rest)
		}
	}
}
