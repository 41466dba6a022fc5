package halclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/internal/halhub/audit"
	"github.com/openhal/gateway/openhal"
)

// withAudit gives the Hub a state directory and an audit log.
func withAudit(t *testing.T) func(*halhub.Options) {
	return func(o *halhub.Options) {
		dir := t.TempDir()
		log, err := audit.Open(dir+"/audit", audit.Options{Logger: o.Logger})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { log.Close() })
		o.StateDir, o.Audit = dir, log
	}
}

// wantCode checks that err is a *HubError with code.
func wantCode(t *testing.T, what string, err error, code int64) {
	t.Helper()
	var he *halclient.HubError
	if !errors.As(err, &he) || he.Code() != code {
		t.Errorf("%s: %v, want a HubError %s", what, err, openhal.CodeName(code))
	}
}

// TestConfirmations: an agent's pending write approved, cancelled and
// rejected through the convenience methods, against the real Hub.
func TestConfirmations(t *testing.T) {
	hub := newTestHub(t, withAudit(t))
	url := hub.Listen("tcp")
	ctx := testCtx(t)
	agent, admin := dial(t, url, hub.Agent), dial(t, url, hub.Admin)

	pending := func() string {
		t.Helper()
		w, err := agent.Write(ctx, "sim.heater", true, "preheat")
		if err != nil || w.Confirmation == nil {
			t.Fatalf("Write = %+v, %v; want pending", w, err)
		}
		return w.Confirmation.ID
	}
	id := pending()
	list, err := admin.Confirmations(ctx, openhal.ConfirmPending)
	if err != nil || len(list) != 1 || list[0].ID != id || list[0].Device != "sim.heater" || list[0].Value != true ||
		list[0].RequestedBy.Name != "bench-agent" || list[0].Reason != "preheat" {
		t.Fatalf("Confirmations(pending) = %+v, %v", list, err)
	}
	if _, err := agent.Approve(ctx, id); err == nil {
		t.Error("an agent approved its own request")
	} else {
		wantCode(t, "Approve by an agent", err, openhal.CodeForbidden)
	}
	c, err := admin.Approve(ctx, id)
	if err != nil || c.Status != openhal.ConfirmApproved || c.Result == nil || c.Result.Value != true || c.ApprovedBy == nil || c.ApprovedBy.Name != "admin" {
		t.Fatalf("Approve = %+v, %v", c, err)
	}
	if v, err := admin.Read(ctx, "sim.heater", -1); err != nil || v.Value != true {
		t.Errorf("sim.heater after the approval = %v, %v", v.Value, err)
	}
	_, err = admin.Approve(ctx, id)
	wantCode(t, "Approve twice", err, openhal.CodeConfirmationClosed)
	_, err = admin.Reject(ctx, "c-nope", "")
	wantCode(t, "Reject of an unknown id", err, openhal.CodeConfirmationNotFound)

	id2 := pending()
	_, err = admin.Cancel(ctx, id2)
	wantCode(t, "Cancel by another principal", err, openhal.CodeForbidden)
	if c, err := agent.Cancel(ctx, id2); err != nil || c.Status != openhal.ConfirmCancelled {
		t.Errorf("Cancel = %+v, %v", c, err)
	}
	id3 := pending()
	if c, err := admin.Reject(ctx, id3, "not today"); err != nil || c.Status != openhal.ConfirmRejected || c.ResolveReason != "not today" {
		t.Errorf("Reject = %+v, %v", c, err)
	}
	all, err := agent.Confirmations(ctx, "")
	var ids []string
	for _, c := range all {
		ids = append(ids, c.ID+" "+c.Status)
	}
	if want := []string{id + " approved", id2 + " cancelled", id3 + " rejected"}; err != nil || !slices.Equal(ids, want) {
		t.Errorf("Confirmations() = %q, %v; want %q", ids, err, want)
	}
}

// stuckRelay is a device with a safe value that refuses every write.
type stuckRelay struct{}

func (stuckRelay) Descriptor() device.Descriptor {
	return device.Descriptor{ID: "sim.relay", Kind: device.KindGPIOOutput, Access: device.AccessReadWrite, Risk: device.RiskLow,
		Schema: device.Schema{Type: device.TypeBoolean}, Safe: false, Source: "sim", State: device.StateOK}
}

func (stuckRelay) Write(context.Context, device.WriteRequest) (device.WriteResult, error) {
	return device.WriteResult{}, errors.New("relay welded shut")
}

