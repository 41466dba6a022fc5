package halhub

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/openhal"
)

func pending(t *testing.T, m msg) openhal.Confirmation {
	t.Helper()
	r := resultOf[openhal.PendingResult](t, m)
	if r.Status != "pending" || r.Confirmation.ID == "" || r.Confirmation.Status != "pending" {
		t.Fatalf("not pending: %s", m.raw)
	}
	return r.Confirmation
}

// Spec §7: a control_low write of a high-risk device is queued, every
// client hears of it, an admin approves it, and the write is applied with
// approvedBy recorded.
func TestConfirmationApproved(t *testing.T) {
	b := newBench(t)
	agent := b.as(t, "bench-agent", openhal.ScopeControlLow)
	watcher := b.as(t, "watcher", openhal.ScopeRead)
	m := agent.call("hal/write", map[string]any{"device": "bench.heater", "value": true, "reason": "preheat for run 7"})
	c := pending(t, m)
	if c.Device != "bench.heater" || c.Value != true || c.RequestedBy.Name != "bench-agent" || c.Reason != "preheat for run 7" ||
		!c.ExpiresAt.Equal(c.CreatedAt.Add(DefaultConfirmTTL)) {
		t.Errorf("confirmation %+v", c)
	}
	if len(b.heater.written()) != 0 {
		t.Fatal("a pending write reached the device")
	}
	if n := watcher.notification("hal/confirmationRequested"); !strings.Contains(string(n.Params), c.ID) {
		t.Errorf("requested: %s", n.raw)
	}
	list := resultOf[openhal.ConfirmationsListResult](t, watcher.call("hal/confirmations/list", map[string]any{"status": "pending"}))
	if len(list.Confirmations) != 1 || list.Confirmations[0].ID != c.ID {
		t.Errorf("list %+v", list)
	}
	admin := b.admin(t)
	got := resultOf[openhal.Confirmation](t, admin.call("hal/confirmations/approve", map[string]any{"id": c.ID}))
	if got.Status != "approved" || got.ApprovedBy == nil || got.ApprovedBy.Name != "root" || got.Result == nil || got.Result.Seq == 0 {
		t.Errorf("approved %+v", got)
	}
	if fmt.Sprint(b.heater.written()) != "[true]" || b.value(t, "bench.heater") != true {
		t.Errorf("heater %v", b.heater.written())
	}
	if n := watcher.notification("hal/confirmationResolved"); !strings.Contains(string(n.Params), `"status":"approved"`) {
		t.Errorf("resolved: %s", n.raw)
	}
	// A second resolution loses.
	wantCode(t, admin.call("hal/confirmations/approve", map[string]any{"id": c.ID}), openhal.CodeConfirmationClosed, "confirmation_closed")
	wantCode(t, admin.call("hal/confirmations/reject", map[string]any{"id": c.ID}), openhal.CodeConfirmationClosed, "")
	wantCode(t, admin.call("hal/confirmations/approve", map[string]any{"id": "c-99999999"}), openhal.CodeConfirmationNotFound, "")
}

func TestConfirmationRejectedAndCancelled(t *testing.T) {
	b := newBench(t)
	agent := b.as(t, "agent", openhal.ScopeControlLow)
	other := b.as(t, "other", openhal.ScopeControlLow)
	admin := b.admin(t)
	c1 := pending(t, write(agent, "bench.heater", true))
	got := resultOf[openhal.Confirmation](t, admin.call("hal/confirmations/reject", map[string]any{"id": c1.ID, "reason": "not now"}))
	if got.Status != "rejected" || got.RejectedBy.Name != "root" || got.ResolveReason != "not now" {
		t.Errorf("rejected %+v", got)
	}
	c2 := pending(t, write(agent, "bench.heater", true))
	wantCode(t, other.call("hal/confirmations/cancel", map[string]any{"id": c2.ID}), openhal.CodeForbidden, "not_creator")
	if got := resultOf[openhal.Confirmation](t, agent.call("hal/confirmations/cancel", map[string]any{"id": c2.ID})); got.Status != "cancelled" {
		t.Errorf("cancelled %+v", got)
	}
	if len(b.heater.written()) != 0 {
		t.Error("a rejected or cancelled write reached the device")
	}
	if c2.ID <= c1.ID {
		t.Errorf("ids %s then %s", c1.ID, c2.ID)
	}
}

// Spec §7: a request expires after its lifetime (the device's own here);
// approving it then is CONFIRMATION_CLOSED.
func TestConfirmationExpires(t *testing.T) {
	b := newBench(t)
	agent := b.as(t, "agent", openhal.ScopeControlLow)
	c := pending(t, write(agent, "bench.heater", true))
	b.clock.Advance(DefaultConfirmTTL - time.Millisecond)
	list := resultOf[openhal.ConfirmationsListResult](t, agent.call("hal/confirmations/list", map[string]any{"status": "pending"}))
	if len(list.Confirmations) != 1 {
		t.Fatalf("expired early: %+v", list)
	}
	b.clock.Advance(time.Millisecond)
	if n := agent.notification("hal/confirmationResolved"); !strings.Contains(string(n.Params), `"status":"expired"`) {
		t.Errorf("resolved: %s", n.raw)
	}
	wantCode(t, b.admin(t).call("hal/confirmations/approve", map[string]any{"id": c.ID}), openhal.CodeConfirmationClosed, "confirmation_closed")
}

