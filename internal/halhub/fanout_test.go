package halhub

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
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
	th := newTestHub(t, func(o *Options) { o.Limits.MaxConnectionsPerToken = watchers }) // one token for every watcher
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

// An answer takes with it what waits on its connection (outQueue.claim):
// a value waiting for the fan-out's next pass goes out with the answer,
// ahead of it, written by the goroutine that made the answer — for a
// cached read (hal/ping: the reader's) and for an audited write (the
// request's own) alike.
func TestAnswerTakesWhatWaits(t *testing.T) {
	for _, transport := range []string{"tcp", "ws"} {
		t.Run(transport, func(t *testing.T) {
			log, withLog := withAudit(t)
			th := newScopeAndRelayHub(t, withLog)
			c := th.dialInit(t, transport)
			s := th.sessions()[0]
			for i, req := range []string{
				`{"jsonrpc":"2.0","id":1,"method":"hal/ping"}`,
				`{"jsonrpc":"2.0","id":2,"method":"hal/write","params":{"device":"bench.relay","value":true}}`,
			} {
				// Marked as in the fan-out's pass already, s is left out
				// of the next one: the value waits on its queue as it
				// would behind a pass over 250 other connections. (A
				// pass under way when it is marked may still take it:
				// the client has that one, and the value is published
				// again.)
				for tries := 0; ; tries++ {
					s.fanned.Store(true)
					th.reg.Publish("bench.scope", scopeLine(i), time.Time{})
					if _, values := s.q.queued(); values == 1 {
						break
					}
					if tries == 100 {
						t.Fatalf("before %s: the value never waited", req)
					}
					c.notification(openhal.NotifyValue)
				}
				c.sendRaw(req)
				if m := c.next(); m.Method != openhal.NotifyValue {
					t.Fatalf("first after %s: %s, want the value that waited", req, m.raw)
				}
				for m := c.next(); m.Method != "" || string(m.ID) != fmt.Sprint(i+1); m = c.next() {
					if m.Method != openhal.NotifyValue { // the write's own value may come first
						t.Fatalf("after %s: %s, want its answer", req, m.raw)
					}
				}
				s.fanned.Store(false)
			}
			if got := summary(entries(t, log)); !strings.HasSuffix(got, "write:bench.relay:applied") {
				t.Errorf("audit log: %s, want the write applied", got)
			}
		})
	}
}

// Answers made at once on one connection — cached reads on its reader,
// audited writes each on its own goroutine — race each other and the
// fan-out for its queue while values stream to it: every answer comes,
// and the values keep their order (claim hands its batch to one holder
// at a time; run with -race).
func TestAnswersRaceTheFanOut(t *testing.T) {
	const requests, values, inFlight = 200, 500, 20
	_, withLog := withAudit(t)
	th := newScopeAndRelayHub(t, withLog)
	for _, transport := range []string{"tcp", "ws"} {
		t.Run(transport, func(t *testing.T) {
			c := th.dialInit(t, transport)
			go func() {
				for i := range values {
					th.reg.Publish("bench.scope", scopeLine(i), time.Time{})
				}
			}()
			answered := map[string]bool{}
			var last uint64
			for i := 1; i <= requests; i++ {
				if i%2 == 0 {
					c.sendRaw(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"hal/ping"}`, i))
				} else {
					c.sendRaw(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"hal/write","params":{"device":"bench.relay","value":%v}}`, i, i%4 == 1))
				}
				if i%inFlight != 0 {
					continue
				}
				for len(answered) < i { // within the limit of requests in flight
					m := c.next()
					switch {
					case m.Method == openhal.NotifyValue:
						if v := valueOf(t, m); v.Device == "bench.scope" {
							if v.Seq <= last {
								t.Fatalf("value seq %d after %d", v.Seq, last)
							}
							last = v.Seq
						}
					case m.Method == "":
						if m.Error != nil {
							t.Fatalf("answer: %s", m.raw)
						}
						answered[string(m.ID)] = true
					}
				}
			}
		})
	}
}

// newScopeAndRelayHub is a Hub with a sensor whose values the tests
// publish (bench.scope) and a low-risk output they write (bench.relay).
func newScopeAndRelayHub(t *testing.T, configure ...func(*Options)) *testHub {
	t.Helper()
	th := newTestHub(t, configure...)
	th.addDevice(t, lineSensor("bench.scope"))
	th.addDevice(t, output("bench.relay", device.RiskLow))
	return th
}

// dialInit connects an admin client over transport ("tcp" or "ws") and
// initializes it.
func (th *testHub) dialInit(t *testing.T, transport string) *client {
	t.Helper()
	var c *client
	if transport == "ws" {
		c = th.dialWS(t, "")
	} else {
		c = th.dialTCP(t)
	}
	c.init(th.admin)
	return c
}
