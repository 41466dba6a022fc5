package halhub

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

// confirmationOf finds request id in an admin's hal/confirmations/list.
func (b *bench) confirmationOf(t *testing.T, admin *client, id string) openhal.Confirmation {
	t.Helper()
	list := resultOf[openhal.ConfirmationsListResult](t, admin.call("hal/confirmations/list", nil))
	for _, c := range list.Confirmations {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no %s in %+v", id, list)
	return openhal.Confirmation{}
}

// Spec §7: a write applied to the device after a request was made — by
// its creator, another client, a rule driving it safe, the approval of
// another request — supersedes the request, and so does its creator's
// newer request for the device. The request is resolved "superseded" with
// supersededBy, announced, audited and listed under that status; its
// approval applies nothing (CONFIRMATION_CLOSED). Writes that were not
// applied, and writes of other devices, leave it pending.
func TestSuperseded(t *testing.T) {
	cases := []struct {
		name string
		// setup runs before the request; nil for nothing.
		setup func(t *testing.T, b *bench)
		// act follows the agent's request c for bench.heater = true, and
		// returns what supersedes it ("" for nothing).
		act func(t *testing.T, b *bench, agent *client, c openhal.Confirmation) (by string)
		// value is what supersededBy says was written or asked for;
		// applied that it was a write; heater what reached the heater
		// (since the start) before the approval.
		value   any
		applied bool
		heater  string
	}{
		{"its creator reverses it", nil, func(t *testing.T, b *bench, agent *client, _ openhal.Confirmation) string {
			wantOK(t, write(agent, "bench.heater", false))
			return "agent"
		}, false, true, "[false]"},
		{"another client writes it", nil, func(t *testing.T, b *bench, _ *client, _ openhal.Confirmation) string {
			wantOK(t, write(b.as(t, "operator", openhal.ScopeControlHigh), "bench.heater", true))
			return "operator"
		}, true, true, "[true]"},
		{"an interlock drives it safe", func(t *testing.T, b *bench) {
			wantOK(t, write(b.admin(t), "bench.heater", true)) // the request then asks for what is
		}, func(t *testing.T, b *bench, _ *client, _ openhal.Confirmation) string {
			b.door.Value(true, time.Time{})
			waitFor(t, 5*time.Second, "the interlock to drive the heater safe", func() bool { return len(b.heater.written()) == 2 })
			b.door.Value(false, time.Time{}) // an approval would pass the interlock again
			b.settle(t)
			return "interlock"
		}, false, true, "[true false]"},
		{"another request is approved", nil, func(t *testing.T, b *bench, _ *client, _ openhal.Confirmation) string {
			other := pending(t, write(b.as(t, "other", openhal.ScopeControlLow), "bench.heater", true))
			wantOK(t, b.admin(t).call("hal/confirmations/approve", map[string]any{"id": other.ID}))
			return "other"
		}, true, true, "[true]"},
		{"its creator asks again", nil, func(t *testing.T, b *bench, agent *client, _ openhal.Confirmation) string {
			pending(t, agent.call("hal/write", map[string]any{"device": "bench.heater", "value": true, "reason": "still"}))
			return "agent"
		}, true, false, "[]"},
		{"another device is written", nil, func(t *testing.T, b *bench, agent *client, _ openhal.Confirmation) string {
			wantOK(t, write(agent, "bench.led", true))
			return ""
		}, nil, false, "[]"},
		{"a write is refused", nil, func(t *testing.T, b *bench, _ *client, _ openhal.Confirmation) string {
			b.door.Value(true, time.Time{})
			wantCode(t, write(b.as(t, "operator", openhal.ScopeControlHigh), "bench.heater", true), openhal.CodeBlocked, "")
			b.door.Value(false, time.Time{})
			b.settle(t)
			return ""
		}, nil, false, "[]"},
		{"another principal asks too", nil, func(t *testing.T, b *bench, _ *client, _ openhal.Confirmation) string {
			pending(t, write(b.as(t, "other", openhal.ScopeControlLow), "bench.heater", true))
			return ""
		}, nil, false, "[]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			log, opt := withAudit(t)
			b := newBench(t, opt)
			agent := b.as(t, "agent", openhal.ScopeControlLow)
			watcher := b.as(t, "watcher", openhal.ScopeRead)
			admin := b.admin(t)
			if tc.setup != nil {
				tc.setup(t, b)
			}
			c := pending(t, write(agent, "bench.heater", true))
			by := tc.act(t, b, agent, c)
			if got := fmt.Sprint(b.heater.written()); got != tc.heater {
				t.Fatalf("the heater got %s before the approval, want %s", got, tc.heater)
			}
			got := b.confirmationOf(t, admin, c.ID)
			if by == "" {
				if got.Status != openhal.ConfirmPending || got.SupersededBy != nil {
					t.Fatalf("%s: %+v, want it still pending", tc.name, got)
				}
				if r := resultOf[openhal.Confirmation](t, admin.call("hal/confirmations/approve", map[string]any{"id": c.ID})); r.Status != openhal.ConfirmApproved {
					t.Errorf("approval: %+v", r)
				}
				return
			}
			s := got.SupersededBy
			if got.Status != openhal.ConfirmSuperseded || s == nil || s.Principal.Name != by || s.Value != tc.value || got.ResolvedAt == nil {
				t.Fatalf("%s: %+v (supersededBy %+v), want superseded by %s's %v", tc.name, got, s, by, tc.value)
			}
			if applied := s.Seq > 0 && s.DevSeq > 0 && s.Request == ""; applied != tc.applied || (!applied && !strings.HasPrefix(s.Request, "c-")) {
				t.Errorf("supersededBy %+v: applied %v, want %v (a newer request named otherwise)", s, applied, tc.applied)
			}
			if n := watcher.notification("hal/confirmationResolved"); !strings.Contains(string(n.Params), `"status":"superseded"`) ||
				!strings.Contains(string(n.Params), c.ID) {
				t.Errorf("resolved: %s", n.raw)
			}
			listed := resultOf[openhal.ConfirmationsListResult](t, watcher.call("hal/confirmations/list", map[string]any{"status": "superseded"}))
			if len(listed.Confirmations) != 1 || listed.Confirmations[0].ID != c.ID {
				t.Errorf("status superseded lists %+v", listed)
			}

			m := admin.call("hal/confirmations/approve", map[string]any{"id": c.ID})
			wantCode(t, m, openhal.CodeConfirmationClosed, "confirmation_closed")
			if m.Error.Data["status"] != "superseded" || !strings.Contains(m.Error.Message, "superseded by") {
				t.Errorf("approval of a superseded request: %s", m.raw)
			}
			if after := fmt.Sprint(b.heater.written()); after != tc.heater {
				t.Errorf("the heater got %s after the approval, want %s: the approval applied a superseded request", after, tc.heater)
			}
			var found bool
			for _, e := range entries(t, log) {
				if e.Action == "supersede" {
					found = e.Outcome == "superseded" && e.Confirmation == c.ID && e.Principal.Name == by && e.Device == "bench.heater" && e.Value == true && e.Reason != ""
					if !found {
						t.Errorf("audit entry %+v", e)
					}
				}
			}
			if !found {
				t.Errorf("no supersede entry in the audit log: %s", summary(entries(t, log)))
			}
		})
	}
}