// TestStopResume: the stop reports the device that went safe and the one
// that failed with its error; writes are refused until an admin resumes.
func TestStopResume(t *testing.T) {
	hub := newTestHub(t, withAudit(t))
	hub.Add(stuckRelay{})
	url := hub.Listen("ws")
	ctx := testCtx(t)
	agent, admin := dial(t, url, hub.Agent), dial(t, url, hub.Admin)

	id := func() string {
		w, err := agent.Write(ctx, "sim.heater", true, "")
		if err != nil || w.Confirmation == nil {
			t.Fatalf("Write = %+v, %v; want pending", w, err)
		}
		return w.Confirmation.ID
	}()
	res, err := agent.Stop(ctx, "smoke")
	if err != nil || !res.Stopped || !slices.Equal(res.SafeApplied, []string{"sim.heater"}) || len(res.Failed) != 1 {
		t.Fatalf("Stop = %+v, %v", res, err)
	}
	if f := res.Failed[0]; f.Device != "sim.relay" || f.Error.Code != openhal.CodeDeviceFault || !json.Valid(f.Error.Data) {
		t.Errorf("Failed[0] = %+v", f)
	}
	if cs, err := admin.Confirmations(ctx, openhal.ConfirmRejected); err != nil || len(cs) != 1 || cs[0].ID != id || cs[0].ResolveReason != "emergency_stop" {
		t.Errorf("Confirmations(rejected) after the stop = %+v, %v", cs, err)
	}
	_, err = agent.Write(ctx, "sim.led", true, "")
	wantCode(t, "Write while stopped", err, openhal.CodeStopped)
	wantCode(t, "Resume by an agent", agent.Resume(ctx), openhal.CodeForbidden)
	if err := admin.Resume(ctx); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if _, err := agent.Write(ctx, "sim.led", true, ""); err != nil {
		t.Errorf("Write after the resume: %v", err)
	}
}

// TestAudit: the entries come back in seq order, from a seq on, a page at
// a time; an agent may not read them.
func TestAudit(t *testing.T) {
	hub := newTestHub(t, withAudit(t))
	url := hub.Listen("unix")
	ctx := testCtx(t)
	agent, admin := dial(t, url, hub.Agent), dial(t, url, hub.Admin)
	for i := range 5 {
		if _, err := agent.Write(ctx, "sim.led", i%2 == 0, "n"); err != nil {
			t.Fatal(err)
		}
	}
	if err := admin.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	all, err := admin.Audit(ctx, 0, 0)
	if err != nil || len(all.Entries) != 6 || all.Skipped != 0 {
		t.Fatalf("Audit(0, 0) = %d entries, %d skipped, %v; want 6", len(all.Entries), all.Skipped, err)
	}
	var seqs []uint64
	for _, raw := range all.Entries {
		var e audit.Entry
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, e.Seq)
	}
	for i := 1; i < len(seqs); i++ {
		if seqs[i] <= seqs[i-1] {
			t.Errorf("seqs %v are not strictly increasing", seqs)
		}
	}
	page, err := admin.Audit(ctx, seqs[1], 2)
	if err != nil || len(page.Entries) != 2 || string(page.Entries[0]) != string(all.Entries[2]) || string(page.Entries[1]) != string(all.Entries[3]) {
		t.Errorf("Audit(%d, 2) = %s, %v; want entries 3 and 4", seqs[1], page.Entries, err)
	}
	_, err = agent.Audit(ctx, 0, 0)
	wantCode(t, "Audit by an agent", err, openhal.CodeForbidden)
	_, err = admin.Audit(ctx, 0, 5000)
	wantCode(t, "Audit with limit 5000", err, openhal.CodeInvalidParams)
}

// TestAuditRange: the Hub pages the log by bytes, so a page holds fewer
// entries than asked for; AuditRange follows the pages to the limit, or
// to the end.
func TestAuditRange(t *testing.T) {
	var log *audit.Log
	hub := newTestHub(t, withAudit(t), func(o *halhub.Options) { log = o.Audit })
	url := hub.Listen("tcp")
	ctx := testCtx(t)
	admin := dial(t, url, hub.Admin)
	const n = 600
	entries := make([]audit.Entry, n)
	for i := range entries {
		entries[i] = audit.Entry{Principal: openhal.Principal{Kind: "agent", Name: "bot"}, Action: "write", Device: "sim.led",
			Value: true, Outcome: "applied", Reason: strings.Repeat("r", 1000)}
	}
	if _, err := log.Append(ctx, entries...); err != nil {
		t.Fatal(err)
	}
	page, err := admin.Audit(ctx, 0, 1000)
	if err != nil || page.Next == nil || len(page.Entries) >= n {
		t.Fatalf("one page: %d entries, next %v, %v; want fewer than %d, and next", len(page.Entries), page.Next, err, n)
	}
	for _, tc := range []struct {
		since        uint64
		limit, want  int
		first        uint64
		wantNextSeen bool
	}{
		{0, 0, n, 1, false},
		{0, 500, 500, 1, true},
		{100, 0, n - 100, 101, false},
		{0, n, n, 1, false},
	} {
		res, err := admin.AuditRange(ctx, tc.since, tc.limit)
		if err != nil || len(res.Entries) != tc.want || (res.Next != nil) != tc.wantNextSeen {
			t.Errorf("AuditRange(%d, %d): %d entries, next %v, %v; want %d", tc.since, tc.limit, len(res.Entries), res.Next, err, tc.want)
			continue
		}
		for i, raw := range res.Entries {
			var e audit.Entry
			if json.Unmarshal(raw, &e) != nil || e.Seq != tc.first+uint64(i) {
				t.Fatalf("AuditRange(%d, %d): entry %d is %.60s", tc.since, tc.limit, i, raw)
			}
		}
	}
}

