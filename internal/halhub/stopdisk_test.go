package halhub

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/halhub/audit"
	"github.com/openhal/gateway/openhal"
)

// diskBench is a bench whose state directory holds its audit log, as the
// gateway's does.
func diskBench(t *testing.T, auditOpt audit.Options) (*bench, string) {
	t.Helper()
	state := filepath.Join(t.TempDir(), "state")
	log, err := audit.Open(filepath.Join(state, "audit"), auditOpt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	return newBench(t, func(o *Options) { o.StateDir, o.Audit = state, log }), state
}

// The state directory removed under the Hub: the stop engages all the
// same (in memory, safe values driven, writes refused) and its answer and
// hal/stopped say that neither the latch nor the audit entry could be
// written; a resume, which must be recorded, is refused and the stop
// holds. Once the directory is back, Relatch writes the latch again.
func TestStopWithStateDirGone(t *testing.T) {
	b, state := diskBench(t, audit.Options{})
	admin, agent, watcher := b.admin(t), b.as(t, "agent", openhal.ScopeControlLow), b.as(t, "watcher", openhal.ScopeRead)
	wantOK(t, write(admin, "bench.heater", true))
	if err := os.RemoveAll(state); err != nil {
		t.Fatal(err)
	}

	res := resultOf[openhal.StopResult](t, agent.call("hal/stop", map[string]any{"reason": "smoke"}))
	if !res.Stopped || strings.Join(res.SafeApplied, ",") != "bench.fan,bench.heater" || len(res.Failed) != 0 ||
		!strings.Contains(res.LatchFailed, "no such file") || !strings.Contains(res.AuditFailed, "no such file") {
		t.Fatalf("stop result %+v", res)
	}
	if b.value(t, "bench.heater") != false {
		t.Error("the heater is on after the stop")
	}
	n := watcher.notification("hal/stopped")
	for _, want := range []string{`"latchFailed":"`, `"auditFailed":"`, `"safeApplied":["bench.fan","bench.heater"]`} {
		if !strings.Contains(string(n.Params), want) {
			t.Errorf("hal/stopped %s lacks %s", n.raw, want)
		}
	}
	// Refused (STOPPED), and since that cannot be recorded either, the
	// answer is audit_failed: other audited requests fail closed.
	wantCode(t, write(admin, "bench.led", true), openhal.CodeInternalError, "audit_failed")
	if b.value(t, "bench.led") != false {
		t.Error("a write went through the stop")
	}
	if b.hub.LatchFailed() == nil {
		t.Error("LatchFailed is nil with the latch not written")
	}
	wantCode(t, admin.call("hal/resume", nil), openhal.CodeInternalError, "audit_failed")
	if !b.hub.Stopped() {
		t.Fatal("a resume that could not be recorded lifted the stop")
	}

	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := b.hub.Relatch(); err != nil {
		t.Fatalf("relatch: %v", err)
	}
	var latch latchRecord
	raw, err := os.ReadFile(filepath.Join(state, latchFile))
	if err != nil || json.Unmarshal(raw, &latch) != nil || !latch.Stopped || latch.Reason != "smoke" || latch.Principal.Name != "agent" {
		t.Fatalf("latch after relatch: %s, %v", raw, err)
	}
	if err := b.hub.LatchFailed(); err != nil {
		t.Errorf("LatchFailed after a good relatch: %v", err)
	}
	wantOK(t, admin.call("hal/resume", nil))
	if _, err := os.Stat(filepath.Join(state, latchFile)); !os.IsNotExist(err) {
		t.Errorf("the latch is still there after the resume: %v", err)
	}
}

// A stop engaged while a resume's audit entry is being written is not
// lifted by that resume: it answers stopped, and the stop holds.
func TestResumeKeepsAStopEngagedMeanwhile(t *testing.T) {
	var armed atomic.Bool
	inSync, release := make(chan struct{}), make(chan struct{})
	b, _ := diskBench(t, audit.Options{SyncFile: func(f *os.File) error {
		if armed.CompareAndSwap(true, false) {
			close(inSync)
			<-release
		}
		return f.Sync()
	}})
	admin := b.admin(t)
	wantOK(t, admin.call("hal/stop", nil))
	driving := make(chan struct{})
	b.fan.writeFn = func(context.Context, device.WriteRequest) (device.WriteResult, error) {
		close(driving)
		return device.WriteResult{}, nil
	}

	armed.Store(true)
	resumed := make(chan msg, 1)
	go func() { resumed <- admin.callAsync("hal/resume", nil) }()
	<-inSync // the resume's entry is at the disk
	go b.hub.SetStopButton("bench.estop", true)
	<-driving // that stop is engaged: it drives the safe values
	close(release)
	if r := resultOf[openhal.ResumeResult](t, <-resumed); !r.Stopped {
		t.Errorf("the resume answered %+v, want stopped", r)
	}
	if !b.hub.Stopped() {
		t.Error("the resume lifted the stop engaged while it was being recorded")
	}
}

// The latch's copy (LatchCopy, the service's runtime directory) outlives a
// removed state directory: the next run, on a new empty directory, starts
// stopped; its resume removes both. Without the copy it would start with
// the stop lifted.
func TestLatchCopyOutlivesTheStateDir(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	copyPath := filepath.Join(t.TempDir(), "stop.json")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	first := newTestHub(t, func(o *Options) { o.StateDir, o.LatchCopy = state, copyPath })
	c := first.dialTCP(t)
	c.init(first.admin)
	wantOK(t, c.call("hal/stop", map[string]any{"reason": "smoke"}))
	if err := os.RemoveAll(state); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(state, 0o700); err != nil { // systemd's StateDirectory= at the next start
		t.Fatal(err)
	}

	next := newTestHub(t, func(o *Options) { o.StateDir, o.LatchCopy = state, copyPath })
	if err := next.hub.Restore(); err != nil {
		t.Fatal(err)
	}
	if !next.hub.Stopped() {
		t.Fatal("the next run started with the stop lifted: the copy was not read")
	}
	if rec := next.hub.stop.latch; rec.Reason != "smoke" {
		t.Errorf("the next run's stop: %+v", rec)
	}
	c = next.dialTCP(t)
	c.init(next.admin)
	wantOK(t, c.call("hal/resume", nil))
	for _, path := range []string{filepath.Join(state, latchFile), copyPath} {
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("%s after the resume: %v", path, err)
		}
	}
	without := newTestHub(t, func(o *Options) { o.StateDir = state })
	if err := without.hub.Restore(); err != nil {
		t.Fatal(err)
	}
	if without.hub.Stopped() {
		t.Error("a run with neither latch started stopped")
	}
}
