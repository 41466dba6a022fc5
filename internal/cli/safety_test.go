package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/internal/halhub/audit"
	"github.com/openhal/gateway/internal/halhub/hubtest"
	"github.com/openhal/gateway/openhal"
	"github.com/openhal/gateway/openhal/gatewayext"
)

// The safety commands' tests run in process against the real Hub, as the
// other client commands' tests do (package halhub/hubtest); the whole-binary
// story is in e2e/gateway/binary_safety_test.go.

// stuckRelay is a device with a safe value that refuses every write.
type stuckRelay struct{}

func (stuckRelay) Descriptor() device.Descriptor {
	return device.Descriptor{ID: "sim.relay", Kind: device.KindGPIOOutput, Access: device.AccessReadWrite, Risk: device.RiskLow,
		Schema: device.Schema{Type: device.TypeBoolean}, Safe: false, Source: "sim", State: device.StateOK}
}

func (stuckRelay) Write(context.Context, device.WriteRequest) (device.WriteResult, error) {
	return device.WriteResult{}, errors.New("relay welded shut")
}

// TestStopCommand: the stop lists what went safe, what failed with its
// full error and what it left as it was (hubtest's sim.led has no safe
// value), and exits 1 for the failure; resume lifts it.
func TestStopCommand(t *testing.T) {
	noEnv(t)
	hub := hubtest.New(t)
	hub.Add(stuckRelay{})
	url := hub.Listen("tcp")
	agent := []string{"--hub", url, "--token", hub.Agent}
	admin := []string{"--hub", url, "--token", hub.Admin}

	out, _, err := runClient(t, cliApp.cmdStop, append(agent, "--reason", "smoke")...)
	want := "emergency stop engaged: only safe values may be written until an admin runs `gateway resume`\n" +
		"safe: sim.heater\n" +
		"FAILED: sim.relay: write sim.relay: relay welded shut\n" +
		"left as they are: sim.led (it declares no safe value)\n"
	if out != want {
		t.Errorf("stop printed\n%s\nwant\n%s", out, want)
	}
	if err == nil || err.Error() != "the emergency stop is engaged, but 1 device did not reach its safe value: sim.relay" {
		t.Errorf("stop returned %v", err)
	}
	if !hub.Hub().Stopped() {
		t.Fatal("the hub is not stopped")
	}

	out, _, err = runClient(t, cliApp.cmdStop, append(agent, "--json")...)
	var res openhal.StopResult
	if jerr := json.Unmarshal([]byte(out), &res); jerr != nil || strings.Count(out, "\n") != 1 || !res.Stopped ||
		len(res.Failed) != 1 || res.Failed[0].Device != "sim.relay" || err == nil || !res.AlreadyStopped {
		t.Errorf("stop --json printed %q (%v), returned %v", out, jerr, err)
	}
	// A second stop says so, and that the safe values went out again.
	out, _, _ = runClient(t, cliApp.cmdStop, agent...)
	if first, _, _ := strings.Cut(out, "\n"); first != "emergency stop was already engaged: safe values driven again; only safe values may be written until an admin runs `gateway resume`" ||
		!strings.Contains(out, "\nsafe: sim.heater\n") {
		t.Errorf("a second stop printed %q", out)
	}

	_, _, err = runClient(t, cliApp.cmdResume, agent...)
	if err == nil || err.Error() != "hal/resume needs scope admin; this token has control_low" {
		t.Errorf("resume by an agent: %v", err)
	}
	out, _, err = runClient(t, cliApp.cmdResume, admin...)
	if err != nil || out != "resumed: the emergency stop is off and writes are accepted again\n" || hub.Hub().Stopped() {
		t.Errorf("resume printed %q, %v (stopped: %v)", out, err, hub.Hub().Stopped())
	}
	// A resume when not stopped says that nothing changed.
	out, _, err = runClient(t, cliApp.cmdResume, admin...)
	if err != nil || out != "not stopped: the emergency stop was not engaged, nothing changed\n" {
		t.Errorf("a second resume printed %q, %v", out, err)
	}
	out, _, err = runClient(t, cliApp.cmdResume, append(admin, "--json")...)
	if err != nil || out != `{"stopped":false,"wasStopped":false}`+"\n" {
		t.Errorf("a second resume --json printed %q, %v", out, err)
	}
	if _, _, err := runClient(t, cliApp.cmdStop, append(agent, "extra")...); !errors.Is(err, errUsage) {
		t.Errorf("stop with an argument: %v, want a usage error", err)
	}
}

