package gateway_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/openhal/gateway/internal/statedir"
)

// TestBinaryStateDirFindsItsGateway: two gateways on different ports and
// state directories. A client command given state directory A, and no
// --hub, reaches A and only A (its write shows on A, not on B); once A
// stops (cleanly, or killed), it says that A is not running, and reaches
// nothing else. `adapter install` into A then reloads no gateway.
func TestBinaryStateDirFindsItsGateway(t *testing.T) {
	t.Parallel()
	dirA, dirB := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	a, b := startGateway(t, dirA), startGateway(t, dirB)
	read := func(g *gateway) string {
		return strings.TrimSpace(gwOK(t, "read", "sim.led", "--hub", g.ws, "--state-dir", g.dir))
	}
	gwOK(t, "write", "sim.led", "true", "--state-dir", dirA)
	if ra, rb := read(a), read(b); ra != "true" || rb != "false" {
		t.Fatalf("after a write with --state-dir A: sim.led %s on A, %s on B; want true, false", ra, rb)
	}
	if out := gwOK(t, "devices", "--state-dir", dirB, "--json"); !strings.Contains(out, "sim.led") {
		t.Errorf("devices with --state-dir B: %q", out)
	}

	a.stop(t)
	r := gw(t, "read", "sim.led", "--state-dir", dirA)
	wantOneLineError(t, r, "no gateway is running on state directory "+dirA)
	if _, err := statedir.Find(dirA); err != statedir.ErrNotRunning {
		t.Errorf("record after a clean stop: %v, want none", err)
	}

	out := gwOK(t, "adapter", "install", buildNotifier(t), "--state-dir", dirA)
	if !strings.Contains(out, "no gateway is running on state directory "+dirA) {
		t.Errorf("adapter install with A stopped: %q, want it to say A is not running", out)
	}
	if strings.Contains(b.err.text(), "reload") {
		t.Errorf("B was asked to reload:\n%s", b.err.text())
	}

	b.kill(t) // leaves its record: the process it names is gone
	r = gw(t, "status", "--state-dir", dirB)
	wantOneLineError(t, r, "no gateway is running on state directory "+dirB)
}
