package halhub

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// Closing the interlock race (spec §6, "interlock").
//
// A write checked against an interlock just before the other device (the
// source) changes would be applied just after it. The check and the apply
// are not made atomic with the source's change: the source is most often
// an input whose edge the hardware reports when it happens, which nothing
// may hold back, and holding every source's reports while a write waits
// for its device and its audit sync would stall the Hub's one event
// stream behind the slowest device. Instead a write that slipped through
// is driven back to safe, and the Hub makes sure that someone always looks
// again after both changes:
//
//   - A write away from safe of a device with an interlock holds the
//     device (safety.hold) from before its check until after its value is
//     published and looked at again, all in the device's turn; it then
//     releases the hold and looks once more (settleInterlock).
//   - The safety loop, woken by a source's change, leaves a held device
//     to its holder. A device not held it checks again in the device's
//     turn, after the writes before it (enforceInterlock).
//
// Each side makes its change visible first and looks second: the source's
// value is in the registry before the loop reads the hold, and the write's
// value is published before its hold is released. So either the loop finds
// the hold, and the holder reads the source's new value after releasing
// it; or the loop finds it released, and reads the write's value in the
// registry. A device that publishes its own value (Keep) may do it late:
// its own values wake the loop too, which checks it like any other.
//
// A write also looks again the moment the device has taken its value,
// before the audit record's sync (catchBreak): a break found there is
// undone at the device at once, not after the sync. A break during the
// sync is found when the sync ends, before the writer's answer; until
// then the device keeps the value (the Hub does not write a device while
// another write holds its turn).
//
// What clients see in each case is in docs/protocol.md, "Safety rules".

// interlockGuard follows one guarded write.
type interlockGuard struct {
	rules   device.Rules
	touched bool       // the value went to the device (whatever it answered)
	back    *driveBack // the device was already driven back, at catchBreak
}

// driveBack is a device driven to its safe value because an interlock
// broke, before it is recorded and published.
type driveBack struct {
	w      *writeAttempt // the safe value, written as {hub, interlock}
	res    device.WriteResult
	err    *jsonrpc.Error
	from   any               // the value it was driven back from
	writer openhal.Principal // who wrote that value, for hal/blocked
}

// interlockPrincipal drives devices back when an interlock breaks.
func interlockPrincipal() openhal.Principal {
	return openhal.Principal{Kind: openhal.KindHub, Name: "interlock"}
}

// guardInterlock holds w's device if w takes it away from safe and it has
// an interlock (and a safe value to go back to), and returns what settles
// it; call that in the same turn.
func (h *Hub) guardInterlock(w *writeAttempt) (settle func()) {
	r, _ := h.safety.rulesOf(w.f.id)
	w.guard = nil // an approved confirmation's attempt was guarded once already
	if w.safe || len(r.Interlock) == 0 || w.f.desc.Safe == nil {
		return func() {}
	}
	w.guard = &interlockGuard{rules: r}
	h.safety.hold(w.f.id)
	return func() { h.settleInterlock(w) }
}

// catchBreak runs when the device has had a guarded write's value: if an
// interlock broke since the check, the device goes back to safe now, and
// settleInterlock records and reports it.
func (h *Hub) catchBreak(w *writeAttempt) {
	g := w.guard
	if g == nil {
		return
	}
	g.touched = true
	if broken := h.brokenCondition(g.rules); broken != "" {
		g.back = h.toSafe(w.f, broken, w.value, w.principal, true)
	}
}

// settleInterlock ends a guarded write, in the device's turn, before the
// writer is answered: a device away from safe (by this write, or already)
// while a condition does not hold is driven back. It looks once holding
// the device, so that the loop leaves the common case to it, and once
// more after releasing it, for a break between the two.
func (h *Hub) settleInterlock(w *writeAttempt) {
	h.settleLook(w)
	h.safety.release(w.f.id)
	h.settleLook(w)
}

// settleLook drives w's device back if a condition does not hold and the
// device is, or may be, away from safe; a drive-back already made at the
// device (catchBreak) is finished whatever the conditions say now.
func (h *Hub) settleLook(w *writeAttempt) {
	g := w.guard
	if g.back == nil {
		broken := h.brokenCondition(g.rules)
		if broken == "" {
			return
		}
		switch from, away := h.awayFromSafe(w.f.id); {
		case g.touched:
			g.back = h.toSafe(w.f, broken, w.value, w.principal, true)
		case away:
			g.back = h.toSafe(w.f, broken, from, interlockPrincipal(), false)
		default:
			return
		}
	}
	h.finishDriveBack(g.back)
	g.back, g.touched = nil, false // the device is at its safe value now
}