// TestStopLatchFailed: a stop that the Hub engaged but could not keep on
// disk shows what it did, then says what is wrong, and exits 1.
func TestStopLatchFailed(t *testing.T) {
	noEnv(t)
	hub, _ := newAuditHub(t)
	// A directory where the latch file goes: the Hub cannot replace it.
	if err := os.Mkdir(filepath.Join(hub.stateDir, "stop.json"), 0o700); err != nil {
		t.Fatal(err)
	}
	url := hub.Listen("tcp")
	out, _, err := runClient(t, cliApp.cmdStop, "--hub", url, "--token", hub.Agent)
	if out != "emergency stop engaged: only safe values may be written until an admin runs `gateway resume`\nsafe: sim.heater\n"+
		"left as they are: sim.led (it declares no safe value)\n" {
		t.Errorf("stop printed %q", out)
	}
	if err == nil || !strings.HasPrefix(err.Error(), "the emergency stop is engaged, but it is not latched on disk yet (") ||
		!strings.Contains(err.Error(), "stop.json") || strings.Contains(err.Error(), "audit") {
		t.Errorf("stop returned %v", err)
	}
	if !hub.Hub().Stopped() {
		t.Error("the hub is not stopped")
	}
}

// pendingWrite has the agent write sim.heater true and returns the
// confirmation id the CLI printed.
func pendingWrite(t *testing.T, hub *hubtest.Bench, url, reason string) string {
	t.Helper()
	out, _, err := runClient(t, cliApp.cmdWrite, "--hub", url, "--token", hub.Agent, "sim.heater", "true", "--reason", reason)
	m := regexp.MustCompile(`^sim\.heater = true is pending: confirmation (c-\d+) `).FindStringSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("write sim.heater true printed %q, %v; want pending", out, err)
	}
	return m[1]
}

