package supervisor

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/openhal/gateway/adapterproto"
	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/internal/halhub/token"
	"github.com/openhal/gateway/internal/supervisor/manifest"
	"github.com/openhal/gateway/internal/supervisor/process"
	"github.com/openhal/gateway/internal/supervisor/restart"
	"github.com/openhal/gateway/internal/supervisor/stderrlog"
	"github.com/openhal/gateway/openhal"
)

// adapter is one enabled adapter: its install, its devices, its state and
// its current run. Its loop goroutine owns runs; the lock guards what HAL
// requests and status read.
type adapter struct {
	s    *Supervisor
	name string
	log  *slog.Logger
	rec  *manifest.Record
	man  *manifest.Manifest
	// local calls the Hub under the adapter's grant.
	local  *halhub.Local
	stderr *stderrlog.Log

	tracker *restart.Tracker // owned by the loop
	wake    chan struct{}    // the loop has something to look at
	cancel  func()           // ends the loop (set by Start)
	done    chan struct{}    // closed when the loop has returned

	mu           sync.Mutex
	state        restart.State
	reason       restart.Reason
	detail       string // why it is failed, or why the last run ended
	cur          *run   // the running run, nil otherwise
	changed      chan struct{}
	settled      bool   // has been running, in backoff or failed at least once (Started)
	gen          uint64 // runs started, to tell a waiter its start ended
	inUse        int    // tool requests holding the run
	wantRun      bool   // a tool request is waiting for a start
	resetPending bool   // an operator's reset the loop has not seen yet
	lastUsed     time.Time
	pid          int
	restarts     int // runs started after a crash
	// consecutive mirrors the tracker's count, which the loop owns.
	consecutive int
	lastExit    string
	lastStop    *process.StopReport // the last stop's timeline
	started     time.Time
	totals      totals
	devices     deviceSet
}

// totals are counts over every run, for status and metrics.
type totals struct {
	strikes     uint64
	dropped     uint64
	lateReplies uint64
	crashes     uint64
}

// load reads an enabled adapter's install. Whatever is wrong leaves it
// failed with the reason, visible in status.
func (s *Supervisor) load(name string) *adapter {
	a := &adapter{
		s: s, name: name, log: s.log.With("adapter", name),
		tracker: restart.NewTracker(s.opt.Timing.Restart),
		wake:    make(chan struct{}, 1), changed: make(chan struct{}),
	}
	a.devices.init()
	rec, man, err := manifest.Load(s.opt.StateDir, name)
	if err != nil {
		a.fail(restart.Manifest, fmt.Sprintf("cannot load the install of %s: %v", name, err))
		return a
	}
	a.rec, a.man = rec, man
	if a.stderr, err = stderrlog.New(LogDir(s.opt.StateDir), name, stderrlog.Options{Clock: s.clk}); err != nil {
		a.fail(restart.Manifest, fmt.Sprintf("cannot open its log: %v", err))
		return a
	}
	a.local = s.opt.Hub.Local(a.entry())
	if err := a.registerDeclared(); err != nil {
		a.fail(restart.Manifest, err.Error())
	}
	return a
}

// LogDir is where adapters' standard error is kept: the gateway's, out of
// the adapters' reach, so that an adapter cannot rewrite its own record.
func LogDir(stateDir string) string { return filepath.Join(stateDir, "adapter-logs") }

// noDevice is a device pattern that matches no device id (ids begin with a
// letter or digit): it gives a grant with an empty scope a token entry that
// sees no device, where an entry without patterns would see them all.
const noDevice = "\x00"

// entry is the adapter's grant as a Hub token entry.
func (a *adapter) entry() token.Entry {
	g := a.man.Grant
	e := token.Entry{Name: a.name, Kind: openhal.KindAdapter, Scope: openhal.Scope(g.Level)}
	switch {
	case g.Scope.All:
	case len(g.Scope.Patterns) == 0:
		e.Devices = []string{noDevice}
	default:
		e.Devices = g.Scope.Patterns
	}
	return e
}

func (a *adapter) isTool() bool { return a.man != nil && a.man.Kind == adapterproto.KindTool }

// setState changes the state and wakes whoever waits on a change. The
// caller holds a.mu.
func (a *adapter) setStateLocked(st restart.State, reason restart.Reason, detail string) {
	if st == a.state && reason == a.reason {
		a.detail = detail
		return
	}
	a.log.Info("adapter state", "from", a.state, "to", st, "reason", reason, "detail", detail)
	a.state, a.reason, a.detail = st, reason, detail
	a.settled = a.settled || settles(st)
	a.changedLocked()
}

// changedLocked wakes whoever waits on a change of the adapter's status.
// The caller holds a.mu.
func (a *adapter) changedLocked() {
	close(a.changed)
	a.changed = make(chan struct{})
	a.s.watchers.notify()
}

// settles reports whether st ends a service's start for Started: it is
// running, or its start failed (backoff) or gave up (failed).
func settles(st restart.State) bool {
	return st == restart.Running || st == restart.Backoff || st == restart.Failed
}

func (a *adapter) setState(st restart.State, detail string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.setStateLocked(st, restart.NoReason, detail)
}

// fail marks the adapter failed; it stays so until reset or reinstalled.
//
// Its devices go offline first and only then does the state change: a
// status (or a watcher, or a request refused with E_ADAPTER_FAILED) that
// says failed is never seen beside a device that still says ok. The other
// order left that window open to anyone looking, a tool's devices above
// all, which stay ok between runs. Nothing can bring the devices back up
// in between: only the loop starts runs, and fail is called by the loop
// (or by load, before the loop exists).
func (a *adapter) fail(reason restart.Reason, detail string) {
	a.log.Error("adapter failed", "reason", reason, "detail", detail)
	a.takeDevicesDown("adapter "+a.name+" failed ("+reason.String()+")", true)
	a.mu.Lock()
	a.setStateLocked(restart.Failed, reason, detail)
	a.mu.Unlock()
}

// kick wakes the loop.
func (a *adapter) kick() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// reset clears a failure and the crash count, and wakes the loop.
func (a *adapter) reset() error {
	a.mu.Lock()
	if a.state != restart.Failed {
		st := a.state
		a.mu.Unlock()
		return fmt.Errorf("adapter %s is %s, not failed", a.name, st)
	}
	if a.man == nil {
		a.mu.Unlock()
		return fmt.Errorf("adapter %s cannot be loaded; reinstall it", a.name)
	}
	a.setStateLocked(restart.Stopped, restart.NoReason, "reset by an operator")
	a.resetPending = true
	a.mu.Unlock()
	a.kick()
	return nil
}

// close releases what the adapter holds once its loop has returned.
func (a *adapter) close() {
	if a.local != nil {
		a.local.Close()
	}
	if a.stderr != nil {
		a.stderr.Close()
	}
}
