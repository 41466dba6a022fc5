package halhub

import (
	"fmt"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/clock/clocktest"
	"github.com/openhal/gateway/internal/halhub/audit"
	"github.com/openhal/gateway/openhal"
)

// Throttling of failed tokens (spec §3).

// Spec §3: past 5 failures a minute from one peer, further failures are
// answered rate_limited and their connection is closed; but the token is
// always looked up first, so the admin's own token from that very peer is
// admitted at once — on TCP, WebSocket and the Unix socket (whose peer is
// the uid). On the old code the admin got rate_limited for a minute.
func TestValidTokenAlwaysAdmitted(t *testing.T) {
	t.Parallel()
	th := newTestHub(t)
	unix := th.serveUnix(t)
	dials := []struct {
		name string
		bad  func() (*client, msg) // a failed attempt
		good func() *client
	}{
		{"tcp", func() (*client, msg) { c := th.dialTCP(t); return c, c.initWith("gw_bad") },
			func() *client { return th.dialTCP(t) }},
		{"ws", func() (*client, msg) { c := th.dialWS(t, "gw_bad"); return c, c.initWith("") },
			func() *client { return th.dialWS(t, th.admin) }},
		{"unix", func() (*client, msg) { c := th.dialUnix(t, unix); return c, c.initWith("gw_bad") },
			func() *client { return th.dialUnix(t, unix) }},
	}
	for _, d := range dials {
		// TCP and WebSocket share the peer 127.0.0.1: WebSocket's attempts
		// are all past the limit already.
		for i := range 6 {
			c, m := d.bad()
			if d.name == "ws" || i == 5 {
				wantCode(t, m, openhal.CodeUnauthorized, "rate_limited")
				c.waitClosed()
				continue
			}
			wantCode(t, m, openhal.CodeUnauthorized, "token_unknown")
			c.close()
		}
		tok := th.admin
		if d.name == "ws" {
			tok = "" // the bearer header
		}
		c := d.good()
		if m := c.initWith(tok); m.Error != nil {
			t.Fatalf("%s: the admin's token after the flood: %s", d.name, m.raw)
		}
		alive(t, c)
	}
}

// Rate-limited answers are counted, not recorded one by one (spec §3,
// §10): the audit's coalescer writes one count entry per peer and window
// while the flood lasts, and one after it; nothing is lost. On the old
// code nothing was written while the peer kept failing.
func TestRateLimitedCounted(t *testing.T) {
	log, opt := withAudit(t)
	b := newBench(t, opt)
	limited := func(n int, from string) {
		t.Helper()
		for range n {
			c := b.dialTCPFrom(t, from)
			wantCode(t, c.initWith("gw_bad"), openhal.CodeUnauthorized, "rate_limited")
			c.waitClosed()
		}
	}
	// one counts the entries recorded one by one per peer, and the count
	// entries per peer; counted sums the rate-limited answers they count.
	counts := func() (one, counted map[string]int) {
		one, counted = map[string]int{}, map[string]int{}
		for _, e := range entries(t, log) {
			switch {
			case e.Action == audit.ActionCount:
				for _, by := range e.By {
					if by.Reason == "rate_limited" {
						counted[e.Principal.Name] += by.Count
					}
				}
				one[e.Principal.Name+" counts"]++
			case e.Outcome == "unauthorized":
				one[e.Principal.Name]++
			}
		}
		return one, counted
	}
	want := func(at string, wantOne, wantCounted string) {
		t.Helper()
		one, counted := counts()
		if got := fmt.Sprint(one); got != wantOne {
			t.Errorf("%s: entries %s, want %s", at, got, wantOne)
		}
		if got := fmt.Sprint(counted); got != wantCounted {
			t.Errorf("%s: counted %s, want %s", at, got, wantCounted)
		}
	}

	for range 5 {
		c := b.dialTCP(t)
		wantCode(t, c.initWith("gw_bad"), openhal.CodeUnauthorized, "token_unknown")
		c.close()
	}
	limited(4, "127.0.0.1")
	for range 6 { // another peer, limited on its own
		c := b.dialTCPFrom(t, "127.0.0.2")
		c.initWith("gw_bad")
		c.close()
	}
	want("0 s", "map[127.0.0.1:5 127.0.0.2:5]", "map[]")
	b.clock.Advance(10 * time.Second) // the window's counts
	want("10 s", "map[127.0.0.1:5 127.0.0.1 counts:1 127.0.0.2:5 127.0.0.2 counts:1]", "map[127.0.0.1:4 127.0.0.2:1]")
	limited(3, "127.0.0.1") // the flood goes on: counted again
	b.clock.Advance(10 * time.Second)
	want("20 s", "map[127.0.0.1:5 127.0.0.1 counts:2 127.0.0.2:5 127.0.0.2 counts:1]", "map[127.0.0.1:7 127.0.0.2:1]")
	b.clock.Advance(10 * time.Second) // nothing more
	want("30 s", "map[127.0.0.1:5 127.0.0.1 counts:2 127.0.0.2:5 127.0.0.2 counts:1]", "map[127.0.0.1:7 127.0.0.2:1]")
	if got := b.hub.stats.rateLimited.Load(); got != 8 {
		t.Errorf("%d rate_limited answers counted, want 8", got)
	}
	// A peer that slowed down gets ordinary answers again.
	b.clock.Advance(time.Minute)
	c := b.dialTCP(t)
	wantCode(t, c.initWith("gw_bad"), openhal.CodeUnauthorized, "token_unknown")
}

// Counts still open when the Hub closes are written then.
func TestRateLimitedRecordedAtClose(t *testing.T) {
	log, opt := withAudit(t)
	b := newBench(t, opt, func(o *Options) { o.AuthFailures, o.AuthWindow = 1, time.Minute })
	for range 4 {
		c := b.dialTCP(t)
		c.initWith("gw_bad")
		c.close()
	}
	b.hub.Close()
	n := 0
	for _, e := range entries(t, log) {
		for _, by := range e.By {
			if by.Reason == "rate_limited" {
				n += by.Count
			}
		}
	}
	if n != 3 {
		t.Errorf("%d rate-limited answers recorded at close, want 3", n)
	}
}

func TestAuthLimiterBounded(t *testing.T) {
	clk := clocktest.NewFake(time.Unix(1000, 0))
	l := newAuthLimiter(authLimits{failures: 2, window: time.Minute, peers: 4}, clk)
	for i := range 100 {
		for range 2 {
			if l.fail(fmt.Sprintf("10.0.0.%d", i)) && i < 4 {
				t.Fatalf("peer %d limited after 2 failures", i)
			}
		}
	}
	if n := l.tracked(); n > 5 {
		t.Fatalf("%d peers tracked, want at most 4 and the overflow", n)
	}
	if !l.fail("10.0.0.99") || !l.fail("10.0.0.200") {
		t.Error("peers past the bound are not limited together")
	}
	if !l.fail("10.0.0.0") {
		t.Error("a tracked peer past its failures is not limited")
	}
	clk.Advance(time.Minute + 2*time.Second) // every failure is old now
	if l.fail("10.0.1.1") {
		t.Error("a new peer limited after the window")
	}
	if n := l.tracked(); n > 4 {
		t.Errorf("%d peers tracked after the sweep", n)
	}
	l.mu.Lock()
	_, own := l.peers["10.0.1.1"]
	l.mu.Unlock()
	if !own {
		t.Error("a new peer was not given room after the old ones were swept")
	}
}