// TestInitStopped: a client that connects while the emergency stop is
// engaged learns of it from the hal/initialize answer (who, why, when),
// on every transport; after the resume, Stopped is nil.
func TestInitStopped(t *testing.T) {
	hub := newTestHub(t)
	urls := []string{hub.Listen("ws"), hub.Listen("tcp"), hub.Listen("unix")}
	ctx := testCtx(t)
	for _, url := range urls {
		if st := dial(t, url, hub.Agent).Init().Stopped; st != nil {
			t.Errorf("%s: Stopped = %+v before any stop", url, st)
		}
	}
	before := time.Now().Add(-time.Second)
	if _, err := dial(t, urls[0], hub.Agent).Stop(ctx, "smoke"); err != nil {
		t.Fatal(err)
	}
	for _, url := range urls {
		st := dial(t, url, hub.Admin).Init().Stopped
		if st == nil || st.Principal.Kind != openhal.KindAgent || st.Reason != "smoke" || st.TS.Before(before) || st.TS.After(time.Now()) {
			t.Errorf("%s: Stopped = %+v, want the agent's stop", url, st)
		}
	}
	admin := dial(t, urls[1], hub.Admin)
	if err := admin.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	if st := dial(t, urls[2], hub.Agent).Init().Stopped; st != nil {
		t.Errorf("Stopped = %+v after the resume", st)
	}
}

// fillConfirmations has n principals ask for the heater, with reasons of
// 1 KiB, and returns the ids, by id. Each principal keeps one request for
// the heater waiting (asking again replaces it), so each asks once.
func fillConfirmations(t *testing.T, hub *testHub, url string, n int) []string {
	t.Helper()
	ctx := testCtx(t)
	var ids []string
	for i := range n {
		c := dial(t, url, hub.Token(fmt.Sprint("agent-", i), openhal.KindAgent, openhal.ScopeControlLow))
		w, err := c.Write(ctx, "sim.heater", true, strings.Repeat("r", openhal.MaxReasonBytes))
		if err != nil || w.Confirmation == nil {
			t.Fatalf("Write = %+v, %v; want pending", w, err)
		}
		ids = append(ids, w.Confirmation.ID)
		c.Close()
	}
	return ids
}

// Confirmations follows the Hub's pages: 48 requests of about 1.3 KiB
// each do not fit in one message of 16 KiB, and all come back, by id.
// ConfirmationsPage asks for one page.
func TestConfirmationsPages(t *testing.T) {
	hub := newTestHub(t, func(o *halhub.Options) { o.Limits.MaxMessageBytes = 16 << 10 })
	url := hub.Listen("tcp")
	ctx := testCtx(t)
	want := fillConfirmations(t, hub, url, 48)
	admin := dial(t, url, hub.Admin)
	page, err := admin.ConfirmationsPage(ctx, "", "", 0)
	if err != nil || page.Next == "" || len(page.Confirmations) >= len(want) {
		t.Fatalf("first page: %d requests, next %q, %v; want part of %d and a next", len(page.Confirmations), page.Next, err, len(want))
	}
	page, err = admin.ConfirmationsPage(ctx, openhal.ConfirmPending, want[1], 2)
	if err != nil || len(page.Confirmations) != 2 || page.Confirmations[0].ID != want[2] || page.Next != want[3] {
		t.Errorf("ConfirmationsPage(after %s, limit 2) = %+v, %v", want[1], page, err)
	}
	all, err := admin.Confirmations(ctx, "")
	var got []string
	for _, c := range all {
		got = append(got, c.ID)
	}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("Confirmations = %v, %v; want %v", got, err, want)
	}
}
