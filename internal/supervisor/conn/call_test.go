package conn

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

func TestCallResultAndError(t *testing.T) {
	f := newFixture(t, seedConfig())
	c := f.ready()
	ch := callAsync(c, context.Background(), "device.read", 0)
	m := f.peer.msg()
	if m.Method != "device.read" || string(m.Params) != `{"device":"x"}` || string(m.ID) != "2" {
		t.Fatalf("request %s %s id %s", m.Method, m.Params, m.ID)
	}
	f.peer.answer(m, `{"value":21.5}`)
	if r := got(t, ch); r.err != nil || string(r.res) != `{"value":21.5}` {
		t.Fatalf("Call: %s, %v", r.res, r.err)
	}
	ch = callAsync(c, context.Background(), "device.write", 0)
	m = f.peer.msg()
	f.peer.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32010,"message":"relay stuck","data":{"relay":1}}}`)
	r := got(t, ch)
	var ae *AdapterError
	if !errors.As(r.err, &ae) || ae.Err.Code != -32010 || ae.Err.Message != "relay stuck" {
		t.Fatalf("Call: %v, want the adapter's error", r.err)
	}
	if raw, _ := ae.Err.Data.(json.RawMessage); string(raw) != `{"relay":1}` {
		t.Fatalf("data %#v, want the adapter's own", ae.Err.Data)
	}
}

// The seed's cancellation: on the deadline the request is forgotten and
// cancel {id} sent; a late reply, or -32024, is dropped and counted
// without a strike; a second reply to the same id is a strike.
func TestDeadlineCancelAndLateReply(t *testing.T) {
	f := newFixture(t, seedConfig())
	c := f.ready()
	for _, late := range []string{`"result":{"value":1}`, `"error":{"code":-32024,"message":"cancelled"}`} {
		ch := callAsync(c, context.Background(), "device.read", 2*time.Second)
		m := f.peer.msg()
		f.waitTimers(2) // the first ping and this deadline
		f.clk.Advance(2 * time.Second)
		if r := got(t, ch); !errors.Is(r.err, ErrTimeout) {
			t.Fatalf("Call: %v, want ErrTimeout", r.err)
		}
		if got, want := f.peer.next(), `{"jsonrpc":"2.0","method":"cancel","params":{"id":`+string(m.ID)+`}}`; got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
		before := c.Stats().LateReplies
		f.peer.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,` + late + `}`)
		waitFor(t, func() bool { return c.Stats().LateReplies == before+1 })
		if n := c.Stats().Violations; n != 0 {
			t.Fatalf("%d violations after a late reply", n)
		}
		// The id is forgotten once its answer came: another is a strike.
		f.peer.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{}}`)
		waitFor(t, func() bool { return c.Stats().Violations == 1 })
		f.cfg.Strikes.Reset()
		c.stats.violations.Store(0)
	}
}

// A caller that goes away cancels its request like a deadline does.
func TestCallerGoneCancels(t *testing.T) {
	f := newFixture(t, seedConfig())
	c := f.ready()
	ctx, cancel := context.WithCancel(context.Background())
	ch := callAsync(c, ctx, "device.read", 0)
	m := f.peer.msg()
	cancel()
	if r := got(t, ch); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("Call: %v, want context.Canceled", r.err)
	}
	if got, want := f.peer.next(), `{"jsonrpc":"2.0","method":"cancel","params":{"id":`+string(m.ID)+`}}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// When the connection ends, every request in flight fails with
// E_ADAPTER_CRASHED, and a new one fails at once.
func TestEndFailsInFlight(t *testing.T) {
	f := newFixture(t, seedConfig())
	c := f.ready()
	a := callAsync(c, context.Background(), "device.read", 0)
	b := callAsync(c, context.Background(), "device.write", 0)
	f.peer.msg()
	f.peer.msg()
	f.peer.out.Close()
	for _, ch := range []<-chan callResult{a, b} {
		if r := got(t, ch); !errors.Is(r.err, ErrCrashed) {
			t.Fatalf("Call: %v, want ErrCrashed", r.err)
		}
	}
	if e := ended(t, c); e.Reason != "eof" || e.Kill {
		t.Fatalf("end %+v", e)
	}
	if r := got(t, callAsync(c, context.Background(), "device.read", 0)); !errors.Is(r.err, ErrCrashed) {
		t.Fatalf("Call after the end: %v", r.err)
	}
}

// max_in_flight: more requests wait in order, bounded by their own
// deadlines; pings do not wait behind them.
func TestMaxInFlight(t *testing.T) {
	cfg := seedConfig()
	cfg.Limits.MaxInFlight = 2
	f := newFixture(t, cfg)
	c := f.ready()
	first := callAsync(c, context.Background(), "first", time.Minute)
	m1 := f.peer.msg()
	second := callAsync(c, context.Background(), "second", time.Minute)
	m2 := f.peer.msg()
	third := callAsync(c, context.Background(), "third", 3*time.Second)
	fourth := callAsync(c, context.Background(), "fourth", time.Minute)
	// ping timer, two deadlines, and the third's and fourth's.
	f.waitTimers(5)
	f.peer.nothing()
	f.clk.Advance(3 * time.Second)
	if r := got(t, third); !errors.Is(r.err, ErrTimeout) {
		t.Fatalf("third: %v, want ErrTimeout while waiting for a slot", r.err)
	}
	f.peer.nothing() // never sent, so nothing to cancel
	f.clk.Advance(12 * time.Second)
	ping := f.peer.msg()
	if ping.Method != "ping" {
		t.Fatalf("got %s, want a ping past the full slots", ping.Method)
	}
	f.peer.answer(ping, `{}`)
	f.peer.answer(m1, `{}`)
	if r := got(t, first); r.err != nil {
		t.Fatal(r.err)
	}
	m4 := f.peer.msg()
	if m4.Method != "fourth" {
		t.Fatalf("got %s, want fourth once a slot freed", m4.Method)
	}
	f.peer.answer(m2, `{}`)
	f.peer.answer(m4, `{}`)
	for _, ch := range []<-chan callResult{second, fourth} {
		if r := got(t, ch); r.err != nil {
			t.Fatal(r.err)
		}
	}
	if n := c.Stats().Violations; n != 0 {
		t.Fatalf("%d violations", n)
	}
}

// waitFor polls a cheap condition until it holds, within the test's bound:
// the counters it reads have no event to wait on.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		time.Sleep(time.Millisecond)
	}
}
