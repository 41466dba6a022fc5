package halhub

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/halhub/audit"
	"github.com/openhal/gateway/openhal"
)

// refusal is what the audit log keeps of a refused request's error.
type refusal struct {
	Principal openhal.Principal `json:"principal"`
	Action    string            `json:"action"`
	Device    string            `json:"device"`
	Outcome   string            `json:"outcome"`
	Error     *struct {
		Code   int64  `json:"code"`
		Reason string `json:"reason"`
	} `json:"error"`
}

// refusals returns the audit entries of log that record an error with
// reason.
func refusals(t *testing.T, log *audit.Log, reason string) []refusal {
	t.Helper()
	pg, err := log.List(0, audit.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []refusal
	for _, r := range pg.Entries {
		var e refusal
		if err := json.Unmarshal(r, &e); err != nil {
			t.Fatal(err)
		}
		if e.Error != nil && e.Error.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

// heaterRequest asks for the heater with a reason, as a control_low
// agent: a Confirmation Request.
func heaterRequest(c *client, reason string) msg {
	c.t.Helper()
	return highRiskRequest(c, "bench.heater", reason)
}

// highRiskRequest asks for a high-risk device to be true, with a reason.
func highRiskRequest(c *client, id, reason string) msg {
	c.t.Helper()
	return c.call("hal/write", map[string]any{"device": id, "value": true, "reason": reason})
}

// Spec §7: one principal may have at most 16 requests waiting; the 17th is
// BUSY confirmations_full, audited like any refused write, and holds
// nothing. Resolving one makes room for one. Another connection of the
// same token is the same principal. Asking again for a device whose
// request waits replaces that request: it needs no room.
func TestConfirmationsBoundedPerPrincipal(t *testing.T) {
	log, opt := withAudit(t)
	b := newBench(t, opt)
	valves := b.valves(t, openhal.MaxPendingPerPrincipal)
	tok := b.token(t, "greedy", openhal.ScopeControlLow)
	agent := b.dialTCP(t)
	agent.init(tok)
	again := b.dialTCP(t)
	again.init(tok)
	var first openhal.Confirmation
	for i, id := range valves {
		c := pending(t, highRiskRequest(agent, id, fmt.Sprint("request ", i)))
		if i == 0 {
			first = c
		}
	}
	for _, c := range []*client{agent, again} {
		m := heaterRequest(c, "one more")
		wantCode(t, m, openhal.CodeBusy, "confirmations_full")
		if m.Error.Data["per"] != "principal" || m.Error.Data["max"] != float64(openhal.MaxPendingPerPrincipal) {
			t.Errorf("data %v, want per principal, max %d", m.Error.Data, openhal.MaxPendingPerPrincipal)
		}
	}
	pending(t, highRiskRequest(again, valves[5], "asked again"))
	if n := b.hub.confirms.pending(); n != openhal.MaxPendingPerPrincipal {
		t.Errorf("%d pending, want %d", n, openhal.MaxPendingPerPrincipal)
	}
	got := refusals(t, log, "confirmations_full")
	if len(got) != 2 || got[0].Principal.Name != "greedy" || got[0].Action != "write" || got[0].Device != "bench.heater" ||
		got[0].Outcome != "refused" || got[0].Error.Code != openhal.CodeBusy {
		t.Errorf("audit of the refusals: %+v, want 2 refused writes of greedy", got)
	}
	// Another principal is not held up by greedy's requests.
	pending(t, heaterRequest(b.as(t, "modest", openhal.ScopeControlLow), "mine"))

	wantOK(t, agent.call("hal/confirmations/cancel", map[string]any{"id": first.ID}))
	pending(t, heaterRequest(again, "room again"))
	wantCode(t, highRiskRequest(agent, valves[0], "full again"), openhal.CodeBusy, "confirmations_full")
}

// Spec §7: at most 256 requests wait in all; past that any principal's
// request is BUSY confirmations_full until one is resolved.
func TestConfirmationsBoundedInAll(t *testing.T) {
	b := newBench(t)
	valves := b.valves(t, openhal.MaxPendingPerPrincipal)
	tok := func(i int) string { return b.token(t, fmt.Sprint("agent-", i), openhal.ScopeControlLow) }
	agents := openhal.MaxPending / openhal.MaxPendingPerPrincipal
	var last openhal.Confirmation
	for i := range agents {
		c := b.dialTCP(t)
		c.init(tok(i))
		for _, id := range valves {
			last = pending(t, highRiskRequest(c, id, "x"))
		}
	}
	late := b.dialTCP(t)
	late.init(tok(agents))
	m := heaterRequest(late, "late")
	wantCode(t, m, openhal.CodeBusy, "confirmations_full")
	if m.Error.Data["per"] != "hub" || m.Error.Data["max"] != float64(openhal.MaxPending) {
		t.Errorf("data %v, want per hub, max %d", m.Error.Data, openhal.MaxPending)
	}
	wantOK(t, b.admin(t).call("hal/confirmations/reject", map[string]any{"id": last.ID}))
	pending(t, heaterRequest(late, "now"))
	if n := b.hub.confirms.pending(); n != openhal.MaxPending {
		t.Errorf("%d pending, want %d", n, openhal.MaxPending)
	}
}

// A request holds its value for minutes: one whose JSON passes
// MaxConfirmValueBytes is INVALID_PARAMS too_long naming the device, and
// nothing waits; a token that needs no confirmation writes it.
func TestConfirmationValueBounded(t *testing.T) {
	b := newBench(t)
	text := writerDevice{&testDevice{desc: device.Descriptor{ID: "bench.display", Kind: device.KindSerial, Source: "board",
		Access: device.AccessReadWrite, Risk: device.RiskHigh, Schema: device.Schema{Type: device.TypeString}}}}
	b.addDevice(t, text)
	agent := b.as(t, "agent", openhal.ScopeControlLow)
	fits := strings.Repeat("v", openhal.MaxConfirmValueBytes-2) // with its quotes
	pending(t, write(agent, "bench.display", fits))
	big := fits + "v"
	m := write(agent, "bench.display", big)
	wantCode(t, m, openhal.CodeInvalidParams, "too_long")
	if m.Error.Data["device"] != "bench.display" || m.Error.Data["maxBytes"] != float64(openhal.MaxConfirmValueBytes) || m.Error.Data["param"] != nil {
		t.Errorf("data %v, want the device and maxBytes, no param", m.Error.Data)
	}
	if n := b.hub.confirms.pending(); n != 1 {
		t.Errorf("%d pending, want 1", n)
	}
	wantOK(t, write(b.as(t, "operator", openhal.ScopeControlHigh), "bench.display", big))
	if got := text.written(); len(got) != 1 || got[0] != big {
		t.Errorf("the display got %d writes, want the long one", len(got))
	}
}

// Spec §7: a reason is at most 1 KiB of UTF-8. A longer one on a write is
// INVALID_PARAMS too_long naming the param, found with the params: before
// the device is looked up, so nothing is written. 1024 bytes of two-byte
// characters pass; one more byte does not.
func TestWriteReasonBounded(t *testing.T) {
	b := newBench(t)
	agent := b.as(t, "agent", openhal.ScopeControlLow)
	most := strings.Repeat("é", openhal.MaxReasonBytes/2)
	for _, tc := range []struct {
		device, reason string
		code           int64
		why            string
	}{
		{"bench.led", most, 0, ""},
		{"bench.led", most + "x", openhal.CodeInvalidParams, "too_long"},
		{"bench.nothing", most + "x", openhal.CodeInvalidParams, "too_long"},
		{"bench.heater", strings.Repeat("r", 255<<10), openhal.CodeInvalidParams, "too_long"},
		{"bench.nothing", most, openhal.CodeDeviceNotFound, "device_not_found"},
	} {
		m := agent.call("hal/write", map[string]any{"device": tc.device, "value": true, "reason": tc.reason})
		if tc.code == 0 {
			wantOK(t, m)
			continue
		}
		wantCode(t, m, tc.code, tc.why)
		if tc.why == "too_long" && (m.Error.Data["param"] != "reason" || m.Error.Data["maxBytes"] != float64(openhal.MaxReasonBytes)) {
			t.Errorf("data %v, want param reason, maxBytes %d", m.Error.Data, openhal.MaxReasonBytes)
		}
	}
	if got := b.led.written(); len(got) != 1 {
		t.Errorf("the led got %d writes, want the one with a reason of 1 KiB", len(got))
	}
	if n := b.hub.confirms.pending(); n != 0 {
		t.Errorf("%d pending, want none", n)
	}
}

// The same bound on a rejection's reason: past it the rejection is
// refused and the request still waits. A stop's reason is cut to the
// bound at a character's edge, never refused: the stop engages.
func TestStopAndRejectReasonsBounded(t *testing.T) {
	b := newBench(t)
	agent := b.as(t, "agent", openhal.ScopeControlLow)
	admin := b.admin(t)
	c := pending(t, heaterRequest(agent, "please"))
	long := strings.Repeat("€", openhal.MaxReasonBytes) // 3 bytes each
	m := admin.call("hal/confirmations/reject", map[string]any{"id": c.ID, "reason": long})
	wantCode(t, m, openhal.CodeInvalidParams, "too_long")
	if m.Error.Data["param"] != "reason" {
		t.Errorf("data %v, want param reason", m.Error.Data)
	}
	if n := b.hub.confirms.pending(); n != 1 {
		t.Fatalf("%d pending after a refused rejection, want 1", n)
	}
	wantOK(t, admin.call("hal/confirmations/reject", map[string]any{"id": c.ID, "reason": long[:openhal.MaxReasonBytes-1]}))

	watcher := b.as(t, "watcher", openhal.ScopeRead)
	wantOK(t, agent.call("hal/stop", map[string]any{"reason": long}))
	var st openhal.StoppedParams
	if err := json.Unmarshal(watcher.notification(openhal.NotifyStopped).Params, &st); err != nil {
		t.Fatal(err)
	}
	want := long[:openhal.MaxReasonBytes-1] // 341 whole characters
	if st.Reason != want || !utf8.ValidString(st.Reason) {
		t.Errorf("hal/stopped reason: %d bytes (valid UTF-8: %v), want the first %d bytes", len(st.Reason), utf8.ValidString(st.Reason), len(want))
	}
	if !b.hub.Stopped() {
		t.Error("the stop did not engage")
	}
}

// Spec §7, docs/protocol.md: hal/confirmations/list answers a page that
// fits in one message, with next naming where the next page starts; the
// pages together are every request the token sees, by id, once each.
// limit caps a page; a bad after or limit is INVALID_PARAMS.
func TestConfirmationsListPaged(t *testing.T) {
	const maxMessage = 16 << 10
	b := newBench(t, func(o *Options) { o.Limits.MaxMessageBytes = maxMessage; o.Limits.QueueBytes = 1 << 20 })
	agent := b.as(t, "agent", openhal.ScopeControlLow)
	valves := b.valves(t, openhal.MaxPendingPerPrincipal)
	reason := strings.Repeat("why ", openhal.MaxReasonBytes/4)
	var want []string
	for round := range 3 {
		var ids []string
		for _, id := range valves {
			ids = append(ids, pending(t, highRiskRequest(agent, id, reason)).ID)
		}
		want = append(want, ids...)
		if round < 2 {
			for _, id := range ids {
				wantOK(t, agent.call("hal/confirmations/cancel", map[string]any{"id": id}))
			}
		}
	}
	reader := b.as(t, "reader", openhal.ScopeRead)
	var got []string
	pages := 0
	params := map[string]any{}
	for {
		m := reader.call("hal/confirmations/list", params)
		if len(m.raw) > maxMessage {
			t.Fatalf("page %d: %d bytes, more than the message limit %d", pages, len(m.raw), maxMessage)
		}
		page := resultOf[openhal.ConfirmationsListResult](t, m)
		pages++
		for _, c := range page.Confirmations {
			got = append(got, c.ID)
		}
		if page.Next == "" {
			break
		}
		if page.Next != got[len(got)-1] {
			t.Fatalf("next %q, want the page's last id %q", page.Next, got[len(got)-1])
		}
		params["after"] = page.Next
	}
	if strings.Join(got, " ") != strings.Join(want, " ") || pages < 3 {
		t.Errorf("%d pages listed %d requests, want all %d by id over several pages:\n%v", pages, len(got), len(want), got)
	}

	page := resultOf[openhal.ConfirmationsListResult](t, reader.call("hal/confirmations/list", map[string]any{"status": "pending", "limit": 5}))
	if len(page.Confirmations) != 5 || page.Confirmations[0].ID != want[32] || page.Next != want[36] {
		t.Errorf("first 5 pending: %d, next %q; want from %s, next %s", len(page.Confirmations), page.Next, want[32], want[36])
	}
	page = resultOf[openhal.ConfirmationsListResult](t, reader.call("hal/confirmations/list", map[string]any{"after": want[len(want)-2]}))
	if len(page.Confirmations) != 1 || page.Next != "" {
		t.Errorf("after the last but one: %d, next %q; want the last, no next", len(page.Confirmations), page.Next)
	}
	for _, p := range []map[string]any{{"after": "42"}, {"after": "c-"}, {"after": "c-x1"}, {"limit": 0}, {"limit": openhal.MaxConfirmationsPage + 1}} {
		m := reader.call("hal/confirmations/list", p)
		wantCode(t, m, openhal.CodeInvalidParams, "")
		if _, named := p[m.Error.Data["param"].(string)]; !named {
			t.Errorf("%v: %s, want the param named", p, m.raw)
		}
	}
}
