//go:build linux

package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openhal/gateway/internal/clock"
)

// late is how far after its due time a step may happen (spec §8 allows
// SIGKILL no later than 200 ms after T0+5 s).
const late = 200 * time.Millisecond

// short is the schedule the tests run the real sequence with; the steps are
// far enough apart that each can be told from the next.
var short = Timing{CloseStdin: 150 * time.Millisecond, Term: 400 * time.Millisecond, Kill: 800 * time.Millisecond}

// due checks that the event at happened no earlier than d after t0 and at
// most late after that.
func due(t *testing.T, what string, t0, at time.Time, d time.Duration) {
	t.Helper()
	if at.IsZero() {
		t.Errorf("%s never happened, want at T0+%v", what, d)
		return
	}
	if got := at.Sub(t0); got < d || got > d+late {
		t.Errorf("%s at T0+%v, want within [%v, %v]", what, got, d, d+late)
	}
}

func signalsOf(r StopReport, group bool) []syscall.Signal {
	var out []syscall.Signal
	for _, s := range r.Signals {
		if s.Group == group {
			out = append(out, s.Signal)
		}
	}
	return out
}

// runStop stops a and runs the checks that hold for every stop and returns the report.
func runStop(t *testing.T, a *adapter, timing Timing) StopReport {
	t.Helper()
	start := time.Now()
	r := Stop(a.p, a.shutdown(t), timing, clock.Real())
	took := time.Since(start)
	if r.Err != nil {
		t.Errorf("Stop: %v", r.Err)
	}
	if len(r.Remaining) != 0 {
		t.Errorf("Stop left %v", r.Remaining)
	}
	if max := timing.Kill + ReapMargin + late; took > max {
		t.Errorf("Stop took %v, want at most %v", took, max)
	}
	if !r.Exited {
		t.Error("leader not reported exited")
	}
	if r.StdinClosedAt.IsZero() {
		t.Error("stdin never closed")
	}
	return r
}

// The tests that run processes do not run in parallel: Stop and Sweep
// attribute setsid orphans to an adapter by session and start time (see
// Stop), so one test's sweep would take another's orphan, exactly as one
// adapter's stop may take the orphan of an adapter started after it.
func TestStop(t *testing.T) {
	tests := []struct {
		mode       string
		pids       int  // extra processes the helper reports
		replies    bool // answers shutdown
		term, kill bool // SIGTERM, SIGKILL to the group expected
		escapees   bool // processes outside the group to kill at the end
		status     ExitStatus
		// before checks the process tree before the stop; pids are the
		// helper's reported pids, the leader last.
		before func(t *testing.T, pids []int)
	}{
		{mode: "reply", replies: true, status: ExitStatus{Code: 0}},
		{mode: "silent", status: ExitStatus{Code: 0}},
		{mode: "stubborn", term: true, kill: true, status: ExitStatus{Code: -1, Signal: syscall.SIGKILL}},
		{mode: "group-linger", pids: 1, term: true, status: ExitStatus{Code: 0}},
		{
			mode: "setsid-escape", pids: 1, escapees: true, status: ExitStatus{Code: 0},
			before: func(t *testing.T, pids []int) {
				// The daemonized grandchild has been re-parented to us.
				orphans, err := Orphans(0)
				if err != nil || !slices.Contains(orphans, pids[0]) {
					t.Errorf("Orphans() = %v, %v; want it to hold %d", orphans, err, pids[0])
				}
			},
		},
		{
			mode: "setsid-below", pids: 2, term: true, escapees: true, status: ExitStatus{Code: 0},
			before: func(t *testing.T, pids []int) {
				// Group member and its setsid child, both below the leader.
				got, err := Descendants(pids[2])
				slices.Sort(got)
				want := slices.Sorted(slices.Values(pids[:2]))
				if err != nil || !slices.Equal(got, want) {
					t.Errorf("Descendants(%d) = %v, %v; want %v", pids[2], got, err, want)
				}
			},
		},
	}
	for _, tt := range tests {
		for _, shim := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/shim=%v", tt.mode, shim), func(t *testing.T) {
				testStop(t, tt.mode, tt.pids, shim, tt.before, stopWant{tt.replies, tt.term, tt.kill, tt.escapees, tt.status})
			})
		}
	}
}

// stopWant is what a stop of one helper must show.
type stopWant struct {
	replies, term, kill, escapees bool
	status                        ExitStatus
}

