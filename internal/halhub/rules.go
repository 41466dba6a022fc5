package halhub

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// safety holds the rules of every device and the state they need: the
// rate windows, the maxOnMs timers, and which devices' interlocks depend
// on which others.
type safety struct {
	clk clock.Clock
	// set is the rules in force: replaced whole by a reload (SetRules,
	// reload.go), never changed in place.
	set atomic.Pointer[ruleSet]

	mu      sync.Mutex
	windows map[string][]time.Time // accepted writes in the last second
	maxOn   map[string]clock.Timer // running maxOnMs timers
	held    map[string]int         // devices a guarded write holds (interlock.go)
}

func newSafety(clk clock.Clock, rules map[string]device.Rules) *safety {
	s := &safety{clk: clk, windows: map[string][]time.Time{}, maxOn: map[string]clock.Timer{}, held: map[string]int{}}
	s.set.Store(newRuleSet(rules))
	return s
}

// ruleSet is every device's rules, and which devices' interlocks depend
// on which others.
type ruleSet struct {
	rules map[string]device.Rules
	// dependents maps a device to the devices whose interlock names it.
	dependents map[string][]string
}

func newRuleSet(rules map[string]device.Rules) *ruleSet {
	rs := &ruleSet{rules: rules, dependents: map[string][]string{}}
	for id, r := range rules {
		for _, c := range r.Interlock {
			rs.dependents[c.Device] = append(rs.dependents[c.Device], id)
		}
	}
	return rs
}

// rulesOf returns a device's rules in force, and whether it has any.
func (s *safety) rulesOf(id string) (device.Rules, bool) {
	r, ok := s.set.Load().rules[id]
	return r, ok
}

// blocked builds a BLOCKED answer naming the rule.
func blocked(id, rule, msg string) *jsonrpc.Error {
	return newError(openhal.CodeBlocked, rule, "write to "+id+" blocked: "+msg, errorData{"device": id, "rule": rule})
}

// check runs a write through its device's rules (spec §6, "Safety
// rules"): minimum, maximum, rateLimit, interlock. It runs holding the
// device's turn, so the rate window and the interlock see the writes
// before it.
func (h *Hub) checkRules(w *writeAttempt) *jsonrpc.Error {
	r, ok := h.safety.rulesOf(w.f.id)
	if !ok {
		return nil
	}
	id := w.f.id
	if f, isNum := w.value.(float64); isNum {
		if r.Minimum != nil && f < *r.Minimum {
			return blocked(id, openhal.RuleMinimum, fmt.Sprintf("%v is below the rule's minimum %v", f, *r.Minimum))
		}
		if r.Maximum != nil && f > *r.Maximum {
			return blocked(id, openhal.RuleMaximum, fmt.Sprintf("%v is above the rule's maximum %v", f, *r.Maximum))
		}
	}
	if r.RateLimit > 0 && h.safety.recentWrites(id) >= r.RateLimit {
		return blocked(id, openhal.RuleRateLimit, fmt.Sprintf("more than %d writes in one second", r.RateLimit))
	}
	if broken := h.brokenCondition(r); broken != "" {
		return blocked(id, openhal.RuleInterlock, broken)
	}
	return nil
}

// brokenCondition returns the first interlock condition that does not
// hold, described, or "".
func (h *Hub) brokenCondition(r device.Rules) string {
	for _, c := range r.Interlock {
		desc, ok := h.reg.Describe(c.Device)
		snap, has := h.reg.Value(c.Device)
		if !ok || !c.Holds(desc.State, snap.Value, has) {
			why := "does not hold"
			switch {
			case !ok:
				why = "fails: no such device"
			case desc.State != device.StateOK:
				why = "fails: " + c.Device + " is " + string(desc.State)
			case !has:
				why = "fails: " + c.Device + " has no value yet"
			}
			return fmt.Sprintf("interlock %s %s", c, why)
		}
	}
	return ""
}

// recentWrites counts the accepted writes of the last second.
func (s *safety) recentWrites(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.trim(id))
}

// accepted notes an accepted write for the rate limit.
func (s *safety) accepted(id string) {
	if r, _ := s.rulesOf(id); r.RateLimit == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.windows[id] = append(s.trim(id), s.clk.Now())
}

// trim drops the writes older than one second (a sliding window).
func (s *safety) trim(id string) []time.Time {
	w := s.windows[id]
	cut := s.clk.Now().Add(-time.Second)
	i := 0
	for i < len(w) && !w[i].After(cut) {
		i++
	}
	w = w[i:]
	s.windows[id] = w
	return w
}

// watchMaxOn starts a device's maxOnMs timer when it leaves its safe value
// and stops it when it returns; rewriting a value away from safe does not
// extend it. The safety loop calls it for each value of a device with a
// maxOnMs rule, in seq order.
func (h *Hub) watchMaxOn(id string, v any) {
	r, _ := h.safety.rulesOf(id)
	desc, ok := h.reg.Describe(id)
	if !ok || desc.Safe == nil || r.MaxOn <= 0 {
		return
	}
	s := h.safety
	s.mu.Lock()
	defer s.mu.Unlock()
	t, running := s.maxOn[id]
	switch away := !device.Equal(v, desc.Safe); {
	case away && !running:
		s.maxOn[id] = s.clk.AfterFunc(r.MaxOn, func() { go h.maxOnExpired(id, r.MaxOn) })
	case !away && running:
		t.Stop()
		delete(s.maxOn, id)
	}
}

// maxOnExpired drives a device back to safe when its maxOnMs ran out; the
// change is an ordinary hal/value.
func (h *Hub) maxOnExpired(id string, d time.Duration) {
	h.safety.mu.Lock()
	delete(h.safety.maxOn, id)
	h.safety.mu.Unlock()
	p := openhal.Principal{Kind: openhal.KindHub, Name: "maxOnMs"}
	if err := h.driveSafe(id, p, fmt.Sprintf("on for its maxOnMs of %v", d), safeDeadline); err != nil {
		h.log.Error("maxOnMs: could not drive device safe", "device", id, "err", err.Message)
	}
}

// enforceInterlocks drives safe every device that is away from its safe
// value while one of its interlock conditions no longer holds, and tells
// every client why (spec §6: an interlock is enforced all the time).
func (h *Hub) enforceInterlocks() {
	for id, r := range h.safety.set.Load().rules {
		if len(r.Interlock) > 0 {
			h.enforceInterlock(id, r)
		}
	}
}

// interlockSource reports whether a change of id can break an interlock.
func (s *safety) interlockSource(id string) bool { return len(s.set.Load().dependents[id]) > 0 }

// interlocked reports whether id has an interlock of its own: its values
// wake the loop too (a device that publishes its own value may do it
// after its write was settled).
func (s *safety) interlocked(id string) bool { r, _ := s.rulesOf(id); return len(r.Interlock) > 0 }

// hold marks id as held by a guarded write, release unmarks it, isHeld
// tells the safety loop (interlock.go).
func (s *safety) hold(id string) {
	s.mu.Lock()
	s.held[id]++
	s.mu.Unlock()
}

func (s *safety) release(id string) {
	s.mu.Lock()
	if s.held[id]--; s.held[id] <= 0 {
		delete(s.held, id)
	}
	s.mu.Unlock()
}

func (s *safety) isHeld(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held[id] > 0
}
