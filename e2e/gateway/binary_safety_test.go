package gateway_test

// Whole-binary tests of the safety model (spec §6, §7, §10): the
// confirmation, interlock and emergency-stop story through the client
// commands, and the audit log's durability under kill -9. The helpers are
// in binary_helpers_test.go.

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/internal/halhub/audit"
	"github.com/openhal/gateway/openhal"
)

// TestBinarySafetyStory is the story end to end: an agent's
// heater write waits for an admin's approval; opening the door turns the
// heater off by itself; the agent's emergency stop turns it off, outlives
// a kill -9, and only an admin's resume lifts it; the audit log holds all
// of it, in order.
func TestBinarySafetyStory(t *testing.T) {
	dir := t.TempDir()
	g := startGateway(t, dir)
	agentTok := g.addToken(t, "bot", "control_low")
	admin := func(args ...string) []string { return append(args, "--hub", g.ws, "--state-dir", dir) }
	agent := func(args ...string) []string { return append(args, "--hub", g.tcp, "--token", agentTok) }
	readHeater := func(want string) {
		t.Helper()
		if out := gwOK(t, admin("read", "sim.heater")...); out != want+"\n" {
			t.Errorf("sim.heater = %q, want %s", out, want)
		}
	}
	watch := startChild(t, admin("watch", "--json")...)
	watch.out.waitFor(t, 0, jsonValue("sim.heater", "false"), waitLong)

	// The agent asks; an admin approves.
	id := pendingHeater(t, agent, "preheat for run 7")
	readHeater("false")
	list := gwOK(t, admin("confirm", "list")...)
	row := `(?m)^` + id + `\s+sim\.heater\s+true\s+false\s+agent bot\s+preheat for run 7\s+pending\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`
	if !regexp.MustCompile(`^ID\s+DEVICE\s+VALUE\s+NOW\s+REQUESTED BY\s+REASON\s+STATUS\s+EXPIRES\n`).MatchString(list) || !regexp.MustCompile(row).MatchString(list) {
		t.Errorf("confirm list printed:\n%s", list)
	}
	out := gwOK(t, admin("confirm", "approve", id)...)
	if !regexp.MustCompile(`^` + id + ` approved: sim\.heater = true, requested by agent bot \(applied, seq \d+\)\n$`).MatchString(out) {
		t.Errorf("confirm approve printed %q", out)
	}
	readHeater("true")
	wantOneLineError(t, gw(t, admin("confirm", "approve", id)...), "confirmation "+id+" is already approved")

	// The outside world opens the door: the interlock turns the heater
	// off by itself, and every client hears why.
	mark := watch.out.len()
	gwOK(t, admin("write", "sim.door", "true")...)
	blocked := waitNotification(t, watch, mark, openhal.NotifyBlocked)
	var bp openhal.BlockedParams
	if err := json.Unmarshal(blocked, &bp); err != nil || bp.Device != "sim.heater" || bp.Rule != openhal.RuleInterlock ||
		bp.Principal.Kind != openhal.KindHub || !strings.Contains(bp.Reason, "sim.door") {
		t.Errorf("hal/blocked %s (%v)", blocked, err)
	}
	watch.out.waitFor(t, mark, jsonValue("sim.heater", "false"), waitLong)
	readHeater("false")
	wantOneLineError(t, gw(t, agent("write", "sim.heater", "true")...), "write to sim.heater blocked")

	// The door closes; the agent asks again: cancelled by itself,
	// rejected by the admin, approved; one more is left pending.
	gwOK(t, admin("write", "sim.door", "false")...)
	cancelled := pendingHeater(t, agent, "")
	if out := gwOK(t, agent("confirm", "cancel", cancelled)...); out != cancelled+" cancelled: sim.heater = true, requested by agent bot\n" {
		t.Errorf("confirm cancel printed %q", out)
	}
	rejected := pendingHeater(t, agent, "")
	if out := gwOK(t, admin("confirm", "reject", rejected, "--reason", "not yet")...); out != rejected+" rejected: sim.heater = true, requested by agent bot: not yet\n" {
		t.Errorf("confirm reject printed %q", out)
	}
	gwOK(t, admin("confirm", "approve", pendingHeater(t, agent, ""))...)
	readHeater("true")
	leftOver := pendingHeater(t, agent, "")

	// The agent stops everything.
	mark = watch.out.len()
	out = gwOK(t, agent("stop", "--reason", "smoke in the lab")...)
	if !strings.HasPrefix(out, "emergency stop engaged: ") || !regexp.MustCompile(`(?m)^safe: sim\.heater$`).MatchString(out) || strings.Contains(out, "FAILED") {
		t.Errorf("stop printed:\n%s", out)
	}
	waitNotification(t, watch, mark, openhal.NotifyStopped)
	readHeater("false")
	wantOneLineError(t, gw(t, agent("write", "sim.led", "true")...), "the emergency stop is engaged")
	wantOneLineError(t, gw(t, admin("write", "sim.heater", "true")...), "the emergency stop is engaged")
	gwOK(t, agent("write", "sim.heater", "false")...) // a safe value is always allowed
	var rej openhal.ConfirmationsListResult
	if err := json.Unmarshal([]byte(gwOK(t, agent("confirm", "list", "--status", "rejected", "--json")...)), &rej); err != nil ||
		!slices.ContainsFunc(rej.Confirmations, func(c openhal.Confirmation) bool { return c.ID == leftOver && c.ResolveReason == "emergency_stop" }) {
		t.Errorf("after the stop, %s is not rejected for emergency_stop: %+v (%v)", leftOver, rej, err)
	}

	// A crash does not lift the stop.
	g.kill(t)
	g = startGateway(t, dir, "--http", g.httpAddr, "--tcp", g.tcpAddr)
	g.secret(agentTok)
	g.err.waitFor(t, 0, `level=WARN msg="the emergency stop is still engaged from an earlier run`, waitLong)
	readHeater("false")
	wantOneLineError(t, gw(t, agent("write", "sim.led", "true")...), "the emergency stop is engaged")
	wantOneLineError(t, gw(t, agent("resume")...), "hal/resume needs scope admin")
	if out := gwOK(t, admin("resume")...); out != "resumed: the emergency stop is off and writes are accepted again\n" {
		t.Errorf("resume printed %q", out)
	}
	gwOK(t, agent("write", "sim.led", "true")...)
	wantOneLineError(t, gw(t, agent("audit")...), "hal/audit/list needs scope admin")
	gwOK(t, "token", "revoke", "bot", "--state-dir", dir)

	// The audit log tells it all, in order.
	me := cliOperator()
	checkAuditStory(t, gwOK(t, admin("audit")...), []string{
		`operator:` + me + ` token.add - created reason="token \"bot\": agent, scope control_low, all devices"`,
		`agent:bot write sim.heater=true pending confirmation=` + id + ` reason="preheat for run 7"`,
		`operator:admin approve sim.heater=true approved confirmation=` + id,
		`operator:admin approve - refused confirmation=` + id + ` error="confirmation ` + id + ` is already approved"`,
		`operator:admin write sim.door=true applied`,
		`hub:interlock write sim.heater=false applied reason="interlock sim.door eq false does not hold"`,
		`agent:bot write sim.heater=true blocked rule=interlock`,
		`operator:admin write sim.door=false applied`,
		`agent:bot cancel sim.heater=true cancelled confirmation=` + cancelled,
		`operator:admin reject sim.heater=true rejected confirmation=` + rejected + ` reason="not yet"`,
		`operator:admin approve sim.heater=true approved`,
		`agent:bot write sim.heater=true pending confirmation=` + leftOver,
		`hub:emergency_stop reject sim.heater=true rejected confirmation=` + leftOver + ` reason="emergency_stop"`,
		`agent:bot write sim.heater=false applied reason="emergency stop"`,
		`agent:bot stop - stopped reason="smoke in the lab"`,
		`agent:bot write sim.led=true refused error="the emergency stop is engaged`,
		`operator:admin write sim.heater=true refused error="the emergency stop is engaged`,
		`agent:bot write sim.heater=false applied`,
		`hub:latched_stop write sim.heater=false applied reason="emergency stop latched at start"`,
		`agent:bot write sim.led=true refused error="the emergency stop is engaged`,
		`agent:bot resume - refused error="hal/resume needs scope admin`,
		`operator:admin resume - resumed`,
		`agent:bot write sim.led=true applied`,
		`operator:` + me + ` token.revoke - revoked reason="token \"bot\""`,
	})
	checkAuditJSON(t, gwOK(t, admin("audit", "--json")...), agentTok, readAdminToken(t, dir))

	// --follow prints what comes next, and ends 0 on an interrupt.
	last := lastSeq(t, gwOK(t, admin("audit", "--json")...))
	follow := startChild(t, admin("audit", "--follow", "--since", strconv.FormatUint(last, 10))...)
	gwOK(t, admin("write", "sim.led", "false")...)
	follow.out.waitFor(t, 0, fmt.Sprintf(`^ *%d \S+ operator:admin +write +sim\.led=false +applied$`, last+1), waitLong)
	if code, _ := follow.signal(t, syscall.SIGINT, 3*time.Second); code != 0 {
		t.Errorf("audit --follow exited %d after SIGINT; stderr %q", code, follow.err.text())
	}
}

