package halhub

import (
	"sync"
	"time"

	"github.com/openhal/gateway/internal/clock"
	"github.com/openhal/gateway/internal/halhub/audit"
	"github.com/openhal/gateway/openhal"
)

// What one principal may repeat without limit is recorded one by one only
// up to a rate, and counted past it (spec §10), so that no client can
// rotate the history away: a flood of refused requests, and, since any
// writer may send hal/stop and blocked writes, even those. Each group has
// its own window per principal: the first perWindow entries of a window
// are recorded as they come, the rest counted into one count entry
// (audit.Counter) written when the window ends — at most one per
// principal, group and window, while a flood goes on and after it stops.
const (
	groupRefused = iota // error answers to audited methods, but blocked writes
	groupStops          // stops and resumes: Hub-wide, seen by every admin
	groupKept           // blocked writes, approvals, rejections
	numGroups
)

// coalesceRate is one group's rate: perWindow entries a window.
type coalesceRate struct {
	perWindow int
	window    time.Duration
}

// coalesceRates are the groups' rates (docs/protocol.md, "Audit log"):
// refusals 10 in 10 s; stops and resumes 5, and blocked writes, approvals
// and rejections 10, in 10 minutes, so that the kept set, which holds the
// stops, fills far more slowly than the writes (days at the worst, not
// minutes). A window is also what a crash may lose of the counts (the
// requests counted there changed nothing, or were stops that are
// latched): short windows for the refusals, which come in floods.
var coalesceRates = [numGroups]coalesceRate{
	groupRefused: {perWindow: 10, window: 10 * time.Second},
	groupStops:   {perWindow: 5, window: 10 * time.Minute},
	groupKept:    {perWindow: 10, window: 10 * time.Minute},
}

// coalescer keeps one window per principal and group. Windows run on the
// Hub's clock: a window's timer, not a polling loop, writes its count
// entry.
type coalescer struct {
	clk   clock.Clock
	rates [numGroups]coalesceRate
	// write records a count entry; it is called without the lock held,
	// from the window's timer or from close.
	write func(audit.Entry)

	mu       sync.Mutex
	windows  map[coalesceKey]*window
	closed   bool
	flushing sync.WaitGroup // windows ended by their timer, count entry not yet written
}

type coalesceKey struct {
	kind, name string
	group      int
}

// window is one principal's current window in one group.
type window struct {
	principal openhal.Principal
	recorded  int // entries recorded one by one in this window
	counted   audit.Counter
	timer     clock.Timer
}

func newCoalescer(clk clock.Clock, rates [numGroups]coalesceRate, write func(audit.Entry)) *coalescer {
	return &coalescer{clk: clk, rates: rates, write: write, windows: map[coalesceKey]*window{}}
}

// admit reports whether e, from p, is to be recorded on its own (true)
// or was counted into p's window (false). After close every entry is
// recorded on its own.
func (c *coalescer) admit(p openhal.Principal, group int, e audit.Entry) bool {
	return c.add(p, group, e, false)
}

// count counts e into p's window, whatever the rate: for what is never
// recorded one by one (the rate-limited UNAUTHORIZED answers). It reports
// false after close, when the caller must record e itself.
func (c *coalescer) count(p openhal.Principal, group int, e audit.Entry) bool {
	return !c.add(p, group, e, true)
}

func (c *coalescer) add(p openhal.Principal, group int, e audit.Entry, always bool) (recordIt bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return true
	}
	k := coalesceKey{kind: p.Kind, name: p.Name, group: group}
	w := c.windows[k]
	if w == nil {
		w = &window{principal: p}
		c.windows[k] = w
		w.timer = c.clk.AfterFunc(c.rates[group].window, func() { c.end(k, w) })
	}
	if !always && w.recorded < c.rates[group].perWindow {
		w.recorded++
		return true
	}
	if e.TS.IsZero() {
		e.TS = c.clk.Now()
	}
	w.counted.Add(e)
	return false
}

// end closes a window when its time is up and writes its count entry.
func (c *coalescer) end(k coalesceKey, w *window) {
	c.mu.Lock()
	if c.windows[k] != w {
		c.mu.Unlock()
		return // close took it
	}
	delete(c.windows, k)
	c.flushing.Add(1)
	c.mu.Unlock()
	defer c.flushing.Done()
	c.flush(w)
}

func (c *coalescer) flush(w *window) {
	if w.counted.Len() > 0 {
		c.write(w.counted.Entry(w.principal))
	}
}

// close writes the count entry of every open window, at once, stops
// their timers, and returns once the count entries of windows that ended
// meanwhile are written too: the Hub is closing, and a count must not be
// lost with it.
func (c *coalescer) close() {
	c.mu.Lock()
	c.closed = true
	open := c.windows
	c.windows = map[coalesceKey]*window{}
	c.mu.Unlock()
	for _, w := range open {
		w.timer.Stop()
		c.flush(w)
	}
	c.flushing.Wait()
}

// auditGroup is the group of a client's entry, and whether it is
// coalesced at all: an applied write, a pending one, a cancellation are
// each recorded, however many (they are rate limited by the devices, the
// rules and the confirmation bounds, not here).
func auditGroup(e *audit.Entry, refused bool) (int, bool) {
	switch {
	case audit.Kept(e) && (e.Action == "stop" || e.Action == "resume"):
		return groupStops, true
	case audit.Kept(e):
		return groupKept, true
	case refused:
		return groupRefused, true
	}
	return 0, false
}
