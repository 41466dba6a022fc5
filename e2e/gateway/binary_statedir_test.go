//go:build linux

package gateway_test

// Whole-binary tests of one gateway per state directory, and of a state
// directory removed under a running gateway (issue 13, point 3).

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// secondRun runs `gateway run` on dir while another gateway holds it and
// checks that it exits 1 at once, its last line naming that one's pid.
func secondRun(t *testing.T, dir string, pid int) {
	t.Helper()
	r := gw(t, gatewayRunArgs(dir)...)
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	want := fmt.Sprintf("gateway: state directory %s is in use by gateway pid %d", dir, pid)
	if r.code != 1 || lines[len(lines)-1] != want || strings.Contains(r.stderr, "msg=ready") {
		t.Errorf("second run: exit %d, stderr:\n%s\nwant exit 1 and last line %q", r.code, r.stderr, want)
	}
}

// TestBinaryOneGatewayPerStateDir: a second `gateway run` on a state
// directory in use exits 1 naming the first one's pid; the commands that
// write the state directory work beside the running gateway; a gateway
// killed as a crash would leave no lock behind.
func TestBinaryOneGatewayPerStateDir(t *testing.T) {
	dir := t.TempDir()
	g := startGateway(t, dir)
	secondRun(t, dir, g.cmd.Process.Pid)

	tok := g.addToken(t, "beside", "read")
	if out := gwOK(t, "read", "sim.led", "--hub", g.ws, "--token", tok); out != "false\n" {
		t.Errorf("read with a token added beside the gateway: %q", out)
	}
	gwOK(t, "token", "revoke", "beside", "--state-dir", dir)
	if names := listTokens(t, dir); strings.Join(names, ",") != "admin" {
		t.Errorf("tokens after the revoke: %v", names)
	}
	if out := gwOK(t, "adapter", "install", installFolder(t), "--state-dir", dir, "--hub", "tcp://127.0.0.1:1"); !strings.HasPrefix(out, "installed racy ") {
		t.Errorf("adapter install beside the gateway: %q", out)
	}
	gwOK(t, "adapter", "remove", "racy", "--state-dir", dir, "--hub", "tcp://127.0.0.1:1")

	g.kill(t)
	again := startGateway(t, dir)
	if b, _ := os.ReadFile(filepath.Join(dir, "gateway.lock")); strings.TrimSpace(string(b)) != fmt.Sprint(again.cmd.Process.Pid) {
		t.Errorf("gateway.lock holds %q, want the new pid %d", b, again.cmd.Process.Pid)
	}
	again.stop(t)
}

// TestBinaryStateDirRemoved: the state directory removed under a running
// gateway (under a systemd watchdog). /healthz says "stuck: state" and
// the watchdog stops petting; the stop still engages, drives the safe
// values and says that it is neither latched nor audited; a resume is
// refused. Made again by its owner, the directory is locked again, the
// stop latched there again, and the gateway healthy again.
func TestBinaryStateDirRemoved(t *testing.T) {
	t.Parallel()
	sock := newNotifySocket(t)
	dir := filepath.Join(t.TempDir(), "state")
	g := startSD(t, gatewayBinary(t), dir, sock, []string{"WATCHDOG_USEC=1000000"})
	admin := g.admin(t)
	hub := []string{"--hub", g.ws, "--token", admin}
	sock.waitFor(`^WATCHDOG=1$`, waitLong)
	gwOK(t, append([]string{"write", "sim.heater", "true"}, hub...)...)

	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	g.err.waitFor(t, 0, `level=ERROR msg="state directory unusable`, waitLong)
	if code, body := g.healthz(t); code != http.StatusServiceUnavailable || body != "stuck: state" {
		t.Errorf("/healthz = %d %q, want 503 \"stuck: state\"", code, body)
	}
	g.err.waitFor(t, 0, `level=ERROR msg="watchdog: parts stuck; systemd's watchdog is not petted" stuck=state$`, waitLong)
	sock.drain()
	if m := sock.next(1500 * time.Millisecond); m == "WATCHDOG=1" {
		t.Fatal("the watchdog was petted with the state directory gone")
	}

	r := gw(t, append([]string{"stop", "--reason", "drill"}, hub...)...)
	if r.code != 1 || !strings.HasPrefix(r.stdout, "emergency stop engaged") || !strings.Contains(r.stdout, "safe: sim.heater") ||
		!strings.HasPrefix(r.stderr, "gateway: the emergency stop is engaged, but it is not latched on disk yet (") ||
		!strings.Contains(r.stderr, "; and the audit log could not record it (") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("stop: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if out := gwOK(t, append([]string{"read", "sim.heater"}, hub...)...); out != "false\n" {
		t.Errorf("sim.heater after the stop: %q", out)
	}
	wantOneLineError(t, gw(t, append([]string{"resume"}, hub...)...), "the audit log could not record this request")

	from := g.err.len()
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	g.err.waitFor(t, from, `msg="stop latch written again" stopped=true`, waitLong)
	var latch struct {
		Stopped bool
		Reason  string
	}
	if b, err := os.ReadFile(filepath.Join(dir, "stop.json")); err != nil || json.Unmarshal(b, &latch) != nil || !latch.Stopped || latch.Reason != "drill" {
		t.Errorf("stop.json in the directory made again: %s, %v", b, err)
	}
	g.err.waitFor(t, from, `msg="state directory usable again"`, waitLong)
	if code, body := g.healthz(t); code != http.StatusOK || !strings.HasPrefix(body, "ok\nstopped by operator admin since ") {
		t.Errorf("/healthz once the directory is back = %d %q", code, body)
	}
	sock.waitFor(`^WATCHDOG=1$`, waitLong)
	secondRun(t, dir, g.cmd.Process.Pid)

	// The audit log carries on in the new directory: the resume is
	// recorded, and lifts the stop.
	if out := gwOK(t, append([]string{"resume"}, hub...)...); !strings.HasPrefix(out, "resumed") {
		t.Errorf("resume printed %q", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "stop.json")); !os.IsNotExist(err) {
		t.Errorf("stop.json after the resume: %v", err)
	}
	if !filesHold(t, filepath.Join(dir, "audit"), `"action":"resume"`) {
		t.Error("the resume is not in the new directory's audit log")
	}
}
