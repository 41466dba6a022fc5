package halhub

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/halhub/audit"
	"github.com/openhal/gateway/openhal"
)

// withAuditIn gives a bench an audit log in dir, for a test that looks at
// its files.
func withAuditIn(t *testing.T, dir string) (*audit.Log, func(*Options)) {
	t.Helper()
	log, err := audit.Open(dir, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	return log, func(o *Options) { o.Audit = log }
}

// auditEntries decodes every entry of the log, in seq order.
func auditEntries(t *testing.T, log *audit.Log) []audit.Entry {
	t.Helper()
	pg, err := log.List(0, audit.ListOptions{})
	if err != nil || pg.Skipped != 0 {
		t.Fatalf("list: %v, %d skipped", err, pg.Skipped)
	}
	out := make([]audit.Entry, len(pg.Entries))
	for i, raw := range pg.Entries {
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
	}
	return out
}

// tally sums what a principal's entries account for: requests recorded
// one by one with an action and outcome, and counted ones, by "action
// outcome reason".
type tally struct {
	own, counted map[string]int
	counts       []audit.Entry // the count entries
}

func tallyOf(es []audit.Entry, name string) tally {
	tl := tally{own: map[string]int{}, counted: map[string]int{}}
	for _, e := range es {
		if e.Principal.Name != name {
			continue
		}
		if e.Action == audit.ActionCount {
			tl.counts = append(tl.counts, e)
			for _, k := range e.By {
				tl.counted[k.Action+" "+k.Outcome+" "+k.Reason] += k.Count
			}
			continue
		}
		reason := ""
		if e.Error != nil {
			reason = e.Error.Reason
		}
		tl.own[e.Action+" "+e.Outcome+" "+reason]++
	}
	return tl
}

func (tl tally) total(key string) int { return tl.own[key] + tl.counted[key] }

// refuse sends n writes that a read token is refused, each with a 255 KiB
// reason (just under the 256 KiB message limit).
func refuse(t *testing.T, c *client, n int) {
	t.Helper()
	long := strings.Repeat("r", 255<<10)
	for range n {
		wantCode(t, c.call("hal/write", map[string]any{"device": "bench.led", "value": true, "reason": long}), openhal.CodeForbidden, "scope")
	}
}

// Spec §10: refused requests from one principal past a rate are counted
// in one entry; each recorded one is bounded; nothing is lost.
func TestAuditCoalescesRefusals(t *testing.T) {
	log, opt := withAudit(t)
	b := newBench(t, opt)
	reader := b.as(t, "reader", openhal.ScopeRead)
	rate := coalesceRates[groupRefused]

	refuse(t, reader, 40)
	wantCode(t, reader.call("hal/stop", map[string]any{"reason": "not mine to stop"}), openhal.CodeForbidden, "scope")
	es := auditEntries(t, log)
	tl := tallyOf(es, "reader")
	if tl.total("write refused scope") != rate.perWindow || len(tl.counts) != 0 {
		t.Fatalf("before the window ends: %v on their own, %d count entries; want %d and none", tl.own, len(tl.counts), rate.perWindow)
	}
	for _, e := range es {
		line, _ := json.Marshal(e)
		if len(line) > 4<<10 || e.Cut[audit.CutReason].Bytes != 255<<10 {
			t.Fatalf("a refused write's entry takes %d bytes, cut %v", len(line), e.Cut)
		}
	}

	b.clock.Advance(rate.window)
	tl = tallyOf(auditEntries(t, log), "reader")
	if len(tl.counts) != 1 || tl.counts[0].Count != 31 {
		t.Fatalf("after the window: count entries %+v, want one of 31", tl.counts)
	}
	ce := tl.counts[0]
	if tl.total("write refused scope") != 40 || tl.total("stop refused scope") != 1 {
		t.Errorf("accounted for %v + %v, want 40 writes and 1 stop", tl.own, tl.counted)
	}
	if !ce.From.Equal(b.clock.Now().Add(-rate.window)) || ce.To.Before(ce.From) || ce.Principal.Scope != openhal.ScopeRead {
		t.Errorf("count entry %+v", ce)
	}
	if len(ce.By) != 2 || ce.By[0].Count != 30 || ce.By[1].Action != "stop" {
		t.Errorf("count entry by %+v", ce.By)
	}
}

// The count entry of a flood that never stops is written at the end of
// every window, one a window, while it goes on; and once more after it
// ends. Every refused request is accounted for.
func TestAuditCountsWhileTheFloodGoesOn(t *testing.T) {
	log, opt := withAudit(t)
	b := newBench(t, opt)
	reader := b.as(t, "reader", openhal.ScopeRead)
	rate := coalesceRates[groupRefused]
	const perTick, ticks = 3, 35
	step := rate.window / 10
	sent := 0
	for i := range ticks {
		for range perTick {
			wantCode(t, write(reader, "bench.led", true), openhal.CodeForbidden, "scope")
			sent++
		}
		b.clock.Advance(step)
		windows := (i + 1) / 10 // windows ended so far
		if n := len(tallyOf(auditEntries(t, log), "reader").counts); n != windows {
			t.Fatalf("after %s of flood: %d count entries, want %d", time.Duration(i+1)*step, n, windows)
		}
	}
	b.clock.Advance(rate.window)
	tl := tallyOf(auditEntries(t, log), "reader")
	if tl.total("write refused scope") != sent || len(tl.counts) != 4 {
		t.Errorf("accounted for %d of %d refusals in %d count entries, want 4", tl.total("write refused scope"), sent, len(tl.counts))
	}
	if own := tl.own["write refused scope"]; own != 4*rate.perWindow {
		t.Errorf("%d recorded on their own, want %d a window", own, rate.perWindow)
	}
}

// Since any writer may stop the gateway and send blocked writes, those
// kept entries are coalesced too, at their own lower rate, in the kept
// file set: a flood of them cannot fill it.
func TestAuditCoalescesKept(t *testing.T) {
	dir := t.TempDir()
	log, opt := withAuditIn(t, dir)
	b := newBench(t, opt)
	agent := b.as(t, "agent", openhal.ScopeControlLow)
	admin := b.admin(t)
	rate := coalesceRates[groupStops]
	const n = 25
	for range n {
		wantOK(t, agent.call("hal/stop", map[string]any{"reason": "again"}))
	}
	wantOK(t, admin.call("hal/resume", nil))
	b.door.Value(true, time.Time{})
	for range n {
		wantCode(t, write(agent, "bench.heater", true), openhal.CodeBlocked, "")
	}
	tl := tallyOf(auditEntries(t, log), "agent")
	if tl.own["stop stopped "] != rate.perWindow || tl.own["write blocked interlock"] != coalesceRates[groupKept].perWindow || len(tl.counts) != 0 {
		t.Fatalf("before the windows end: %v, %d count entries", tl.own, len(tl.counts))
	}
	b.clock.Advance(rate.window)
	tl = tallyOf(auditEntries(t, log), "agent")
	if tl.total("stop stopped ") != n || tl.total("write blocked interlock") != n || len(tl.counts) != 2 {
		t.Errorf("accounted for %v + %v in %d count entries; want %d stops and %d blocked in 2", tl.own, tl.counted, len(tl.counts), n, n)
	}
	// Both count entries are in the kept set.
	kept, err := os.ReadFile(filepath.Join(dir, "kept.log"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(kept), `"action":"count"`); got != 2 {
		t.Errorf("kept.log holds %d count entries, want 2", got)
	}
	// The admin's own resume was recorded on its own.
	if got := tallyOf(auditEntries(t, log), "root").own["resume resumed "]; got != 1 {
		t.Errorf("%d resume entries", got)
	}
}

// The counts of windows still open are written when the Hub closes.
func TestAuditCountsWrittenAtClose(t *testing.T) {
	log, opt := withAudit(t)
	b := newBench(t, opt)
	reader := b.as(t, "reader", openhal.ScopeRead)
	refuse(t, reader, 15)
	b.hub.Close()
	tl := tallyOf(auditEntries(t, log), "reader")
	if tl.total("write refused scope") != 15 || len(tl.counts) != 1 {
		t.Errorf("after Close: %v + %v", tl.own, tl.counted)
	}
	b.clock.Advance(time.Hour) // the stopped timer writes nothing more
	if got := len(tallyOf(auditEntries(t, log), "reader").counts); got != 1 {
		t.Errorf("%d count entries after the window's time", got)
	}
}

// auditPages lists the whole log through hal/audit/list over a raw
// connection, following next, and returns every entry's seq and the
// longest answer in bytes.
func auditPages(t *testing.T, rc *rawConn, id string, limit int) (seqs []uint64, longest, pages int) {
	t.Helper()
	var since uint64
	for pages = 1; ; pages++ {
		rc.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"hal/audit/list","params":{"since":` + itoa(since) + `,"limit":` + itoa(uint64(limit)) + `}}`)
		line, err := rc.readLine(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		longest = max(longest, len(line)+1)
		var m struct {
			Result openhal.AuditListResult `json:"result"`
			Error  any                     `json:"error"`
		}
		if err := json.Unmarshal(line, &m); err != nil || m.Error != nil {
			t.Fatalf("answer %.200s: %v", line, err)
		}
		for _, raw := range m.Result.Entries {
			var e audit.Entry
			json.Unmarshal(raw, &e)
			seqs = append(seqs, e.Seq)
		}
		if m.Result.Next == nil {
			return seqs, longest, pages
		}
		if len(m.Result.Entries) == 0 || *m.Result.Next < seqs[len(seqs)-1] {
			t.Fatalf("page %d: %d entries, next %d", pages, len(m.Result.Entries), *m.Result.Next)
		}
		since = *m.Result.Next
	}
}

func itoa(n uint64) string { b, _ := json.Marshal(n); return string(b) }

// Each answer to hal/audit/list fits the message limit, whatever the
// entries and the request's id, and next leads through every entry once.
func TestAuditListPagedByBytes(t *testing.T) {
	const maxMessage = 32 << 10
	log, opt := withAudit(t)
	b := newBench(t, opt, func(o *Options) { o.Limits.MaxMessageBytes = maxMessage })
	agent := b.as(t, "agent", openhal.ScopeControlLow)
	reason := strings.Repeat("<", 1000) // 6 bytes each once encoded: every entry near its bound
	const n = 60
	for range n {
		wantOK(t, agent.call("hal/write", map[string]any{"device": "bench.led", "value": true, "reason": reason}))
	}
	rc := b.dialRaw(t, b.testHub.admin, 0)
	for _, id := range []string{`7`, `"` + strings.Repeat("i", 8<<10) + `"`} {
		seqs, longest, pages := auditPages(t, rc, id, 1000)
		if !slices.Equal(seqs, seqRange(1, n)) {
			t.Errorf("id %.10s: listed %v", id, seqs)
		}
		if longest > maxMessage || pages < 2 {
			t.Errorf("id %.10s: %d pages, the longest answer %d bytes; the limit is %d", id, pages, longest, maxMessage)
		}
		t.Logf("id of %d bytes: %d pages, longest %d bytes", len(id), pages, longest)
	}
	_ = log
}

func seqRange(first, last uint64) []uint64 {
	var s []uint64
	for q := first; q <= last; q++ {
		s = append(s, q)
	}
	return s
}

// Spec §10 and §4: an admin limited to some devices sees only its
// devices' entries and the Hub-wide ones (stops, resumes), and may not
// resume.
func TestAuditDeviceLimitedAdmin(t *testing.T) {
	log, opt := withAudit(t)
	b := newBench(t, opt)
	agent := b.as(t, "agent", openhal.ScopeControlHigh)
	reader := b.as(t, "reader", openhal.ScopeRead)
	admin := b.admin(t)
	wantOK(t, agent.call("hal/write", map[string]any{"device": "bench.led", "value": true, "reason": "led, visible"}))
	wantOK(t, agent.call("hal/write", map[string]any{"device": "bench.fan", "value": 50, "reason": "secret fan plan"}))
	wantCode(t, write(reader, "bench.fan", 1), openhal.CodeForbidden, "scope")
	wantOK(t, agent.call("hal/stop", map[string]any{"reason": "drill"}))
	wantOK(t, admin.call("hal/resume", nil))
	refuse(t, reader, 12) // a count entry of refusals: not Hub-wide
	wantOK(t, agent.call("hal/stop", nil))
	b.clock.Advance(time.Hour)

	limited := b.as(t, "ledadmin", openhal.ScopeAdmin, "bench.led")
	res := resultOf[openhal.AuditListResult](t, limited.call("hal/audit/list", map[string]any{"limit": 1000}))
	var got []string
	for _, raw := range res.Entries {
		var e audit.Entry
		json.Unmarshal(raw, &e)
		got = append(got, e.Action+":"+e.Device+":"+e.Outcome)
		if strings.Contains(string(raw), "fan") || (e.Device != "bench.led" && e.Action != "stop" && e.Action != "resume") {
			t.Errorf("the limited admin sees %s", raw)
		}
	}
	// The led's own write, and its safe value driven at each stop, the
	// stops and the resume.
	for _, want := range []string{"write:bench.led:applied", "stop::stopped", "resume::resumed"} {
		if !slices.Contains(got, want) {
			t.Errorf("the limited admin does not see %s: %v", want, got)
		}
	}
	wantCode(t, limited.call("hal/resume", nil), openhal.CodeForbidden, "device_limited")
	if !b.hub.Stopped() {
		t.Error("the limited admin's resume lifted the stop")
	}
	if all := resultOf[openhal.AuditListResult](t, admin.call("hal/audit/list", map[string]any{"limit": 1000})); len(all.Entries) <= len(res.Entries) {
		t.Errorf("the unlimited admin sees %d entries, the limited one %d", len(all.Entries), len(res.Entries))
	}
	_ = log
}