// testStop stops the helper mode, started through the shim or not, and
// checks the stop against want.
func testStop(t *testing.T, mode string, npids int, shim bool, before func(*testing.T, []int), tt stopWant) {
	spec := Spec{Path: os.Args[0], Env: helperEnv(mode)}
	if shim {
		spec.Shim = os.Args[0]
	}
	a := startSpec(t, spec)
	pids := append(a.setup(t, npids), a.p.Pid())
	if before != nil && !shim { // with a shim, orphans are the shim's, not ours
		before(t, pids)
	}
	r := runStop(t, a, short)

	if r.Replied != tt.replies {
		t.Errorf("Replied = %v, want %v", r.Replied, tt.replies)
	}
	if tt.replies {
		if d := r.StdinClosedAt.Sub(r.RepliedAt); d < 0 || d > late {
			t.Errorf("stdin closed %v after the reply, want at once", d)
		}
	} else if !shim {
		due(t, "stdin close", r.T0, r.StdinClosedAt, short.CloseStdin)
	}
	var wantGroup []syscall.Signal
	if tt.term {
		wantGroup = append(wantGroup, syscall.SIGTERM)
	}
	if tt.kill {
		wantGroup = append(wantGroup, syscall.SIGKILL)
	}
	if got := signalsOf(r, true); !slices.Equal(got, wantGroup) {
		t.Errorf("signals to the group %v, want %v", got, wantGroup)
	}
	for _, s := range r.Signals {
		// The schedule is the gateway's own, shim or not (the shim is not
		// on the signals' path): its times are checked once, without,
		// since a loaded machine already strains the 200 ms margin.
		switch {
		case shim:
		case s.Group && s.Signal == syscall.SIGTERM:
			due(t, "SIGTERM", r.T0, s.At, short.Term)
		case s.Group && s.Signal == syscall.SIGKILL:
			due(t, "SIGKILL", r.T0, s.At, short.Kill)
		}
	}
	if got := len(r.Escapees) > 0; got != tt.escapees {
		t.Errorf("escapees %v, want some: %v", r.Escapees, tt.escapees)
	}
	if r.Status != tt.status {
		t.Errorf("status %v, want %v", r.Status, tt.status)
	}
	if !tt.term && !tt.kill && !tt.escapees {
		// Nothing lingered: the stop ends with the leader, not at a
		// deadline. Measured from the leader's exit, which a loaded
		// machine may delay past the stdin close by any amount.
		if d := r.Ended.Sub(r.ExitedAt); r.ExitedAt.IsZero() || d > late {
			t.Errorf("stop ended %v after the leader exited (T0+%v), want at once", d, r.Ended.Sub(r.T0))
		}
	}
	for _, pid := range pids {
		// Without a shim we reap them all; with one, the shim does,
		// a moment later.
		if !gone(pid) && !(shim && goneWithin(pid, time.Second)) {
			t.Errorf("pid %d of the adapter remains after Stop", pid)
		}
	}
}

// TestStopRealTiming runs the protocol's own 2 s / 5 s schedule once.
func TestStopRealTiming(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 5 s")
	}
	a := startHelper(t, "stubborn")
	a.setup(t, 0)
	timing := DefaultTiming()
	r := runStop(t, a, timing)
	due(t, "stdin close", r.T0, r.StdinClosedAt, timing.CloseStdin)
	want := []Sent{{Signal: syscall.SIGTERM}, {Signal: syscall.SIGKILL}}
	if len(r.Signals) != len(want) {
		t.Fatalf("signals %+v, want SIGTERM then SIGKILL", r.Signals)
	}
	due(t, "SIGTERM", r.T0, r.Signals[0].At, timing.Term)
	due(t, "SIGKILL", r.T0, r.Signals[1].At, timing.Kill)
	if !gone(a.p.Pid()) {
		t.Error("adapter remains")
	}
}

// TestStopAfterExit: a stop of a process that already ended sends nothing.
func TestStopAfterExit(t *testing.T) {
	a := startHelper(t, "exit3")
	<-a.p.Wait()
	r := Stop(a.p, nil, short, clock.Real())
	if r.Err != nil || len(r.Signals) != 0 || len(r.Remaining) != 0 {
		t.Errorf("Stop of an ended process: %+v", r)
	}
	if r.Status != (ExitStatus{Code: 3}) {
		t.Errorf("status %v, want exit status 3", r.Status)
	}
}

func TestKill(t *testing.T) {
	a := startHelper(t, "group-linger")
	pids := append(a.setup(t, 1), a.p.Pid())
	// The group member ignores nothing, but the leader ignores its stdin
	// staying open: only the signal ends them.
	if err := a.p.Kill(); err != nil {
		t.Fatal(err)
	}
	<-a.p.Wait()
	st, err := a.p.ExitStatus()
	if err != nil || st != (ExitStatus{Code: -1, Signal: syscall.SIGKILL}) {
		t.Errorf("ExitStatus = %v, %v; want signal: killed", st, err)
	}
	// The member, re-parented to us, is a zombie until Sweep reaps it.
	esc, left, err := Sweep(a.p)
	if err != nil || len(esc) != 0 || len(left) != 0 {
		t.Errorf("Sweep = %v, %v, %v; want nothing", esc, left, err)
	}
	for _, pid := range pids {
		if !gone(pid) {
			t.Errorf("pid %d remains after Kill and Sweep", pid)
		}
	}
	if err := a.p.Kill(); err != nil {
		t.Errorf("Kill of an empty group: %v", err)
	}
}