func TestConfirmCommands(t *testing.T) {
	noEnv(t)
	hub := hubtest.New(t)
	url := hub.Listen("ws")
	admin := []string{"--hub", url, "--token", hub.Admin}
	agent := []string{"--hub", url, "--token", hub.Agent}

	id := pendingWrite(t, hub, url, "preheat for run 7")
	out, _, err := runClient(t, cliApp.cmdConfirm, append([]string{"list"}, admin...)...)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if err != nil || len(lines) != 2 ||
		!regexp.MustCompile(`^ID\s+DEVICE\s+VALUE\s+NOW\s+REQUESTED BY\s+REASON\s+STATUS\s+EXPIRES$`).MatchString(lines[0]) ||
		!regexp.MustCompile(`^`+id+`\s+sim\.heater\s+true\s+false\s+agent bench-agent\s+preheat for run 7\s+pending\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`).MatchString(lines[1]) {
		t.Fatalf("confirm list printed %q, %v", out, err)
	}
	out, _, err = runClient(t, cliApp.cmdConfirm, append([]string{"approve", id}, admin...)...)
	if err != nil || !regexp.MustCompile(`^`+id+` approved: sim\.heater = true, requested by agent bench-agent \(applied, seq \d+\)\n$`).MatchString(out) {
		t.Errorf("confirm approve printed %q, %v", out, err)
	}
	// The sentence says it; the code's name and reason only with --json.
	_, _, err = runClient(t, cliApp.cmdConfirm, append([]string{"approve", id}, admin...)...)
	if err == nil || err.Error() != "confirmation "+id+" is already approved" {
		t.Errorf("approving twice: %v", err)
	}
	_, _, err = runClient(t, cliApp.cmdConfirm, append([]string{"approve", id, "--json"}, admin...)...)
	if err == nil || err.Error() != "confirmation "+id+" is already approved (CONFIRMATION_CLOSED): confirmation_closed" {
		t.Errorf("approving twice, --json: %v", err)
	}

	id2 := pendingWrite(t, hub, url, "")
	_, _, err = runClient(t, cliApp.cmdConfirm, append([]string{"cancel", id2}, admin...)...)
	if err == nil || err.Error() != "only bench-agent may cancel confirmation "+id2 {
		t.Errorf("cancel by another principal: %v", err)
	}
	out, _, err = runClient(t, cliApp.cmdConfirm, append([]string{"cancel", id2}, agent...)...)
	if err != nil || out != id2+" cancelled: sim.heater = true, requested by agent bench-agent\n" {
		t.Errorf("confirm cancel printed %q, %v", out, err)
	}
	id3 := pendingWrite(t, hub, url, "")
	out, _, err = runClient(t, cliApp.cmdConfirm, append([]string{"reject", "--reason", "not today", id3}, admin...)...)
	if err != nil || out != id3+" rejected: sim.heater = true, requested by agent bench-agent: not today\n" {
		t.Errorf("confirm reject printed %q, %v", out, err)
	}

	out, _, err = runClient(t, cliApp.cmdConfirm, append([]string{"list", "--status", "rejected", "--json"}, agent...)...)
	var res openhal.ConfirmationsListResult
	if jerr := json.Unmarshal([]byte(out), &res); err != nil || jerr != nil || len(res.Confirmations) != 1 ||
		res.Confirmations[0].ID != id3 || res.Confirmations[0].ResolveReason != "not today" {
		t.Errorf("confirm list --status rejected --json printed %q, %v, %v", out, err, jerr)
	}

	// An approval whose write is then refused: the request's creator was
	// revoked meanwhile.
	id4 := pendingWrite(t, hub, url, "")
	hub.Revoke("bench-agent")
	out, _, err = runClient(t, cliApp.cmdConfirm, append([]string{"approve", id4}, admin...)...)
	want := "confirmation " + id4 + " failed: approved, but the write of sim.heater = true then failed: " +
		"the token of bench-agent was revoked"
	if out != "" || err == nil || err.Error() != want {
		t.Errorf("approving a revoked token's request printed %q, returned %v; want %q", out, err, want)
	}

	for _, tc := range []struct {
		args []string
		want string // "" for a usage error
	}{
		{nil, ""},
		{[]string{"approve"}, ""},
		{[]string{"approve", "a", "b"}, ""},
		{[]string{"list", "extra"}, ""},
		{[]string{"bless", "c-1"}, `unknown subcommand "bless"`},
		{[]string{"list", "--status", "done"}, `--status "done" is not one of pending, approved`},
		{append([]string{"approve", "c-99999999"}, admin...), `no confirmation "c-99999999"`},
	} {
		_, _, err := runClient(t, cliApp.cmdConfirm, tc.args...)
		switch {
		case tc.want == "" && !errors.Is(err, errUsage):
			t.Errorf("confirm %q: %v, want a usage error", tc.args, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("confirm %q: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestConfirmListPages: `confirm list` follows the Hub's pages, on both
// transports: 48 requests with reasons of 1 KiB do not fit in one message
// of 16 KiB; the table and --json show them all, by id, once each.
func TestConfirmListPages(t *testing.T) {
	noEnv(t)
	hub := hubtest.New(t, hubtest.Configure(func(o *halhub.Options) { o.Limits.MaxMessageBytes = 16 << 10 }))
	for _, tr := range []string{"ws", "tcp"} {
		url := hub.Listen(tr)
		var want []string
		for i := range 48 {
			// One agent each: an agent asking again for the heater
			// replaces its request.
			tok := hub.Token(fmt.Sprintf("%s-agent-%d", tr, i), openhal.KindAgent, openhal.ScopeControlLow)
			out, _, err := runClient(t, cliApp.cmdWrite, "--hub", url, "--token", tok, "--reason", strings.Repeat("r", openhal.MaxReasonBytes), "sim.heater", "true")
			m := regexp.MustCompile(`confirmation (c-\d+) `).FindStringSubmatch(out)
			if err != nil || m == nil {
				t.Fatalf("write: %q, %v", out, err)
			}
			want = append(want, m[1])
		}
		admin := []string{"--hub", url, "--token", hub.Admin}
		out, _, err := runClient(t, cliApp.cmdConfirm, append([]string{"list", "--status", "pending"}, admin...)...)
		var got []string
		for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n")[1:] {
			got = append(got, strings.Fields(line)[0])
		}
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: confirm list: %v, %v; want %v", tr, got, err, want)
		}
		out, _, err = runClient(t, cliApp.cmdConfirm, append([]string{"list", "--status", "pending", "--json"}, admin...)...)
		var res openhal.ConfirmationsListResult
		got = got[:0]
		if jerr := json.Unmarshal([]byte(out), &res); jerr != nil {
			t.Fatalf("%s: confirm list --json printed %.200q: %v", tr, out, jerr)
		}
		for _, c := range res.Confirmations {
			got = append(got, c.ID)
		}
		if err != nil || !slices.Equal(got, want) || res.Next != "" {
			t.Errorf("%s: confirm list --json: %v, next %q, %v; want %v", tr, got, res.Next, err, want)
		}
		// Stopped: every request resolved, room for the next transport's.
		runClient(t, cliApp.cmdStop, admin...)
		runClient(t, cliApp.cmdResume, admin...)
	}
}

// TestAuditCommandShortPages: the Hub sends fewer entries than asked when
// they would not fit in one message; `audit` reads on until an empty page
// and prints them all.
func TestAuditCommandShortPages(t *testing.T) {
	noEnv(t)
	dir := t.TempDir()
	log, err := audit.Open(filepath.Join(dir, "audit"), audit.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	hub := hubtest.New(t, hubtest.Configure(func(o *halhub.Options) { o.StateDir, o.Audit, o.Limits.MaxMessageBytes = dir, log, 16<<10 }))
	const n = 300
	entries := make([]audit.Entry, n)
	for i := range entries {
		entries[i] = audit.Entry{Principal: openhal.Principal{Kind: "agent", Name: "bot"}, Action: "write", Device: "sim.led",
			Value: true, Outcome: "applied", Reason: fmt.Sprintf("%04d", i+1) + strings.Repeat(".", openhal.MaxReasonBytes-4)}
	}
	if _, err := log.Append(context.Background(), entries...); err != nil {
		t.Fatal(err)
	}
	out, _, err := runClient(t, cliApp.cmdAudit, "--json", "--hub", hub.Listen("tcp"), "--token", hub.Admin)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if err != nil || len(lines) != n || !strings.Contains(lines[n-1], `"reason":"0300.`) {
		t.Errorf("audit --json: %d lines, %v; want %d", len(lines), err, n)
	}
}

// auditHub is a hubtest.Bench with a state directory and an audit log.
type auditHub struct {
	*hubtest.Bench
	stateDir string
}

// newAuditHub starts a hubtest.Bench with a state directory (which also
// keeps its tokens) and an audit log.
func newAuditHub(t *testing.T) (*auditHub, *audit.Log) {
	t.Helper()
	dir := t.TempDir()
	log, err := audit.Open(filepath.Join(dir, "audit"), audit.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() }) // after the Hub's own cleanup
	h := hubtest.New(t, hubtest.Configure(func(o *halhub.Options) { o.StateDir, o.Audit = dir, log }))
	return &auditHub{Bench: h, stateDir: dir}, log
}

// TestAuditCommand: pages through more entries than one answer holds,
// from a seq on and up to a limit, as lines or as stored.
func TestAuditCommand(t *testing.T) {
	noEnv(t)
	hub, log := newAuditHub(t)
	url := hub.Listen("tcp")
	admin := []string{"--hub", url, "--token", hub.Admin}

	const n = 2500
	entries := make([]audit.Entry, n)
	for i := range entries {
		entries[i] = audit.Entry{Principal: openhal.Principal{Kind: "agent", Name: "bot"}, Action: "write", Device: "sim.led",
			Value: i%2 == 0, Outcome: "applied", Reason: fmt.Sprintf("n%d", i+1)}
	}
	if _, err := log.Append(context.Background(), entries...); err != nil {
		t.Fatal(err)
	}

	out, errOut, err := runClient(t, cliApp.cmdAudit, append([]string{"--json"}, admin...)...)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if err != nil || errOut != "" || len(lines) != n {
		t.Fatalf("audit --json: %d lines, stderr %q, %v; want %d", len(lines), errOut, err, n)
	}
	for i, line := range lines {
		var e audit.Entry
		if err := json.Unmarshal([]byte(line), &e); err != nil || e.Seq != uint64(i+1) || e.Reason != fmt.Sprintf("n%d", i+1) {
			t.Fatalf("line %d: %q (%v)", i+1, line, err)
		}
	}

	out, _, err = runClient(t, cliApp.cmdAudit, append([]string{"--since", "998", "--limit", "1200"}, admin...)...)
	lines = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	first := regexp.MustCompile(`^ +999 \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z agent:bot +write +sim\.led=true +applied +reason="n999"$`)
	if err != nil || len(lines) != 1200 || !first.MatchString(lines[0]) || !strings.HasPrefix(strings.TrimSpace(lines[1199]), "2198 ") {
		t.Errorf("audit --since 998 --limit 1200: %d lines, %v; first %q, last %q", len(lines), err, lines[0], lines[len(lines)-1])
	}

	// The Hub's own entries follow: a refused write and a resume.
	runClient(t, cliApp.cmdWrite, "--hub", url, "--token", hub.Agent, "sim.door", "true")
	runClient(t, cliApp.cmdResume, admin...)
	out, _, err = runClient(t, cliApp.cmdAudit, append([]string{"--since", fmt.Sprint(n)}, admin...)...)
	want := []*regexp.Regexp{
		regexp.MustCompile(` agent:bench-agent +write +sim\.door=true +refused +error="device sim\.door is read-only"$`),
		regexp.MustCompile(` operator:admin +resume +- +resumed$`),
	}
	lines = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if err != nil || len(lines) != len(want) {
		t.Fatalf("audit --since %d printed %q, %v", n, out, err)
	}
	for i, re := range want {
		if !re.MatchString(lines[i]) {
			t.Errorf("line %q does not match %s", lines[i], re)
		}
	}

	_, _, err = runClient(t, cliApp.cmdAudit, "--hub", url, "--token", hub.Agent)
	if err == nil || err.Error() != "hal/audit/list needs scope admin; this token has control_low" {
		t.Errorf("audit by an agent: %v", err)
	}
	if _, _, err := runClient(t, cliApp.cmdAudit, append([]string{"--limit", "-1"}, admin...)...); err == nil {
		t.Error("audit --limit -1 was accepted")
	}
}

// TestAuditFollow: --follow prints entries as they are written, until
// interrupted.
func TestAuditFollow(t *testing.T) {
	noEnv(t)
	hub, _ := newAuditHub(t)
	url := hub.Listen("ws")
	w := newStream()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- cliApp.runAudit(ctx, []string{"--follow", "--hub", url, "--token", hub.Admin}, w, io.Discard)
	}()
	for i, v := range []string{"true", "false"} {
		if _, _, err := runClient(t, cliApp.cmdWrite, "--hub", url, "--token", hub.Admin, "sim.led", v); err != nil {
			t.Fatal(err)
		}
		w.waitFor(t, i, fmt.Sprintf(`^ +%d \S+ operator:admin +write +sim\.led=%s +applied$`, i+1, v), 10*time.Second)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("follow ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("follow still running 10 s after its context ended")
	}
}

// TestAuditCommandPages: the Hub pages by bytes, so its pages hold fewer
// entries than asked for; --limit N still prints N (the newest N, or with
// --since the first N after it), and --follow prints every entry, across
// pages, then the new ones.
func TestAuditCommandPages(t *testing.T) {
	noEnv(t)
	hub, log := newAuditHub(t)
	url := hub.Listen("tcp")
	admin := []string{"--hub", url, "--token", hub.Admin}
	const n = 700
	entries := make([]audit.Entry, n)
	for i := range entries {
		entries[i] = audit.Entry{Principal: openhal.Principal{Kind: "agent", Name: "bot"}, Action: "write", Device: "sim.led",
			Value: true, Outcome: "applied", Reason: fmt.Sprintf("n%d ", i+1) + strings.Repeat("r", 1000)}
	}
	if _, err := log.Append(context.Background(), entries...); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args  []string
		limit int
		first uint64 // the first seq printed
	}{
		{[]string{"--limit", "650"}, 650, n - 650 + 1}, // the newest
		{[]string{"--limit", fmt.Sprint(n)}, n, 1},
		{[]string{"--limit", "3"}, 3, n - 2},
		{[]string{"--since", "0", "--limit", "650"}, 650, 1}, // the oldest after 0
		{[]string{"--since", "10", "--limit", "3"}, 3, 11},
	} {
		out, errOut, err := runClient(t, cliApp.cmdAudit, append(append([]string{"--json"}, tc.args...), admin...)...)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if err != nil || errOut != "" || len(lines) != tc.limit {
			t.Fatalf("audit %q: %d lines, stderr %q, %v", tc.args, len(lines), errOut, err)
		}
		for i, line := range lines {
			var e audit.Entry
			if err := json.Unmarshal([]byte(line), &e); err != nil || e.Seq != tc.first+uint64(i) {
				t.Fatalf("audit %q: line %d: %.60q (%v), want seq %d", tc.args, i+1, line, err, tc.first+uint64(i))
			}
		}
	}

	w := newStream()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- cliApp.runAudit(ctx, append([]string{"--follow"}, admin...), w, io.Discard) }()
	w.waitFor(t, 0, fmt.Sprintf(`^ +%d .* reason="n%d r+"$`, n, n), 10*time.Second)
	if _, _, err := runClient(t, cliApp.cmdWrite, "--hub", url, "--token", hub.Admin, "sim.led", "false"); err != nil {
		t.Fatal(err)
	}
	w.waitFor(t, n, fmt.Sprintf(`^ +%d \S+ operator:admin +write +sim\.led=false +applied$`, n+1), 10*time.Second)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("follow ended with %v", err)
	}
	if got := w.len(); got != n+1 {
		t.Errorf("follow printed %d lines, want %d", got, n+1)
	}

	// --limit 2 --follow: the newest two, then the new ones.
	w = newStream()
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	go func() {
		done <- cliApp.runAudit(ctx, append([]string{"--limit", "2", "--follow"}, admin...), w, io.Discard)
	}()
	w.waitFor(t, 0, fmt.Sprintf(`^ +%d .* reason="n%d r+"$`, n, n), 10*time.Second)
	w.waitFor(t, 1, fmt.Sprintf(`^ +%d \S+ operator:admin +write`, n+1), 10*time.Second)
	if _, _, err := runClient(t, cliApp.cmdWrite, "--hub", url, "--token", hub.Admin, "sim.led", "true"); err != nil {
		t.Fatal(err)
	}
	w.waitFor(t, 2, fmt.Sprintf(`^ +%d \S+ operator:admin +write +sim\.led=true +applied$`, n+2), 10*time.Second)
	cancel()
	if err := <-done; err != nil || w.len() != 3 {
		t.Errorf("--limit 2 --follow printed %d lines, ended with %v; want 3", w.len(), err)
	}
}

