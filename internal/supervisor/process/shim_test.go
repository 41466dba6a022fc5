//go:build linux

package process

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestShimTreeDiesWithStarter: the helper "intermediate-shim" stands for
// the gateway; it starts an adapter through the shim that leaves a child
// in its group, a child in a session of its own and a re-parented setsid
// grandchild, and is then killed with SIGKILL. The adapter and all three
// are gone within 1 s. Without the shim (TestPdeathsig) only the adapter
// dies: its death signal reaches no one else.
func TestShimTreeDiesWithStarter(t *testing.T) {
	a := startHelper(t, "intermediate-shim")
	pids := a.setup(t, 4) // group child, setsid child, grandchild, adapter
	if err := syscall.Kill(a.p.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	for _, pid := range pids {
		if !goneWithin(pid, time.Second-time.Since(killed)) {
			t.Errorf("pid %d still exists %v after its gateway was killed", pid, time.Since(killed))
		}
	}
}

// TestShimTransparent: through the shim, the pid is the adapter's own
// (the leader of its group), and its exit status and start errors are
// what a direct start gives.
func TestShimTransparent(t *testing.T) {
	t.Run("exit status", func(t *testing.T) {
		a := startSpec(t, Spec{Path: os.Args[0], Env: helperEnv("exit3"), Shim: os.Args[0]})
		<-a.p.Wait()
		if st, err := a.p.ExitStatus(); err != nil || st != (ExitStatus{Code: 3}) {
			t.Errorf("ExitStatus = %v, %v; want exit status 3", st, err)
		}
	})
	t.Run("killed", func(t *testing.T) {
		a := startSpec(t, Spec{Path: os.Args[0], Env: helperEnv("linger"), Shim: os.Args[0]})
		var pid int
		if _, err := fmt.Sscanf(<-a.lines, "pid %d", &pid); err != nil {
			t.Fatalf("helper's first line: %v", err)
		}
		st, err := readStat(pid)
		if err != nil || pid != a.p.Pid() || st.pgrp != pid {
			t.Errorf("helper pid %d (group %d, %v), Pid() %d: want one pid, leading its group", pid, st.pgrp, err, a.p.Pid())
		}
		if err := a.p.Kill(); err != nil {
			t.Fatal(err)
		}
		<-a.p.Wait()
		if st, err := a.p.ExitStatus(); err != nil || st != (ExitStatus{Code: -1, Signal: syscall.SIGKILL}) {
			t.Errorf("ExitStatus = %v, %v; want signal: killed", st, err)
		}
	})
	t.Run("start error", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "missing")
		_, direct := Start(context.Background(), Spec{Path: missing})
		_, shim := Start(context.Background(), Spec{Path: missing, Shim: os.Args[0]})
		if direct == nil || shim == nil || direct.Error() != shim.Error() {
			t.Errorf("start error through the shim %v, want %v", shim, direct)
		}
	})
}
