package gateway_test

// Whole-binary tests of the audit log's promise (spec §10): no client can
// erase the history, and a token limited to some devices sees only its
// part of it. The helpers are in binary_helpers_test.go and
// binary_safety_test.go.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/internal/halhub/audit"
	"github.com/openhal/gateway/openhal"
)

// Documented bounds of the audit directory (docs/protocol.md, "Audit
// log"): each file set keeps 8 rotated files besides its current one,
// each under 8 MiB.
const (
	auditFileBytes = 8 << 20
	auditRotated   = 8
)

// floodCounts is what a flood sent, by principal and kind, as the
// answers said.
type floodCounts struct {
	mu sync.Mutex
	n  map[string]int // "<principal> <action> <outcome>"
}

func (f *floodCounts) add(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == nil {
		f.n = map[string]int{}
	}
	f.n[key]++
}

// flood runs perConn goroutines on each connection, each sending writes
// made by next(i) until it has sent perGoroutine, as fast as the answers
// come, and counts the answers by outcome.
func flood(t *testing.T, conns []*halclient.Conn, perConn, perGoroutine int, who string, counts *floodCounts, next func(i int) (dev string, value any, reason string)) {
	t.Helper()
	var wg sync.WaitGroup
	for _, c := range conns {
		for range perConn {
			wg.Go(func() {
				for i := range perGoroutine {
					dev, value, reason := next(i)
					_, err := c.Write(context.Background(), dev, value, reason)
					var he *halclient.HubError
					switch {
					case err == nil:
						counts.add(who + " write applied")
					case errors.As(err, &he) && he.Code() == openhal.CodeBlocked:
						counts.add(who + " write blocked")
					case errors.As(err, &he):
						counts.add(who + " write refused")
					default:
						t.Errorf("%s: write %s: %v", who, dev, err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
}

// dialBoth opens n connections for tok, alternately over TCP and
// WebSocket.
func dialBoth(t *testing.T, g *gateway, tok string, n int) []*halclient.Conn {
	t.Helper()
	cs := make([]*halclient.Conn, n)
	for i := range cs {
		url := g.tcp
		if i%2 == 1 {
			url = g.ws
		}
		c, err := dial(t, url, tok)
		if err != nil {
			t.Fatal(err)
		}
		cs[i] = c
	}
	return cs
}

// auditJSON lists the whole log with `gateway audit --json` (following its
// pages) as admin.
func auditJSON(t *testing.T, g *gateway, args ...string) []audit.Entry {
	t.Helper()
	r := gw(t, append([]string{"audit", "--json", "--hub", g.tcp, "--state-dir", g.dir}, args...)...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("audit --json: exit %d, stderr %q", r.code, r.stderr)
	}
	var es []audit.Entry
	for _, line := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
		if line == "" {
			continue
		}
		if len(line) > audit.EntryLimit {
			t.Errorf("an entry of %d bytes, more than %d", len(line), audit.EntryLimit)
		}
		var e audit.Entry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("audit --json printed %.100q: %v", line, err)
		}
		es = append(es, e)
	}
	return es
}

// accounted sums, per "<principal> <action> <outcome>", the requests the
// entries record: one each, and a count entry's by.
func accounted(es []audit.Entry) map[string]int {
	n := map[string]int{}
	for _, e := range es {
		if e.Action == audit.ActionCount {
			for _, k := range e.By {
				n[e.Principal.Name+" "+k.Action+" "+k.Outcome] += k.Count
			}
			continue
		}
		n[e.Principal.Name+" "+e.Action+" "+e.Outcome]++
	}
	return n
}

// checkAuditDir checks the files against the documented bounds and
// returns their total size.
func checkAuditDir(t *testing.T, dir string) int64 {
	t.Helper()
	var total int64
	for _, set := range []string{"audit", "kept"} {
		rotated, _ := filepath.Glob(filepath.Join(dir, set+"-*.log"))
		if len(rotated) > auditRotated {
			t.Errorf("%d rotated %s files, more than %d", len(rotated), set, auditRotated)
		}
		for _, name := range append(rotated, filepath.Join(dir, set+".log")) {
			fi, err := os.Stat(name)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Size() > auditFileBytes {
				t.Errorf("%s: %d bytes, more than %d", name, fi.Size(), auditFileBytes)
			}
			total += fi.Size()
		}
	}
	return total
}

// TestBinaryAuditFlood is the attack on the history, on the real
// binary: after an admin's stop and resume, a read token floods refused
// writes with 255 KiB reasons and a control_high writer floods writes
// with long reasons (applied, refused, blocked), as fast as they can
// over TCP and WebSocket. The stop and the resume are still in `gateway
// audit` (following its pages), the files stay within their documented
// bounds, and the entries account for every request, one by one or
// counted — the refusals' counts written by their window's timer while
// the gateway runs, the rest at its clean stop.
func TestBinaryAuditFlood(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	g := startGateway(t, dir)
	admin := []string{"--hub", g.tcp, "--state-dir", dir}
	gwOK(t, append([]string{"stop", "--reason", "before the flood"}, admin...)...)
	gwOK(t, append([]string{"resume"}, admin...)...)
	gwOK(t, append([]string{"write", "sim.door", "true"}, admin...)...) // the heater's interlock breaks
	readTok := g.addToken(t, "flood-reader", "read")
	writeTok := g.addToken(t, "flood-writer", "control_high")

	const readerWrites = 320
	huge := strings.Repeat("r", 255<<10) // just under the 256 KiB message limit
	long := strings.Repeat("w", 64<<10)  // a refused write's
	kib := strings.Repeat("k", 1024)     // an accepted write's: the most a reason may hold
	var counts floodCounts
	var wg sync.WaitGroup
	start := time.Now()
	wg.Go(func() {
		flood(t, dialBoth(t, g, readTok, 4), 4, readerWrites/16, "flood-reader", &counts, func(int) (string, any, string) {
			return "sim.led", true, huge
		})
	})
	wg.Go(func() {
		flood(t, dialBoth(t, g, writeTok, 4), 4, 60, "flood-writer", &counts, func(i int) (string, any, string) {
			switch i % 10 {
			case 6, 7, 8:
				return "sim.nope", true, long // DEVICE_NOT_FOUND
			case 9:
				return "sim.heater", true, kib // BLOCKED: the door is open
			}
			return "sim.led", i%2 == 0, kib
		})
	})
	wg.Wait()
	took := time.Since(start)
	sent := counts.n
	t.Logf("flood: %v in %s", sent, took.Round(time.Millisecond))
	if sent["flood-reader write refused"] != readerWrites {
		t.Fatalf("the reader's writes: %v", sent)
	}

	// The refusals' count entries come from their window's timer (10 s),
	// with no further request: wait for them, on the running gateway.
	deadline := time.Now().Add(30 * time.Second)
	for accounted(auditJSON(t, g))["flood-reader write refused"] != readerWrites {
		if time.Now().After(deadline) {
			t.Fatalf("30 s after the flood the reader's refusals are not all accounted for: %v", accounted(auditJSON(t, g)))
		}
		time.Sleep(200 * time.Millisecond) // no event tells of a count entry: poll, with a deadline
	}
	g.stop(t) // writes the counts still open (the blocked writes', 10 minutes)
	if !filesHold(t, filepath.Join(dir, "audit"), `"action":"stop"`, `"reason":"before the flood"`) {
		t.Errorf("no audit file holds the stop any more")
	}

	g = startGateway(t, dir)
	admin = []string{"--hub", g.ws, "--state-dir", dir}
	out := gwOK(t, append([]string{"audit"}, admin...)...)
	for _, re := range []string{
		`(?m)^ +\d+ \S+ operator:admin +stop +- +stopped +reason="before the flood"$`,
		`(?m)^ +\d+ \S+ operator:admin +resume +- +resumed$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("gateway audit lacks %s", re)
		}
	}
	got := accounted(auditJSON(t, g))
	for key, n := range sent {
		if got[key] != n {
			t.Errorf("%s: %d answered, %d in the audit log", key, n, got[key])
		}
	}
	size := checkAuditDir(t, filepath.Join(dir, "audit"))
	t.Logf("audit directory after the flood: %d bytes; accounted %v", size, got)
}

// TestBinaryAuditDeviceLimited: an admin token limited to sim.led sees, in
// `gateway audit`, no entry of another device and none of the other
// agents' reasons for them, but the stops and resumes; its `gateway
// resume` is refused and the stop holds; its /metrics shows sim.led and
// the stop, none of the whole gateway's counts.
func TestBinaryAuditDeviceLimited(t *testing.T) {
	dir := t.TempDir()
	g := startGateway(t, dir)
	admin := []string{"--hub", g.tcp, "--state-dir", dir}
	writer := g.addToken(t, "fan-writer", "control_high")
	agent := []string{"--hub", g.ws, "--token", writer}
	gwOK(t, append([]string{"write", "sim.fan", "40", "--reason", "secret fan plan"}, agent...)...)
	gwOK(t, append([]string{"write", "sim.led", "true", "--reason", "led for all"}, agent...)...)
	gwOK(t, append([]string{"stop", "--reason", "drill"}, agent...)...)
	gwOK(t, append([]string{"resume"}, admin...)...)
	gwOK(t, append([]string{"stop", "--reason", "hold it"}, admin...)...)
	ledAdmin := g.addToken(t, "led-admin", "admin", "--devices", "sim.led")
	limited := []string{"--hub", g.tcp, "--token", ledAdmin}

	r := gw(t, append([]string{"audit", "--json"}, limited...)...)
	if r.code != 0 {
		t.Fatalf("audit as the limited admin: exit %d, %q", r.code, r.stderr)
	}
	if strings.Contains(r.stdout, "sim.fan") || strings.Contains(r.stdout, "secret fan plan") || strings.Contains(r.stdout, "token.add") {
		t.Errorf("the limited admin sees another device's entries or the token changes:\n%s", r.stdout)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var e audit.Entry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if e.Device != "sim.led" && e.Action != "stop" && e.Action != "resume" {
			t.Errorf("the limited admin sees %s", line)
		}
		seen[e.Action+" "+e.Device+" "+e.Reason] = true
	}
	for _, want := range []string{"write sim.led led for all", "stop  drill", "resume  ", "stop  hold it"} {
		if !seen[want] {
			t.Errorf("the limited admin does not see %q: %v", want, seen)
		}
	}

	wantOneLineError(t, gw(t, append([]string{"resume"}, limited...)...), "hal/resume needs a token not limited to some devices")
	// true: false is the LED's safe value, which the stop lets through.
	if r := gw(t, append([]string{"write", "sim.led", "true"}, agent...)...); r.code == 0 || !strings.Contains(r.stderr, "the emergency stop is engaged") {
		t.Errorf("after the limited admin's resume a write got exit %d, %q: the stop was lifted", r.code, r.stderr)
	}

	// /metrics: the limited admin gets sim.led's series and the stop,
	// none of the whole gateway's counts (docs/prometheus.md).
	for _, tc := range []struct {
		tok         string
		hub, hidden bool // the Hub's counts, sim.fan's series
	}{{ledAdmin, false, false}, {readAdminToken(t, dir), true, true}} {
		code, body, fams := promScrape(t, "http://"+g.httpAddr+"/metrics", tc.tok)
		if code != http.StatusOK {
			t.Fatalf("/metrics: %d %q", code, body)
		}
		_, hub := fams["gateway_hal_seq"]
		hidden := strings.Contains(body, `device="sim.fan"`)
		if hub != tc.hub || hidden != tc.hidden || !strings.Contains(body, "\ngateway_emergency_stop 1\n") || !strings.Contains(body, `device="sim.led"`) {
			t.Errorf("/metrics: Hub counts %v (want %v), sim.fan %v (want %v), or no stop or no sim.led:\n%s", hub, tc.hub, hidden, tc.hidden, body)
		}
	}
}

// filesHold reports whether a line of some *.log file in dir holds every
// one of parts.
func filesHold(t *testing.T, dir string, parts ...string) bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
	lines:
		for _, line := range strings.Split(string(b), "\n") {
			for _, p := range parts {
				if !strings.Contains(line, p) {
					continue lines
				}
			}
			return true
		}
	}
	return false
}