// Spec §6, §7: the emergency stop rejects every pending request (reason
// emergency_stop); its drive to the safe values supersedes none.
func TestStopRejectsRatherThanSupersedes(t *testing.T) {
	b := newBench(t)
	agent := b.as(t, "agent", openhal.ScopeControlLow)
	admin := b.admin(t)
	c := pending(t, write(agent, "bench.heater", true))
	wantOK(t, admin.call("hal/stop", map[string]any{"reason": "test"}))
	got := b.confirmationOf(t, admin, c.ID)
	if got.Status != openhal.ConfirmRejected || got.ResolveReason != "emergency_stop" || got.SupersededBy != nil {
		t.Errorf("after a stop: %+v", got)
	}
}

// The approval of a request waits for its turn at the device behind a
// write that reverses it, which holds the device: the write, applied
// before the approval's turn, supersedes the request the approval already
// took, and the approval applies nothing.
func TestApprovalBehindAReversingWrite(t *testing.T) {
	b := newBench(t)
	hold, entered := make(chan struct{}), make(chan struct{}, 1)
	boiler := output("bench.boiler", device.RiskHigh)
	boiler.desc.Safe = false
	boiler.writeFn = func(_ context.Context, req device.WriteRequest) (device.WriteResult, error) {
		if req.Value == false {
			entered <- struct{}{}
			<-hold
		}
		return device.WriteResult{}, nil
	}
	b.addDevice(t, boiler)
	b.reg.Publish("bench.boiler", false, time.Time{})
	agent := b.as(t, "agent", openhal.ScopeControlLow)
	admin := b.admin(t)
	c := pending(t, write(agent, "bench.boiler", true))

	reversed := make(chan msg, 1)
	go func() {
		reversed <- agent.callAsync("hal/write", map[string]any{"device": "bench.boiler", "value": false})
	}()
	waitChan(t, entered, "the reversing write to reach the boiler")
	approved := make(chan msg, 1)
	go func() { approved <- admin.callAsync("hal/confirmations/approve", map[string]any{"id": c.ID}) }()
	waitFor(t, 5*time.Second, "the approval to wait for its turn at the boiler", func() bool {
		b.hub.order.mu.Lock()
		defer b.hub.order.mu.Unlock()
		return len(b.hub.order.lines["bench.boiler"]) == 2
	})
	close(hold)

	if m := <-reversed; m.Error != nil || !strings.Contains(m.raw, `"applied"`) {
		t.Fatalf("the reversing write: %s", m.raw)
	}
	m := <-approved
	if m.Error == nil || m.Error.Code != openhal.CodeConfirmationClosed || m.Error.Data["status"] != "superseded" {
		t.Errorf("the approval behind the reversing write: %s, want CONFIRMATION_CLOSED superseded", m.raw)
	}
	if got := fmt.Sprint(boiler.written()); got != "[false]" || b.value(t, "bench.boiler") != false {
		t.Errorf("the boiler got %s and is %v, want [false] and off", got, b.value(t, "bench.boiler"))
	}
	got := b.confirmationOf(t, admin, c.ID)
	if got.Status != openhal.ConfirmSuperseded || got.SupersededBy == nil || got.SupersededBy.Principal.Name != "agent" || got.SupersededBy.Value != false {
		t.Errorf("request %+v, want superseded by the agent's false", got)
	}
}

