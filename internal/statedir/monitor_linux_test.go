package statedir

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// waitLimit bounds a wait for an event; it matters only when a test is
// about to fail.
const waitLimit = 10 * time.Second

// logs is a slog handler that hands each message to a channel, so that a
// test waits for the Monitor's verdicts as they are logged.
type logs chan string

func (l logs) Enabled(context.Context, slog.Level) bool { return true }
func (l logs) Handle(_ context.Context, r slog.Record) error {
	l <- r.Message
	return nil
}
func (l logs) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l logs) WithGroup(string) slog.Handler      { return l }

// waitFor waits for a message starting with prefix.
func (l logs) waitFor(t *testing.T, prefix string) {
	t.Helper()
	timeout := time.After(waitLimit)
	for {
		select {
		case m := <-l:
			if strings.HasPrefix(m, prefix) {
				return
			}
		case <-timeout:
			t.Fatalf("no log message %q within %s", prefix, waitLimit)
		}
	}
}

// watched is a locked state directory under a running Monitor whose
// Restore counts its calls.
type watched struct {
	dir      string
	lock     *Lock
	mon      *Monitor
	logs     logs
	restores atomic.Int32
	pending  atomic.Pointer[error] // what Pending says
	fail     atomic.Pointer[error] // what Restore fails with
}

func watch(t *testing.T) *watched {
	t.Helper()
	w := &watched{dir: filepath.Join(t.TempDir(), "state"), logs: make(logs, 100)}
	if err := os.Mkdir(w.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	lock, err := Take(w.dir)
	if err != nil {
		t.Fatal(err)
	}
	w.lock = lock
	t.Cleanup(func() { w.lock.Close() })
	w.mon = NewMonitor(w.lock, MonitorOptions{
		Restore: func() error {
			w.restores.Add(1)
			if f := w.fail.Load(); f != nil {
				return *f
			}
			w.pending.Store(nil)
			return nil
		},
		Pending: func() error {
			if p := w.pending.Load(); p != nil {
				return *p
			}
			return nil
		},
		Log: slog.New(w.logs),
	})
	ctx, cancel := context.WithCancel(context.Background())
	watcher, err := NewWatcher(w.dir, slog.New(w.logs))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- watcher.Run(ctx) }()
	w.mon.Follow(ctx, watcher)
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("watch: %v", err)
		}
	})
	if err := w.check(); err != nil {
		t.Fatalf("a fresh directory: %v", err)
	}
	return w
}

func (w *watched) check() error {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	return w.mon.Check(ctx)
}

// Removed: the kernel's event makes the verdict, a probe sees it; made
// again: the event from the parent makes the Monitor lock the new
// directory and restore the state there, and it is usable again.
func TestMonitorDirectoryRemovedAndMadeAgain(t *testing.T) {
	w := watch(t)
	if err := os.RemoveAll(w.dir); err != nil {
		t.Fatal(err)
	}
	w.logs.waitFor(t, "state directory unusable")
	// A check the events started before the directory itself was gone
	// (its lock file went first) may still be under way: the first call
	// may share it; the second is a check of its own.
	w.check()
	if err := w.check(); err == nil || !strings.Contains(err.Error(), "was removed") {
		t.Fatalf("check with the directory gone: %v", err)
	}
	if err := os.Mkdir(w.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	w.logs.waitFor(t, "state directory usable again")
	if n := w.restores.Load(); n != 1 {
		t.Errorf("restored %d times, want once", n)
	}
	var inUse *InUseError
	if _, err := Take(w.dir); !errors.As(err, &inUse) || inUse.PID != os.Getpid() {
		t.Errorf("another gateway on the new directory: %v, want refused", err)
	}
	if err := w.check(); err != nil {
		t.Errorf("check once back: %v", err)
	}
}

// Moved away, then another directory made at its path: the new one is
// locked and the state restored there.
func TestMonitorDirectoryMovedAndReplaced(t *testing.T) {
	w := watch(t)
	if err := os.Rename(w.dir, w.dir+".old"); err != nil {
		t.Fatal(err)
	}
	w.logs.waitFor(t, "state directory unusable")
	if err := os.Mkdir(w.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	w.logs.waitFor(t, "state directory usable again")
	if _, err := os.Stat(filepath.Join(w.dir, LockName)); err != nil {
		t.Errorf("the new directory has no lock file: %v", err)
	}
}

// Its lock file removed, in the same directory: unusable, and not locked
// again there (a new file could keep an `rm -rf` under way from ending).
func TestMonitorLockFileRemoved(t *testing.T) {
	w := watch(t)
	if err := os.Remove(filepath.Join(w.dir, LockName)); err != nil {
		t.Fatal(err)
	}
	w.logs.waitFor(t, "state directory unusable")
	err := w.check()
	if err == nil || !strings.Contains(err.Error(), "lost its gateway.lock") || !strings.Contains(err.Error(), "restart the gateway") {
		t.Errorf("check: %v", err)
	}
	if _, err := os.Stat(filepath.Join(w.dir, LockName)); !os.IsNotExist(err) {
		t.Errorf("a lock file was made again in the same directory: %v", err)
	}
}

// Made unwritable (mode 0500): the mode change is an event, and the
// verdict says so. Root writes anyway, so this needs another user.
func TestMonitorDirectoryUnwritable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may write a directory of mode 0500")
	}
	w := watch(t)
	if err := os.Chmod(w.dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(w.dir, 0o700) })
	w.logs.waitFor(t, "state directory unusable")
	if err := w.check(); err == nil || !strings.Contains(err.Error(), "is not writable") {
		t.Errorf("check: %v", err)
	}
	os.Chmod(w.dir, 0o700)
	w.logs.waitFor(t, "state directory usable again")
}

// A failed write of the gateway's state is retried at each check, and
// the check fails while the retry does.
func TestMonitorRetriesAPendingWrite(t *testing.T) {
	w := watch(t)
	before := w.restores.Load()
	failed := errors.New("disk full")
	w.pending.Store(&failed)
	w.fail.Store(&failed)
	if err := w.check(); !errors.Is(err, failed) {
		t.Errorf("check with the write failing: %v", err)
	}
	w.fail.Store(nil)
	if err := w.check(); err != nil {
		t.Errorf("check once the write works: %v", err)
	}
	if err := w.check(); err != nil {
		t.Errorf("check after: %v", err)
	}
	if n := w.restores.Load() - before; n != 2 {
		t.Errorf("%d writes, want 2 (none once nothing is pending)", n)
	}
}