// enforceInterlock drives id back to safe if it is away from it while
// one of its conditions does not hold (the safety loop's check). A held
// device is left to its holder. The check is made again in the device's
// turn, after the writes before it.
//
// The order of the reads matters: the conditions, then the hold, then the
// device's value. A condition found broken was broken before the hold is
// read, so a holder found is sure to see it when it settles; a hold found
// released was released after the holder published its value.
func (h *Hub) enforceInterlock(id string, r device.Rules) {
	if h.brokenCondition(r) == "" || h.safety.isHeld(id) {
		return
	}
	from, away := h.awayFromSafe(id)
	if !away {
		return
	}
	f, ok := h.foundDevice(id)
	if !ok {
		return
	}
	t := h.order.enter(id)
	ctx, cancel := context.WithTimeout(context.Background(), safeDeadline)
	err := t.wait(ctx)
	cancel()
	if err != nil {
		broken := h.brokenCondition(r)
		busy := newError(openhal.CodeTimeout, "device_busy", "earlier writes to "+id+" did not finish in time", errorData{"device": id})
		h.finishDriveBack(&driveBack{w: safeAttempt(f, broken), err: busy, from: from, writer: interlockPrincipal()})
		return
	}
	defer t.leave()
	from, away = h.awayFromSafe(id)
	broken := h.brokenCondition(r)
	if !away || broken == "" {
		return
	}
	h.finishDriveBack(h.toSafe(f, broken, from, interlockPrincipal(), false))
}

// toSafe writes f's safe value to the device, in the turn its caller
// holds, and returns what finishDriveBack needs. raced says that the
// value driven back from is a write checked before the break, which the
// audit entry's reason then names.
func (h *Hub) toSafe(f found, broken string, from any, writer openhal.Principal, raced bool) *driveBack {
	sw := safeAttempt(f, broken)
	if raced {
		sw.reason = fmt.Sprintf("%s (it broke while %s %s's write of %s was being applied)", broken, writer.Kind, writer.Name, valueText(from))
	}
	ctx, cancel := context.WithTimeout(context.Background(), safeDeadline)
	defer cancel()
	res, err := h.toDevice(ctx, sw)
	return &driveBack{w: sw, res: res, err: err, from: from, writer: writer}
}

// safeAttempt is the Hub's write of f's safe value for a broken interlock.
func safeAttempt(f found, broken string) *writeAttempt {
	return &writeAttempt{f: f, principal: interlockPrincipal(), value: f.desc.Safe, reason: broken, timeout: safeDeadline, safe: true, driven: true}
}

// finishDriveBack records and publishes a drive-back (or records its
// failure) and tells every client that may see the device, with
// hal/blocked.
func (h *Hub) finishDriveBack(b *driveBack) {
	id := b.w.f.id
	err := b.err
	if err == nil {
		_, err = h.commit(b.w, b.res)
	}
	reason := b.w.reason + "; driven to its safe value"
	if err != nil {
		h.auditWrite(b.w, nil, err)
		reason = b.w.reason + "; driving it safe failed: " + err.Message
		h.log.Error("interlock: could not drive device safe", "device", id, "err", err.Message)
	} else {
		h.safety.accepted(id)
	}
	h.broadcast(openhal.NotifyBlocked, id, openhal.BlockedParams{
		Device: id, Value: b.from, Principal: b.writer, Rule: openhal.RuleInterlock, Reason: reason, TS: h.clk.Now().UTC(),
	})
}

// awayFromSafe returns id's value and whether it is away from its safe
// value (a device without a safe value or a value never is).
func (h *Hub) awayFromSafe(id string) (any, bool) {
	desc, ok := h.reg.Describe(id)
	snap, has := h.reg.Value(id)
	if !ok || desc.Safe == nil || !has {
		return nil, false
	}
	return snap.Value, !device.Equal(snap.Value, desc.Safe)
}

// foundDevice looks up a device as the Hub's own writes need it.
func (h *Hub) foundDevice(id string) (found, bool) {
	dev, ok := h.reg.Device(id)
	desc, ok2 := h.reg.Describe(id)
	if !ok || !ok2 || desc.Safe == nil {
		return found{}, false
	}
	if _, isWriter := dev.(device.Writer); !isWriter {
		return found{}, false
	}
	return found{id: id, dev: dev, desc: desc}, true
}

// valueText shows a value in a reason as JSON would.
func valueText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
