package conn

import (
	"testing"
	"time"

	"github.com/openhal/gateway/adapterproto"
)

// The first ping 15 s after initialized, then 15 s after the previous was
// sent; an answer within 5 s clears the misses.
func TestPingSchedule(t *testing.T) {
	f := newFixture(t, seedConfig())
	c := f.ready()
	f.waitTimers(1)
	f.clk.Advance(15*time.Second - time.Millisecond)
	f.peer.nothing()
	f.clk.Advance(time.Millisecond)
	p := f.peer.msg()
	if p.Method != "ping" || string(p.Params) != "{}" {
		t.Fatalf("got %s %s, want ping {}", p.Method, p.Params)
	}
	f.peer.answer(p, `{}`)
	waitFor(t, func() bool { return c.Stats().Requests == 1 && pendingCount(c) == 0 })
	f.waitTimers(1)
	f.clk.Advance(15 * time.Second)
	if p := f.peer.msg(); p.Method != "ping" {
		t.Fatalf("got %s, want the second ping at 30 s", p.Method)
	}
}

// Three misses in a row kill; a late answer does not undo a miss.
func TestPingMissesKill(t *testing.T) {
	f := newFixture(t, seedConfig())
	c := f.ready()
	f.waitTimers(1)
	f.clk.Advance(15 * time.Second)
	for i := 1; i <= 3; i++ {
		p := f.peer.msg()
		if p.Method != "ping" {
			t.Fatalf("got %s, want ping %d", p.Method, i)
		}
		f.clk.Advance(5 * time.Second)
		if m := f.peer.msg(); m.Method != adapterproto.MethodCancel {
			t.Fatalf("after a missed ping: %s, want cancel", m.Method)
		}
		if i < 3 {
			waitFor(t, func() bool { return c.Stats().PingMisses == uint64(i) })
			f.peer.answer(p, `{}`) // late: dropped, counted, and still a miss
			waitFor(t, func() bool { return c.Stats().LateReplies == uint64(i) })
			if c.Stats().PingMisses != uint64(i) {
				t.Fatalf("a late answer undid a miss")
			}
			f.clk.Advance(10 * time.Second) // 15 s after the previous ping
		}
	}
	e := ended(t, c)
	if e.Reason != "pings" || !e.Kill {
		t.Fatalf("end %+v, want a kill for pings", e)
	}
	if c.Stats().Violations != 0 {
		t.Fatal("late answers were struck")
	}
}

// A tool is not pinged.
func TestToolNotPinged(t *testing.T) {
	cfg := seedConfig()
	cfg.Kind = adapterproto.KindTool
	f := newFixture(t, cfg)
	c := f.ready()
	if n := f.clk.Pending(); n != 0 {
		t.Fatalf("%d timers pending for a tool at rest", n)
	}
	f.clk.Advance(time.Hour)
	f.peer.nothing()
	if c.Err() != nil {
		t.Fatal(c.Err())
	}
}

func pendingCount(c *Conn) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}