// An approval and the creator's reversal race, in any interleaving: the
// heater always ends off, and the request is approved (applied before
// the reversal) or superseded (nothing applied), never applied after the
// reversal. Run with -race -count=50.
func TestApprovalRacesReversal(t *testing.T) {
	b := newBench(t)
	agent := b.as(t, "agent", openhal.ScopeControlLow)
	admin := b.admin(t)
	outcomes := map[string]int{}
	for round := range 20 {
		c := pending(t, write(agent, "bench.heater", true))
		before := len(b.heater.written())
		var wg sync.WaitGroup
		var approved, reversed msg
		wg.Go(func() { approved = admin.callAsync("hal/confirmations/approve", map[string]any{"id": c.ID}) })
		wg.Go(func() {
			reversed = agent.callAsync("hal/write", map[string]any{"device": "bench.heater", "value": false})
		})
		wg.Wait()
		if reversed.Error != nil || !strings.Contains(reversed.raw, `"applied"`) {
			t.Fatalf("round %d: the reversal: %s", round, reversed.raw)
		}
		wrote := fmt.Sprint(b.heater.written()[before:])
		switch {
		case approved.Error == nil && strings.Contains(approved.raw, `"status":"approved"`) && wrote == "[true false]":
			outcomes["approved first"]++
		case approved.Error != nil && approved.Error.Code == openhal.CodeConfirmationClosed && approved.Error.Data["status"] == "superseded" && wrote == "[false]":
			outcomes["superseded"]++
		default:
			t.Fatalf("round %d: approval %s, the heater got %s", round, approved.raw, wrote)
		}
		if v := b.value(t, "bench.heater"); v != false {
			t.Fatalf("round %d: the heater is %v after its creator turned it off", round, v)
		}
	}
	t.Logf("outcomes: %v", outcomes)
}

// The list shows a pending request with the device's value now beside
// the value asked for; a token limited to some devices is told no
// Hub-wide seq, in current or in supersededBy.
func TestConfirmationShowsCurrentValue(t *testing.T) {
	b := newBench(t)
	agent := b.as(t, "agent", openhal.ScopeControlLow)
	admin := b.admin(t)
	narrow := b.as(t, "narrow", openhal.ScopeRead, "bench.heater")
	c := pending(t, write(agent, "bench.heater", true))
	if c.Current != nil {
		t.Errorf("the write's answer carries current %+v; only the list does", c.Current)
	}
	got := b.confirmationOf(t, admin, c.ID)
	if got.Current == nil || got.Current.Value != false || got.Current.Seq == 0 || got.Current.DevSeq == 0 || got.Value != true {
		t.Errorf("listed %+v (current %+v), want the heater's false beside the true asked for", got, got.Current)
	}
	limited := b.confirmationOf(t, narrow, c.ID)
	if limited.Current == nil || limited.Current.Value != false || limited.Current.Seq != 0 || limited.Current.DevSeq == 0 {
		t.Errorf("a limited token is told current %+v, want the value and devSeq without seq", limited.Current)
	}
	wantOK(t, write(agent, "bench.heater", false))
	for _, cl := range []*client{admin, narrow} {
		got := b.confirmationOf(t, cl, c.ID)
		limitedView := cl == narrow
		if got.Current != nil || got.SupersededBy == nil || (got.SupersededBy.Seq == 0) != limitedView || got.SupersededBy.DevSeq == 0 {
			t.Errorf("superseded as listed (limited %v): current %+v, supersededBy %+v", limitedView, got.Current, got.SupersededBy)
		}
	}
}