// A request outlives its creator's connection, and approval still acts as
// the creator: a revoked token makes it fail.
func TestConfirmationOutlivesConnection(t *testing.T) {
	b := newBench(t)
	agent := b.as(t, "agent", openhal.ScopeControlLow)
	c := pending(t, write(agent, "bench.heater", true))
	agent.close()
	got := resultOf[openhal.Confirmation](t, b.admin(t).call("hal/confirmations/approve", map[string]any{"id": c.ID}))
	if got.Status != "approved" || b.value(t, "bench.heater") != true {
		t.Fatalf("approval after the creator left: %+v", got)
	}

	b.reg.Publish("bench.heater", false, time.Time{})
	agent2 := b.as(t, "agent2", openhal.ScopeControlLow)
	c2 := pending(t, write(agent2, "bench.heater", true))
	if err := b.store.Revoke("agent2"); err != nil {
		t.Fatal(err)
	}
	b.reload(t)
	got = resultOf[openhal.Confirmation](t, b.admin(t).call("hal/confirmations/approve", map[string]any{"id": c2.ID}))
	if got.Status != "failed" || got.Error == nil || got.Error.Code != openhal.CodeUnauthorized {
		t.Fatalf("approval of a revoked token's request: %+v", got)
	}
}

// Approval re-runs the rules: a door opened meanwhile makes it fail with
// BLOCKED.
func TestApprovalRerunsRules(t *testing.T) {
	b := newBench(t)
	agent := b.as(t, "agent", openhal.ScopeControlLow)
	c := pending(t, write(agent, "bench.heater", true))
	b.door.Value(true, time.Time{})
	got := resultOf[openhal.Confirmation](t, b.admin(t).call("hal/confirmations/approve", map[string]any{"id": c.ID}))
	if got.Status != "failed" || got.Error == nil || got.Error.Code != openhal.CodeBlocked {
		t.Fatalf("approval with the door open: %+v", got)
	}
	if len(b.heater.written()) != 0 {
		t.Error("the heater was written")
	}
}

// Approval, rejection, cancellation and expiry of one request race; one
// wins, the others get CONFIRMATION_CLOSED.
func TestConfirmationResolutionsSerialised(t *testing.T) {
	b := newBench(t)
	agent := b.as(t, "agent", openhal.ScopeControlLow)
	for _, id := range b.valves(t, openhal.MaxPendingPerPrincipal) {
		pending(t, write(agent, id, true))
	}
	list := resultOf[openhal.ConfirmationsListResult](t, agent.call("hal/confirmations/list", map[string]any{"status": "pending"}))
	admins := []*client{b.admin(t), b.admin(t)}
	var wg sync.WaitGroup
	wins := make([]int, len(list.Confirmations))
	var mu sync.Mutex
	for i, c := range list.Confirmations {
		for j, cl := range []*client{admins[0], admins[1], agent} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				method := map[int]string{0: "hal/confirmations/approve", 1: "hal/confirmations/reject", 2: "hal/confirmations/cancel"}[j]
				m := cl.callAsync(method, map[string]any{"id": c.ID})
				mu.Lock()
				defer mu.Unlock()
				if m.Error == nil {
					wins[i]++
				} else if m.Error.Code != openhal.CodeConfirmationClosed {
					t.Errorf("%s: %s", method, m.raw)
				}
			}()
		}
	}
	wg.Wait()
	for i, w := range wins {
		if w != 1 {
			t.Errorf("confirmation %d resolved %d times", i, w)
		}
	}
}

// Ids are never reused across restarts, and no request survives one.
func TestConfirmationsAcrossRestart(t *testing.T) {
	b := newBench(t)
	agent := b.as(t, "agent", openhal.ScopeControlLow)
	c1 := pending(t, write(agent, "bench.heater", true))

	b2 := newBench(t, func(o *Options) { o.StateDir = b.dir })
	agent2 := b2.as(t, "agent", openhal.ScopeControlLow)
	list := resultOf[openhal.ConfirmationsListResult](t, agent2.call("hal/confirmations/list", nil))
	if len(list.Confirmations) != 0 {
		t.Errorf("a request survived the restart: %+v", list)
	}
	c2 := pending(t, write(agent2, "bench.heater", true))
	if c2.ID <= c1.ID {
		t.Errorf("id %s after a restart, before it %s", c2.ID, c1.ID)
	}
}

// A token limited to some devices sees neither the other devices'
// requests nor their notifications.
func TestLimitedTokenCannotSeeTheHeater(t *testing.T) {
	b := newBench(t)
	narrow := b.as(t, "narrow", openhal.ScopeControlLow, "bench.led")
	agent := b.as(t, "agent", openhal.ScopeControlLow)
	wantCode(t, write(narrow, "bench.heater", true), openhal.CodeDeviceNotFound, "")
	wantCode(t, narrow.call("hal/devices/get", map[string]any{"device": "bench.heater"}), openhal.CodeDeviceNotFound, "")
	c := pending(t, write(agent, "bench.heater", true))
	list := resultOf[openhal.ConfirmationsListResult](t, narrow.call("hal/confirmations/list", nil))
	if len(list.Confirmations) != 0 {
		t.Errorf("the narrow token sees %+v", list)
	}
	wantCode(t, narrow.call("hal/confirmations/cancel", map[string]any{"id": c.ID}), openhal.CodeConfirmationNotFound, "")
	wantOK(t, write(narrow, "bench.led", true))
	if n := narrow.notification("hal/value"); !strings.Contains(string(n.Params), "bench.led") {
		t.Errorf("the narrow token's first value is %s", n.raw)
	}
}
