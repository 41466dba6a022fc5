package halhub

import (
	"sort"
	"sync"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

// What a configuration reload (SIGHUP) asks of the Hub; gatewayd's
// reload.go drives it. Nothing here closes a connection.

// reloadPrincipal is who acts on a reload's behalf, in results,
// notifications and the audit log.
func reloadPrincipal() openhal.Principal {
	return openhal.Principal{Kind: openhal.KindHub, Name: "reload"}
}

// SetRules puts rules in force in place of the rules of every device
// (spec §6). A device whose maxOnMs changed has its timer started again
// from now under the new limit if it is away from safe (or stopped, if it
// has none now); the rate windows are kept; the interlocks are enforced
// at once on the safety loop, so that a device away from safe whose new
// interlock does not hold goes back to safe as after any other break.
func (h *Hub) SetRules(rules map[string]device.Rules) {
	old := h.safety.set.Swap(newRuleSet(rules))
	var retime []string
	for id, r := range rules {
		if old.rules[id].MaxOn != r.MaxOn {
			retime = append(retime, id)
		}
	}
	for id, r := range old.rules {
		if _, ok := rules[id]; !ok && r.MaxOn > 0 {
			retime = append(retime, id)
		}
	}
	s := h.safety
	s.mu.Lock()
	for _, id := range retime {
		if t, ok := s.maxOn[id]; ok {
			t.Stop()
			delete(s.maxOn, id)
		}
	}
	s.mu.Unlock()
	var values []device.Event
	for _, id := range retime {
		if snap, ok := h.reg.Value(id); ok {
			values = append(values, device.Event{Kind: device.EventValue, Device: id, Value: snap.Value})
		}
	}
	l := h.loop
	l.mu.Lock()
	l.values = append(l.values, values...)
	l.dirty = true
	l.mu.Unlock()
	l.kick()
}

// RulesOf returns the rules in force for a device (tests, and the
// reload's log).
func (h *Hub) RulesOf(id string) (device.Rules, bool) { return h.safety.rulesOf(id) }

// RejectPendingOn rejects the Confirmation Requests waiting for an admin
// to write one of devices: a reload removes or rebuilds them, and a
// request never outlives its reason (spec §7). Each is resolved and
// announced as `rejected` by {hub, reload} with reason, and audited. It
// returns their ids.
func (h *Hub) RejectPendingOn(devices []string, reason string) []string {
	on := map[string]bool{}
	for _, d := range devices {
		on[d] = true
	}
	cs := h.confirms
	cs.mu.Lock()
	var ids []string
	for id, pw := range cs.byID {
		if !pw.taken && on[pw.c.Device] && pw.c.Status == openhal.ConfirmPending {
			ids = append(ids, id)
		}
	}
	cs.mu.Unlock()
	sort.Strings(ids)
	p := reloadPrincipal()
	var done []string
	for _, id := range ids {
		pw, err := cs.take(id)
		if err != nil {
			continue // resolved a moment earlier
		}
		c := h.resolve(pw, openhal.ConfirmRejected, func(c *openhal.Confirmation) { c.RejectedBy, c.ResolveReason = &p, reason })
		h.auditHub(p, "reject", c.Device, c.Value, openhal.ConfirmRejected, c.ID, reason)
		done = append(done, c.ID)
	}
	return done
}

// SafeIfStopped drives devices to their safe values when the emergency
// stop is engaged: a device a reload opened while the stop is in force
// must be where the stop put every other (spec §6). Nothing when no stop
// is in force.
func (h *Hub) SafeIfStopped(devices []string) (applied []string, failed map[string]string) {
	if !h.Stopped() {
		return nil, nil
	}
	return h.DriveSafe(devices, "emergency stop in force at a reload")
}

// DriveSafe drives devices to their safe values, in parallel, as {hub,
// reload} (a reload drives an output it removes to safe before closing
// it, as a clean stop does). It returns the ids driven and those that
// failed, with why. Devices without a safe value are left as they are.
func (h *Hub) DriveSafe(devices []string, why string) (applied []string, failed map[string]string) {
	var mu sync.Mutex // gathers the goroutines' results: a leaf
	var wg sync.WaitGroup
	failed = map[string]string{}
	for _, id := range devices {
		desc, ok := h.reg.Describe(id)
		if !ok || desc.Safe == nil || desc.Access == device.AccessRead {
			continue
		}
		wg.Go(func() {
			err := h.driveSafe(id, reloadPrincipal(), why, safeDeadline)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed[id] = err.Message
			} else {
				applied = append(applied, id)
			}
		})
	}
	wg.Wait()
	sort.Strings(applied)
	return applied, failed
}