func TestAuditLine(t *testing.T) {
	ts := time.Date(2026, 1, 2, 3, 4, 5, 678901234, time.UTC)
	for _, tc := range []struct {
		e    gatewayext.AuditEntry
		want string
	}{
		{gatewayext.AuditEntry{Seq: 7, TS: ts, Principal: openhal.Principal{Kind: "agent", Name: "bot"}, Action: "write", Device: "sim.heater", Value: false,
			Outcome: "pending", Confirmation: "c-00000001", Reason: `say "hi"`},
			`     7 2026-01-02T03:04:05.678Z agent:bot            write        sim.heater=false         pending   confirmation=c-00000001 reason="say \"hi\""`},
		{gatewayext.AuditEntry{Seq: 1234567, TS: ts, Principal: openhal.Principal{Kind: "hub", Name: "interlock"}, Action: "write", Device: "sim.heater", Value: false,
			Outcome: "blocked", Rule: "interlock", Error: &gatewayext.AuditError{Code: openhal.CodeBlocked, Message: "no", Reason: "interlock"}},
			`1234567 2026-01-02T03:04:05.678Z hub:interlock        write        sim.heater=false         blocked   rule=interlock error="no"`},
		{gatewayext.AuditEntry{Seq: 8, TS: ts, Principal: openhal.Principal{Kind: "operator", Name: "admin"}, Action: "resume", Outcome: "resumed"},
			`     8 2026-01-02T03:04:05.678Z operator:admin       resume       -                        resumed`},
		{gatewayext.AuditEntry{Seq: 9, TS: ts, Principal: openhal.Principal{Kind: "hub", Name: "auth"}, Action: "initialize", Device: "x", Outcome: "unauthorized", Count: 12},
			`     9 2026-01-02T03:04:05.678Z hub:auth             initialize   x                        unauthorized count=12`},
		{gatewayext.AuditEntry{Seq: 10, TS: ts, Principal: openhal.Principal{Kind: "agent", Name: "bot"}, Action: "count", Outcome: "counted", Count: 31,
			From: ts, To: ts.Add(9 * time.Second), By: []gatewayext.AuditTally{{Action: "write", Outcome: "refused", Reason: "scope", Count: 30},
				{Action: "write", Outcome: "blocked", Rule: "interlock", Reason: "interlock", Count: 1}}},
			`    10 2026-01-02T03:04:05.678Z agent:bot            count        -                        counted   count=31 from=2026-01-02T03:04:05.678Z to=2026-01-02T03:04:14.678Z by=write/refused/scope×30 by=write/blocked/interlock×1`},
		{gatewayext.AuditEntry{Seq: 11, TS: ts, Principal: openhal.Principal{Kind: "agent", Name: "bot"}, Action: "write", Device: "sim.led", Outcome: "refused", Reason: "rrr",
			Cut: map[string]gatewayext.AuditCut{"reason": {Bytes: 261120, SHA256: "ab12"}, "device": {Bytes: 300, SHA256: "cd34"}}},
			`    11 2026-01-02T03:04:05.678Z agent:bot            write        sim.led                  refused   reason="rrr" cut=device:300:sha256:cd34 cut=reason:261120:sha256:ab12`},
	} {
		if got := auditLine(tc.e); got != tc.want {
			t.Errorf("auditLine:\n got %q\nwant %q", got, tc.want)
		}
	}
}

