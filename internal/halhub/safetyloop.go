package halhub

import (
	"context"
	"sync"

	"github.com/openhal/gateway/device"
)

// safetyLoop is the Hub's event loop for the safety rules. The registry
// hands it events under its lock, where nothing may wait; the loop then
// re-checks interlocks and arms maxOnMs timers on its own goroutine, where
// driving a device safe may take its time.
type safetyLoop struct {
	mu     sync.Mutex
	values []device.Event // values of devices with a maxOnMs rule, in seq order
	dirty  bool           // an interlock source or an interlocked device changed
	stops  []string       // stop buttons pressed, in order
	wake   chan struct{}  // has a token when there is work
	probes []chan struct{}
	hang   bool // hangAtNextRound: the next round blocks
}

func newSafetyLoop() *safetyLoop { return &safetyLoop{wake: make(chan struct{}, 1)} }

// note takes one registry event; it runs under the registry's lock.
func (h *Hub) noteSafety(e device.Event) {
	if e.Kind == device.EventValue && h.stopButtons[e.Device] {
		// The position is recorded at once, so that a resume right after
		// a press is refused; the stop itself runs on the loop.
		if h.stop.setHeld(e.Device, e.Value == true) {
			h.loop.mu.Lock()
			h.loop.stops = append(h.loop.stops, e.Device)
			h.loop.mu.Unlock()
			h.loop.kick()
		}
	}
	r, hasRules := h.safety.rulesOf(e.Device)
	source := h.safety.interlockSource(e.Device) ||
		(e.Kind == device.EventValue && h.safety.interlocked(e.Device))
	maxOn := hasRules && r.MaxOn > 0 && e.Kind == device.EventValue
	if !source && !maxOn {
		return
	}
	l := h.loop
	l.mu.Lock()
	if maxOn {
		l.values = append(l.values, e)
	}
	if source && e.Kind != device.EventAdded {
		l.dirty = true
	}
	l.mu.Unlock()
	l.kick()
}

func (l *safetyLoop) kick() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// run works until ctx ends.
func (h *Hub) runSafety(ctx context.Context) {
	l := h.loop
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.wake:
		}
		l.mu.Lock()
		values, dirty, stops, probes := l.values, l.dirty, l.stops, l.probes
		l.values, l.dirty, l.stops, l.probes = nil, false, nil, nil
		hang := l.hang
		l.mu.Unlock()
		if hang {
			<-ctx.Done() // wedged until the Hub closes
			return
		}
		for _, name := range stops {
			h.buttonStop(name)
		}
		for _, e := range values {
			h.watchMaxOn(e.Device, e.Value)
		}
		if dirty {
			h.enforceInterlocks()
		}
		for _, p := range probes {
			close(p)
		}
	}
}

// hangAtNextRound wedges the loop at its next round, until the Hub
// closes: the fault the watchdog must catch. Only tests call it, and
// HangForTest in builds tagged testhang (hang_testhang.go).
func (l *safetyLoop) hangAtNextRound() {
	l.mu.Lock()
	l.hang = true
	l.mu.Unlock()
	l.kick()
}

// probe shows that the loop makes progress: it returns once the loop has
// gone round, or with ctx's error.
func (l *safetyLoop) probe(ctx context.Context) error {
	done := make(chan struct{})
	l.mu.Lock()
	l.probes = append(l.probes, done)
	l.mu.Unlock()
	l.kick()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