// pendingHeater has the agent write sim.heater true, checks that the CLI
// says it is pending (exit 0), and returns the confirmation id.
func pendingHeater(t *testing.T, agent func(...string) []string, reason string) string {
	t.Helper()
	args := agent("write", "sim.heater", "true")
	if reason != "" {
		args = append(args, "--reason", reason)
	}
	out := gwOK(t, args...)
	m := regexp.MustCompile(`^sim\.heater = true is pending: confirmation (c-\d{8}) waits for an admin until (?:\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d \(in (?:\d+h)?(?:\d+m)?\d+s\) \(gateway confirm approve c-\d{8}(?: --hub \S+)?(?: --state-dir \S+)?\)\n$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("write sim.heater true as the agent printed %q, want pending", out)
	}
	return m[1]
}

// waitNotification waits for a notification of watch --json from line
// from on, and returns its params.
func waitNotification(t *testing.T, w *child, from int, method string) json.RawMessage {
	t.Helper()
	_, m := w.out.waitFor(t, from, `^(.*"method":"`+regexp.QuoteMeta(method)+`".*)$`, waitLong)
	var n struct{ Params json.RawMessage }
	if err := json.Unmarshal([]byte(m[1]), &n); err != nil {
		t.Fatalf("watch --json printed %q: %v", m[1], err)
	}
	return n.Params
}

// auditLineRE splits a line of `gateway audit`.
var auditLineRE = regexp.MustCompile(`^ *(\d+) (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) (\S+) +(\S+) +(\S+) +(\S+)(?: +(.*))?$`)

// checkAuditStory checks that every line of `gateway audit` has its form,
// that seqs strictly increase, and that want (principal action target
// outcome, then the start of the rest) appear in that order.
func checkAuditStory(t *testing.T, out string, want []string) {
	t.Helper()
	var got []string
	var prev uint64
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		m := auditLineRE.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("audit printed a line out of form: %q", line)
		}
		seq, _ := strconv.ParseUint(m[1], 10, 64)
		if seq <= prev {
			t.Errorf("audit: seq %d after %d", seq, prev)
		}
		prev = seq
		got = append(got, strings.TrimSpace(strings.Join(m[3:], " ")))
	}
	i := 0
	for _, g := range got {
		if i < len(want) && strings.HasPrefix(g, want[i]) {
			i++
		}
	}
	if i < len(want) {
		t.Errorf("audit lacks, in order, %q (after %d of %d expected lines); it printed:\n%s", want[i], i, len(want), out)
	}
}

// checkAuditJSON checks `gateway audit --json`: one stored entry per line,
// seqs strictly increasing, and no token.
func checkAuditJSON(t *testing.T, out string, tokens ...string) {
	t.Helper()
	var prev uint64
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var e audit.Entry
		if err := json.Unmarshal([]byte(line), &e); err != nil || e.Seq <= prev || e.Action == "" || e.Outcome == "" || e.TS.IsZero() {
			t.Fatalf("audit --json printed %q after seq %d (%v)", line, prev, err)
		}
		prev = e.Seq
	}
	for _, tok := range tokens {
		if strings.Contains(out, tok) {
			t.Error("the audit log shows a token")
		}
	}
}

func lastSeq(t *testing.T, jsonLines string) uint64 {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(jsonLines), "\n")
	var e audit.Entry
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &e); err != nil {
		t.Fatal(err)
	}
	return e.Seq
}

// sentWrite is a write that got an answer, and what the answer said.
type sentWrite struct {
	device string
	value  any
	code   int64 // 0: applied
}

// TestBinaryAuditKill: clients write as fast as they can; the gateway is
// killed with SIGKILL mid-stream; every write that got an answer has its
// line in the audit files, parsing, with its outcome, and no line is torn
// but possibly the last, whose request was never answered.
func TestBinaryAuditKill(t *testing.T) {
	dir := t.TempDir()
	g := startGateway(t, dir)
	admin := readAdminToken(t, dir)
	const conns, perConn, answers = 6, 8, 3000

	var (
		mu       sync.Mutex
		answered = map[string]sentWrite{} // by the write's reason, unique
		count    atomic.Int64
		enough   = make(chan struct{})
		once     sync.Once
		wg       sync.WaitGroup
	)
	cs := make([]*halclient.Conn, conns)
	for ci := range cs {
		url := g.tcp
		if ci%2 == 1 {
			url = g.ws
		}
		var err error
		if cs[ci], err = dial(t, url, admin); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	for ci, c := range cs {
		for gi := range perConn {
			wg.Go(func() {
				for n := 0; ; n++ {
					reason := fmt.Sprintf("k%d.%d.%d", ci, gi, n)
					dev, value := "sim.led", any(n%2 == 0)
					if n%3 == 0 {
						dev, value = "sim.fan", float64(n%101)
					}
					_, err := c.Write(context.Background(), dev, value, reason)
					var he *halclient.HubError
					switch {
					case err == nil:
						mu.Lock()
						answered[reason] = sentWrite{dev, value, 0}
						mu.Unlock()
					case errors.As(err, &he):
						mu.Lock()
						answered[reason] = sentWrite{dev, value, he.Code()}
						mu.Unlock()
					default:
						return // the connection is gone: this write has no answer
					}
					if count.Add(1) == answers {
						once.Do(func() { close(enough) })
					}
				}
			})
		}
	}
	select {
	case <-enough:
	case <-time.After(time.Minute):
		t.Fatalf("only %d writes answered in a minute", count.Load())
	}
	g.kill(t)
	elapsed := time.Since(start)
	wg.Wait()
	t.Logf("%d writes answered in %s over %d connections × %d in flight (%.0f writes/s, audited), then SIGKILL",
		len(answered), elapsed.Round(time.Millisecond), conns, perConn, float64(len(answered))/elapsed.Seconds())

	entries, torn := readAuditFiles(t, filepath.Join(dir, "audit"))
	byReason := map[string]audit.Entry{}
	for _, e := range entries {
		if e.Action == "write" {
			byReason[e.Reason] = e
		}
	}
	var missing, wrong []string
	applied := 0
	for reason, w := range answered {
		e, ok := byReason[reason]
		switch {
		case !ok:
			missing = append(missing, reason)
		case e.Device != w.device || fmt.Sprint(e.Value) != fmt.Sprint(w.value):
			wrong = append(wrong, fmt.Sprintf("%s: wrote %s=%v, logged %s=%v", reason, w.device, w.value, e.Device, e.Value))
		case w.code == 0 && e.Outcome != "applied", w.code != 0 && (e.Error == nil || e.Error.Code != w.code):
			wrong = append(wrong, fmt.Sprintf("%s: answered code %d, logged %s %+v", reason, w.code, e.Outcome, e.Error))
		case w.code == 0:
			applied++
		}
	}
	if len(missing) > 0 || len(wrong) > 0 {
		t.Errorf("%d answered writes have no audit line (e.g. %q); %d have a wrong one (e.g. %q)", len(missing), first(missing), len(wrong), first(wrong))
	}
	t.Logf("%d audit lines after the kill, %d answered writes found (%d applied); last line torn: %v", len(entries), len(answered)-len(missing), applied, torn != "")
	if torn != "" {
		for reason := range answered {
			if strings.Contains(torn, `"reason":"`+reason+`"`) {
				t.Errorf("the torn last line is the answered write %s: %q", reason, torn)
			}
		}
	}

	// The restarted gateway lists the same entries, paging through them.
	g = startGateway(t, dir)
	r := gw(t, "audit", "--json", "--hub", g.tcp, "--state-dir", dir)
	listed := strings.Count(r.stdout, "\n")
	if r.code != 0 || listed != len(entries) {
		t.Errorf("audit --json after the restart: exit %d, %d entries, want %d; stderr %q", r.code, listed, len(entries), r.stderr)
	}
	wantStderr := ""
	if torn != "" {
		wantStderr = "gateway: the hub skipped 1 unreadable audit line\n"
	}
	if r.stderr != wantStderr {
		t.Errorf("audit --json after the restart said %q on stderr (torn last line: %v)", r.stderr, torn != "")
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func readAdminToken(t testing.TB, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// readAuditFiles reads the audit files as they are on disk, both file
// sets (the writes' audit*.log, the kept entries' kept*.log), each oldest
// first: every line must parse and seqs must strictly increase within a
// set; the entries are returned merged by seq. A current file's last line
// may lack its newline (cut short by the kill), and is returned apart.
func readAuditFiles(t *testing.T, dir string) (entries []audit.Entry, torn string) {
	t.Helper()
	for _, set := range []string{"audit", "kept"} {
		files, err := filepath.Glob(filepath.Join(dir, set+"-*.log"))
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(files) // rotated files are named by their first seq, 20 digits
		files = append(files, filepath.Join(dir, set+".log"))
		var prev uint64
		for i, name := range files {
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if j := bytes.LastIndexByte(b, '\n'); j != len(b)-1 {
				if i != len(files)-1 {
					t.Errorf("%s, a rotated file, ends in a line cut short", name)
				}
				torn, b = torn+string(b[j+1:]), b[:j+1]
			}
			sc := bufio.NewScanner(bytes.NewReader(b))
			sc.Buffer(nil, audit.MaxEntryBytes+1)
			for sc.Scan() {
				var e audit.Entry
				if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Seq <= prev {
					t.Fatalf("%s: line %q after seq %d (%v)", name, sc.Text(), prev, err)
				}
				prev = e.Seq
				entries = append(entries, e)
			}
			if err := sc.Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	slices.SortFunc(entries, func(a, b audit.Entry) int { return cmp.Compare(a.Seq, b.Seq) })
	for i := 1; i < len(entries); i++ {
		if entries[i].Seq == entries[i-1].Seq {
			t.Fatalf("seq %d is in both file sets", entries[i].Seq)
		}
	}
	return entries, torn
}

// TestBinaryAuditThroughput measures audited hal/write throughput on the
// real binary: one client writing one at a time, then 16 clients at once,
// whose entries share syncs (the audit log's group commit).
func TestBinaryAuditThroughput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// The admin token holds all 17 connections (one, then sixteen): above
	// its bound of 16 a token.
	g := startGateway(t, dir, "--config", writeConfig(t, "board: sim\nhub:\n  limits: {maxConnectionsPerToken: 17}\n"))
	admin := readAdminToken(t, dir)
	const d = time.Second
	measure := func(clients int) float64 {
		t.Helper()
		cs := make([]*halclient.Conn, clients)
		for i := range cs {
			c, err := dial(t, g.tcp, admin)
			if err != nil {
				t.Fatal(err)
			}
			cs[i] = c
		}
		var total atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		deadline := start.Add(d)
		for i, c := range cs {
			wg.Go(func() {
				for n := 0; time.Now().Before(deadline); n++ {
					if _, err := c.Write(context.Background(), "sim.led", n%2 == 0, ""); err != nil {
						t.Errorf("client %d: %v", i, err)
						return
					}
					total.Add(1)
				}
			})
		}
		wg.Wait()
		return float64(total.Load()) / time.Since(start).Seconds()
	}
	one := measure(1)
	many := measure(16)
	t.Logf("audited hal/write over TCP: 1 client sequential %.0f writes/s; 16 clients concurrent %.0f writes/s (×%.1f)", one, many, many/one)
	if one == 0 || many == 0 {
		t.Fatal("no write was answered")
	}
}