// errorText says an error for a person; the code's name and the reason,
// which the message says in words, only when tagged (--json).
func TestErrorText(t *testing.T) {
	for _, tc := range []struct {
		eo     openhal.ErrorObject
		dev    string
		tagged bool
		want   string
	}{
		{openhal.ErrorObject{Code: openhal.CodeTimeout, Message: "device sim.x did not answer in time", Data: json.RawMessage(`{"device":"sim.x","reason":"timeout"}`)}, "sim.x", false,
			"device sim.x did not answer in time"},
		{openhal.ErrorObject{Code: openhal.CodeTimeout, Message: "device sim.x did not answer in time", Data: json.RawMessage(`{"device":"sim.x","reason":"timeout"}`)}, "sim.x", true,
			"device sim.x did not answer in time (TIMEOUT): timeout"},
		{openhal.ErrorObject{Code: openhal.CodeDeviceFault, Message: "bus error", Data: json.RawMessage(`{"detail":"i2c nack","code":5}`)}, "sim.x", false,
			"sim.x: bus error [code=5 detail=\"i2c nack\"]"},
		{openhal.ErrorObject{Code: -1, Message: "odd", Data: json.RawMessage(`[1]`)}, "", false,
			"odd [1]"},
	} {
		if got := errorText(tc.eo, tc.dev, tc.tagged); got != tc.want {
			t.Errorf("errorText(%+v, %v):\n got %q\nwant %q", tc.eo, tc.tagged, got, tc.want)
		}
	}
}