// TestPdeathsig: an adapter dies with the process that started it. The
// intermediate helper starts an adapter with Start and is then SIGKILLed.
func TestPdeathsig(t *testing.T) {
	a := startHelper(t, "intermediate")
	pids := a.setup(t, 1)
	child := pids[0]
	fd, err := unix.PidfdOpen(child, 0)
	if err != nil {
		t.Fatalf("pidfd of the adapter %d: %v", child, err)
	}
	defer unix.Close(fd)
	if err := syscall.Kill(a.p.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-a.p.Wait()
	// A pidfd becomes readable when its process exits: an event, no polling.
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	deadline := time.Now().Add(10 * time.Second)
	for fds[0].Revents == 0 {
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatalf("adapter %d still alive 10s after its parent died", child)
		}
		if _, err := unix.Poll(fds, int(left.Milliseconds())+1); err != nil && !errors.Is(err, unix.EINTR) {
			t.Fatal(err)
		}
	}
	// It was re-parented to us (subreaper): reap it and read why it died.
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PIDFD, fd, &info, unix.WEXITED, nil); err != nil {
		t.Fatalf("reap adapter %d: %v", child, err)
	}
	if !gone(child) {
		t.Errorf("adapter %d remains", child)
	}
}

// TestStartEnv: the environment is exactly Spec.Env, never ours, and Dir
// and Args reach the process.
func TestStartEnv(t *testing.T) {
	dir := t.TempDir()
	p, err := Start(context.Background(), Spec{
		Path: os.Args[0],
		Args: []string{"a", "b"},
		Dir:  dir,
		Env:  append(helperEnv("env"), "HOME=/nowhere"),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	b := new(strings.Builder)
	if _, err := io.Copy(b, p.Stdout); err != nil {
		t.Fatal(err)
	}
	<-p.Wait()
	want := "env " + modeEnv + "=env\nenv " + noRaceSleep + "\nenv HOME=/nowhere\ndir " + dir + "\nargs a b\n"
	if b.String() != want {
		t.Errorf("helper saw\n%s\nwant\n%s", b, want)
	}
	if st, _ := p.ExitStatus(); st != (ExitStatus{}) {
		t.Errorf("status %v", st)
	}
}

// TestStartCredential: the process runs as Spec.Credential says.
func TestStartCredential(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("switching users needs root")
	}
	const nobody = 65534
	// The test binary sits in a directory only we may enter: run a copy.
	dir, err := os.MkdirTemp("", "process-cred")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin := dir + "/helper"
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b0, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b0, 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := Start(context.Background(), Spec{
		Path:       bin,
		Dir:        "/",
		Env:        helperEnv("ids"),
		Credential: &syscall.Credential{Uid: nobody, Gid: nobody, Groups: []uint32{}},
	})
	if err != nil {
		t.Skipf("cannot run the test binary as nobody here: %v", err)
	}
	defer p.Close()
	b := new(strings.Builder)
	if _, err := io.Copy(b, p.Stdout); err != nil {
		t.Fatal(err)
	}
	<-p.Wait()
	if st, _ := p.ExitStatus(); st != (ExitStatus{}) {
		t.Skipf("test binary not runnable as nobody: %v", st)
	}
	if want := "ids 65534 65534 []\n"; b.String() != want {
		t.Errorf("helper said %q, want %q", b, want)
	}
}

func TestStartErrors(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		spec Spec
	}{
		{"cancelled", ctx, Spec{Path: os.Args[0]}},
		{"missing", context.Background(), Spec{Path: "/nonexistent/adapter"}},
		{"bad dir", context.Background(), Spec{Path: os.Args[0], Dir: "/nonexistent"}},
	}
	for _, tt := range tests {
		if p, err := Start(tt.ctx, tt.spec); err == nil {
			p.Kill()
			t.Errorf("%s: Start succeeded", tt.name)
		} else if !strings.Contains(err.Error(), tt.spec.Path) {
			t.Errorf("%s: error %q does not say what was started", tt.name, err)
		}
	}
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		line string
		want stat
		bad  bool
	}{
		{
			line: "42 (sh) S 1 42 7 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 12345 0 0",
			want: stat{pid: 42, state: 'S', ppid: 1, pgrp: 42, session: 7, start: 12345},
		},
		{
			line: "43 (a) b (c)) Z 42 42 7 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0",
			want: stat{pid: 43, state: 'Z', ppid: 42, pgrp: 42, session: 7, start: 99},
		},
		{line: "44 sh S 1", bad: true},
		{line: "45 (sh) S 1 2", bad: true},
	}
	for _, tt := range tests {
		got, err := parseStat([]byte(tt.line))
		if (err != nil) != tt.bad {
			t.Errorf("parseStat(%q) error %v, want error: %v", tt.line, err, tt.bad)
			continue
		}
		if !tt.bad && got != tt.want {
			t.Errorf("parseStat(%q) = %+v, want %+v", tt.line, got, tt.want)
		}
	}
}

func TestDescendants(t *testing.T) {
	all := []stat{{pid: 1}, {pid: 10, ppid: 1}, {pid: 11, ppid: 10}, {pid: 12, ppid: 11}, {pid: 20, ppid: 1}}
	got := descendants(all, 10)
	slices.Sort(got)
	if want := []int{11, 12}; !slices.Equal(got, want) {
		t.Errorf("descendants = %v, want %v", got, want)
	}
}
