//go:build unix

package statedir

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// MonitorOptions configure a Monitor.
type MonitorOptions struct {
	// Restore writes the gateway's state to the directory again (the
	// stop latch). It is called when the directory is usable again after
	// it was not, and at every check while Pending says a write failed.
	Restore func() error
	// Pending returns why the gateway's last write of its state failed,
	// nil when none did. Nil: never.
	Pending func() error
	Log     *slog.Logger
}

// Monitor follows a locked state directory. Its Check is the "state"
// probe of /healthz and of the systemd watchdog.
type Monitor struct {
	lock *Lock
	opt  MonitorOptions

	mu      sync.Mutex
	running *checkRun // the check under way, shared by its callers
	bad     error     // what the last check found; nil: usable
	watcher *Watcher  // what Follow follows; nil before
}

type checkRun struct {
	done chan struct{}
	err  error
}

// NewMonitor returns a Monitor of l's directory.
func NewMonitor(l *Lock, opt MonitorOptions) *Monitor {
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.Pending == nil {
		opt.Pending = func() error { return nil }
	}
	if opt.Restore == nil {
		opt.Restore = func() error { return nil }
	}
	return &Monitor{lock: l, opt: opt}
}

// Check returns nil when the state directory is usable: still the one
// locked, and writable, with the gateway's state written there. It takes
// the lock again and restores the state when the directory came back.
// Callers at the same time share one check; ctx bounds the wait only (a
// disk that hangs in the latch write is a stuck part, as the watchdog
// means it).
func (m *Monitor) Check(ctx context.Context) error {
	m.mu.Lock()
	r := m.running
	if r == nil {
		r = &checkRun{done: make(chan struct{})}
		m.running = r
		go m.run(r)
	}
	m.mu.Unlock()
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return fmt.Errorf("state directory check: %w", ctx.Err())
	}
}

// Follow subscribes to w and, until ctx ends, checks the directory
// whenever w says that it, or its lock file, may have changed. Once a
// check has locked a directory made again, w watches that one (Rewatch).
func (m *Monitor) Follow(ctx context.Context, w *Watcher) {
	changed := w.Subscribe("", LockName)
	m.mu.Lock()
	m.watcher = w
	m.mu.Unlock()
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-changed:
				m.Check(ctx)
			}
		}
	}()
}

// run makes one check and logs a change of verdict.
func (m *Monitor) run(r *checkRun) {
	m.mu.Lock()
	was := m.bad
	m.mu.Unlock()
	err := m.check(was != nil)
	switch {
	case err != nil && (was == nil || was.Error() != err.Error()):
		m.opt.Log.Error("state directory unusable: a stop still engages, in memory, and is latched again once the directory is back; audit entries are lost until then",
			"dir", m.lock.Dir(), "err", err)
	case err == nil && was != nil:
		m.opt.Log.Info("state directory usable again", "dir", m.lock.Dir())
	}
	m.mu.Lock()
	m.bad, m.running, r.err = err, nil, err
	m.mu.Unlock()
	close(r.done)
}

// check looks at the directory; restore says it was unusable at the last
// look, so that the gateway's state must be written there again.
func (m *Monitor) check(restore bool) error {
	if err := m.lock.Held(); err != nil {
		if _, serr := os.Stat(m.lock.Dir()); serr != nil {
			return err // gone: nothing to lock again yet
		}
		if rerr := m.lock.Retake(); rerr != nil {
			return fmt.Errorf("%w: %w", err, rerr)
		}
		m.opt.Log.Warn("state directory made again; locked it again", "dir", m.lock.Dir(), "was", err)
		m.mu.Lock()
		w := m.watcher
		m.mu.Unlock()
		if w != nil {
			w.Rewatch()
		}
		restore = true
	}
	if err := unix.Access(m.lock.Dir(), unix.W_OK|unix.X_OK); err != nil {
		return fmt.Errorf("state directory %s is not writable: %w", m.lock.Dir(), err)
	}
	if pending := m.opt.Pending(); pending != nil || restore {
		if err := m.opt.Restore(); err != nil {
			return fmt.Errorf("state directory %s: %w", m.lock.Dir(), err)
		}
	}
	return nil
}
