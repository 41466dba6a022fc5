package halhub

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/halhub/audit"
	"github.com/openhal/gateway/openhal"
)

// withAudit gives a bench an audit log in its state directory.
func withAudit(t *testing.T) (*audit.Log, func(*Options)) {
	t.Helper()
	log, err := audit.Open(t.TempDir(), audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	return log, func(o *Options) { o.Audit = log }
}

type entryLine struct {
	Seq          uint64            `json:"seq"`
	Principal    openhal.Principal `json:"principal"`
	Action       string            `json:"action"`
	Device       string            `json:"device"`
	Value        any               `json:"value"`
	Outcome      string            `json:"outcome"`
	Rule         string            `json:"rule"`
	Confirmation string            `json:"confirmation"`
	Reason       string            `json:"reason"`
	Count        int               `json:"count"`
	By           []audit.Tally     `json:"by"`
}

func entries(t *testing.T, log *audit.Log) []entryLine {
	t.Helper()
	pg, err := log.List(0, audit.ListOptions{})
	raw, skipped := pg.Entries, pg.Skipped
	if err != nil || skipped != 0 {
		t.Fatalf("list: %v, %d skipped", err, skipped)
	}
	out := make([]entryLine, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal(r, &out[i]); err != nil {
			t.Fatalf("%s: %v", r, err)
		}
	}
	return out
}

func summary(es []entryLine) string {
	var parts []string
	for _, e := range es {
		s := fmt.Sprintf("%s:%s:%s:%s", e.Principal.Name, e.Action, e.Device, e.Outcome)
		if e.Rule != "" {
			s += ":" + e.Rule
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// Spec §10: every write attempt and its outcome, confirmations, stops and
// resumes are recorded in order, each before its answer is sent.
func TestAuditRecordsTheSafetyStory(t *testing.T) {
	log, opt := withAudit(t)
	b := newBench(t, opt)
	agent := b.as(t, "agent", openhal.ScopeControlLow)
	admin := b.admin(t)

	wantOK(t, write(agent, "bench.led", true))
	if n := len(entries(t, log)); n != 1 {
		t.Fatalf("the answer came before its entry was on disk: %d entries", n)
	}
	c := pending(t, write(agent, "bench.heater", true))
	wantOK(t, admin.call("hal/confirmations/approve", map[string]any{"id": c.ID}))
	wantCode(t, write(agent, "bench.fan", 95), openhal.CodeBlocked, "maximum")
	wantCode(t, write(agent, "bench.nope", 1), openhal.CodeDeviceNotFound, "")
	wantOK(t, agent.call("hal/stop", map[string]any{"reason": "drill"}))
	wantCode(t, write(agent, "bench.led", false), openhal.CodeStopped, "")
	wantOK(t, admin.call("hal/resume", nil))

	got := entries(t, log)
	want := "agent:write:bench.led:applied agent:write:bench.heater:pending agent:write:bench.heater:applied root:approve:bench.heater:approved " +
		"agent:write:bench.fan:blocked:maximum agent:write:bench.nope:refused " +
		"agent:write:bench.heater:applied agent:write:bench.fan:applied agent:stop::stopped " +
		"agent:write:bench.led:refused root:resume::resumed"
	// The stop's own safe-value writes are the Hub's, as the stopping
	// principal; they come before the stop's entry, in either order.
	if s := summary(got); !sameEntries(s, want) {
		t.Errorf("audit:\n got %s\nwant %s", s, want)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Seq <= got[i-1].Seq {
			t.Errorf("seq %d after %d", got[i].Seq, got[i-1].Seq)
		}
	}
	if got[1].Confirmation != c.ID || got[2].Confirmation != c.ID || got[3].Confirmation != c.ID || got[4].Rule != "maximum" || got[4].Value != 95.0 {
		t.Errorf("entries %+v", got[:5])
	}

	// hal/audit/list by seq.
	res := resultOf[openhal.AuditListResult](t, admin.call("hal/audit/list", map[string]any{"since": got[1].Seq, "limit": 2}))
	if len(res.Entries) != 2 || !strings.Contains(string(res.Entries[0]), fmt.Sprintf(`"seq":%d`, got[2].Seq)) {
		t.Errorf("list since %d: %s", got[1].Seq, res.Entries)
	}
	wantCode(t, admin.call("hal/audit/list", map[string]any{"limit": 0}), openhal.CodeInvalidParams, "out_of_range")
}

// sameEntries compares two space-separated lists as multisets of the
// stop's writes and as sequences otherwise: the stop drives devices in
// parallel.
func sameEntries(got, want string) bool {
	g, w := strings.Fields(got), strings.Fields(want)
	if len(g) != len(w) {
		return false
	}
	count := map[string]int{}
	for i := range g {
		count[g[i]]++
		count[w[i]]--
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return true
}

// An answer never goes out without its entry: when the log cannot
// record, the write is answered INTERNAL_ERROR.
func TestAuditFailureIsAnError(t *testing.T) {
	log, opt := withAudit(t)
	b := newBench(t, opt)
	admin := b.admin(t)
	log.Close()
	wantCode(t, write(admin, "bench.led", true), openhal.CodeInternalError, "audit_failed")
}

// UNAUTHORIZED answers are recorded; rate-limited ones are counted, and
// the count is recorded a window later (auth_test.go has the rest).
func TestAuditUnauthorized(t *testing.T) {
	log, opt := withAudit(t)
	b := newBench(t, opt)
	for i := 0; i < 8; i++ {
		c := b.dialTCP(t)
		c.call("hal/initialize", initParams("0.1", "gw_wrong"))
		c.close()
	}
	b.clock.Advance(61 * time.Second)
	b.admin(t)
	var unauthorized, counted int
	for _, e := range entries(t, log) {
		switch {
		case e.Action == audit.ActionCount:
			for _, by := range e.By {
				if by.Outcome == "unauthorized" && by.Reason == "rate_limited" {
					counted += by.Count
				}
			}
		case e.Outcome == "unauthorized":
			unauthorized++
		default:
			continue
		}
		if e.Principal.Kind != "anonymous" || e.Principal.Name != "127.0.0.1" {
			t.Errorf("principal %+v", e.Principal)
		}
	}
	if unauthorized != 5 || counted != 3 {
		t.Errorf("%d unauthorized entries and %d counted, want 5 and 3", unauthorized, counted)
	}
}

// /metrics shows the stop, pending confirmations and the audit log's
// figures.
func TestSafetyMetrics(t *testing.T) {
	log, opt := withAudit(t)
	b := newBench(t, opt)
	agent := b.as(t, "agent", openhal.ScopeControlLow)
	pending(t, write(agent, "bench.heater", true))
	wantOK(t, agent.call("hal/stop", nil))
	_ = log
	var sb strings.Builder
	b.hub.writeMetrics(&sb)
	for _, want := range []string{"gateway_emergency_stop 1", "gateway_confirmations_pending 0", "gateway_audit_entries_total "} {
		if !strings.Contains(sb.String(), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}
