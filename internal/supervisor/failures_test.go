package supervisor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openhal/gateway/internal/supervisor/manifest"
	"github.com/openhal/gateway/internal/supervisor/restart"
)

// Failures (section 1) are never restarted: tampered (the folder changed,
// found before spawning; or the adapter says it is another), incompatible,
// spawn.
func TestFailures(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		tamper  bool
		reason  restart.Reason
		spawned bool
	}{
		{name: "folder changed", tamper: true, reason: restart.Tampered},
		{name: "wrong name", args: []string{"--name", "other"}, reason: restart.Tampered, spawned: true},
		{name: "wrong version", args: []string{"--version", "9.9.9"}, reason: restart.Tampered, spawned: true},
		{name: "seed's unsupported answer", args: []string{"--unsupported"}, reason: restart.Incompatible, spawned: true},
		{name: "protocol not offered", args: []string{"--protocol", "2"}, reason: restart.Incompatible, spawned: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBench(t, spec{name: "ta", args: tt.args})
			if tt.tamper {
				f := filepath.Join(manifest.Dir(b.stateDir, "ta"), "testadapter")
				if err := os.WriteFile(f, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			b.start()
			st := b.waitState("ta", restart.Failed)
			if st.Reason != tt.reason || st.Crashes != 0 || st.Restarts != 0 {
				t.Fatalf("status %+v, want failed (%s) without crashes", st, tt.reason)
			}
			_, err := os.Stat(filepath.Join(b.home("ta"), "start.json"))
			if spawned := err == nil; spawned != tt.spawned {
				t.Fatalf("spawned %v, want %v", spawned, tt.spawned)
			}
			if tt.spawned {
				if pid := b.startRecord("ta").Pid; alive(pid) {
					t.Fatalf("a failed adapter's process %d is alive", pid)
				}
			}
			// A reset does not re-record: a tampered adapter fails again.
			if err := b.sup.Reset("ta"); err != nil {
				t.Fatal(err)
			}
			st = b.waitState("ta", restart.Failed)
			if st.Reason != tt.reason {
				t.Fatalf("after reset: %+v", st)
			}
		})
	}
}

// A program that cannot be executed fails with reason spawn.
func TestSpawnFailure(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ta")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Executable, but not a format the kernel runs.
	if err := os.WriteFile(filepath.Join(dir, "testadapter"), []byte("not a program"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeManifest(t, dir, spec{name: "ta"})
	b := newBench(t, spec{name: "ta", folder: dir})
	b.start()
	st := b.waitState("ta", restart.Failed)
	if st.Reason != restart.Spawn || !strings.Contains(st.Detail, "exec format error") {
		t.Fatalf("status %+v", st)
	}
}

// An adapter that exits at once crashes again and again: the delay grows
// and the 8th crash fails it (crashloop); an operator's reset starts it
// again with a fresh count.
func TestCrashLoop(t *testing.T) {
	b := newBench(t, spec{name: "ta", args: []string{"--exit-at-start", "3"}})
	b.start()
	st := b.waitState("ta", restart.Failed)
	if st.Reason != restart.Crashloop || st.Crashes != 8 || st.Restarts != 7 || st.Consecutive != 8 {
		t.Fatalf("status %+v", st)
	}
	if !strings.Contains(st.LastExit, "code 3") && !strings.Contains(st.Detail, "code 3") {
		t.Fatalf("the exit code is not reported: %+v", st)
	}
	if err := b.sup.Reset("ta"); err != nil {
		t.Fatal(err)
	}
	st = b.waitState("ta", restart.Failed)
	if st.Crashes != 16 || st.Consecutive != 8 {
		t.Fatalf("after reset: %+v", st)
	}
	if err := b.sup.Reset("nope"); err == nil {
		t.Fatal("reset of an unknown adapter")
	}
}

// Every way a handshake can crash: silent, an error answer, garbage or a
// notification before the reply, too slow. Each is restarted.
func TestHandshakeCrashes(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"silent", []string{"--silent"}, "no initialize reply within"},
		{"slow", []string{"--handshake-delay", "3s"}, "no initialize reply within"},
		{"error answer", []string{"--handshake-error"}, "boom"},
		{"garbage first", []string{"--before-handshake", "garbage"}, "not_json"},
		{"notification first", []string{"--before-handshake", `{"jsonrpc":"2.0","method":"value.publish","params":{}}`}, "notification"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := newBench(t, spec{name: "ta", args: tt.args})
			b.start()
			// The backoff is short: on a loaded machine the first may pass
			// unseen, so the count is at least one.
			st := b.waitState("ta", restart.Backoff)
			if !strings.Contains(st.Detail, tt.want) || st.Crashes < 1 {
				t.Fatalf("status %+v, want a crash mentioning %q", st, tt.want)
			}
		})
	}
}

// The hash is checked before every spawn, restarts included: a folder
// changed while the adapter ran fails it at its next start, unspawned.
func TestTamperedBeforeRestart(t *testing.T) {
	b := newBench(t, spec{name: "ta", args: []string{"--script", `[{"sleep":"200ms"},{"exit":3}]`}})
	b.start()
	first := b.waitState("ta", restart.Running).Pid
	f := filepath.Join(manifest.Dir(b.stateDir, "ta"), "extra.txt")
	if err := os.WriteFile(f, []byte("added after the install"), 0o644); err != nil {
		t.Fatal(err)
	}
	st := b.waitState("ta", restart.Failed)
	if st.Reason != restart.Tampered || st.Crashes != 1 {
		t.Fatalf("status %+v, want tampered after one crash", st)
	}
	if pid := b.startRecord("ta").Pid; pid != first {
		t.Fatalf("a second process %d was spawned from the changed folder", pid)
	}
}
