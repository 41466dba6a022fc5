package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/openhal/gateway/adapterproto"
	"github.com/openhal/gateway/internal/supervisor/conn"
	"github.com/openhal/gateway/internal/supervisor/eventq"
	"github.com/openhal/gateway/internal/supervisor/manifest"
	"github.com/openhal/gateway/internal/supervisor/process"
	"github.com/openhal/gateway/internal/supervisor/restart"
	"github.com/openhal/gateway/internal/supervisor/strikes"
)

// killWait bounds the wait for a SIGKILLed leader to be reaped. SIGKILL
// ends a process at once unless it is stuck in the kernel; the loop must
// not be held by one that is.
const killWait = 2 * time.Second

// run is one process of an adapter, from spawn to its end.
type run struct {
	proc        *process.Proc
	conn        *conn.Conn
	events      *eventq.Queue // services
	strikes     *strikes.Strikes
	unsubscribe func()
	started     time.Time
	killed      killer // whether, and how, the gateway killed it (exitwords.go)
}

// failure is a start that fails the adapter rather than crash it.
type failure struct {
	reason restart.Reason
	detail string
}

func (f *failure) Error() string { return f.reason.String() + ": " + f.detail }

// start runs section 8's spawn and section 4's handshake: the installed
// folder is hashed first (a mismatch is tampered, without spawning), the
// process started, and the handshake judged. It returns the ready run, a
// *failure, or the error of a crashed start.
func (a *adapter) start(ctx context.Context) (*run, error) {
	a.mu.Lock()
	a.gen++
	a.setStateLocked(restart.Starting, restart.NoReason, "")
	a.mu.Unlock()
	stateDir := manifest.StateDir(a.s.opt.StateDir, a.name)
	if err := manifest.Verify(a.s.opt.StateDir, a.name); err != nil {
		if errors.Is(err, manifest.ErrTampered) {
			return nil, &failure{restart.Tampered, err.Error()}
		}
		return nil, &failure{restart.Manifest, err.Error()}
	}
	if err := a.prepareStateDir(stateDir); err != nil {
		return nil, &failure{restart.Spawn, err.Error()}
	}
	dir := manifest.Dir(a.s.opt.StateDir, a.name)
	proc, err := process.Start(ctx, process.Spec{
		Path: filepath.Join(dir, filepath.FromSlash(a.man.Exec)), Args: a.man.Args, Dir: dir,
		Env: a.s.environment(stateDir, a.man.EnvPass), Credential: a.s.cred, Shim: a.s.opt.Shim,
	})
	if err != nil {
		return nil, &failure{restart.Spawn, err.Error()}
	}
	go a.stderr.Copy(proc.Stderr)
	now := a.s.clk.Now()
	a.tracker.Started(now)
	r := &run{proc: proc, started: now, strikes: &strikes.Strikes{Clock: a.s.clk}}
	if !a.isTool() {
		r.events = eventq.New(a.s.opt.Limits.EventQueue)
	}
	a.mu.Lock()
	a.pid = proc.Pid()
	a.changedLocked() // the status shows the process
	a.mu.Unlock()
	c, err := conn.Open(ctx, proc.Stdout, proc.Stdin, a.connConfig(r, stateDir))
	if err != nil {
		a.kill(r)
		var he *conn.HandshakeError
		if errors.As(err, &he) && he.Failure != restart.NoReason {
			return nil, &failure{he.Failure, he.Detail}
		}
		// An adapter that exited by itself says more by its exit.
		if st, werr := r.proc.ExitStatus(); werr == nil && !(st.Signaled() && st.Signal == syscall.SIGKILL) {
			err = fmt.Errorf("%w; the adapter %s", err, a.exitWords(st, notKilled))
		}
		return nil, err
	}
	r.conn = c
	if r.events != nil {
		own := a.name + "."
		r.unsubscribe = a.s.opt.Hub.Subscribe(a.entry(), func(method, device string, params json.RawMessage) {
			// Not its own devices: it is their source, and the echo of its
			// own value.publish would come back as an event to count and
			// publish again, for ever.
			if !strings.HasPrefix(device, own) {
				r.events.Push(eventq.Event{Type: strings.TrimPrefix(method, "hal/"), Data: params})
			}
		})
	}
	a.mu.Lock()
	a.cur, a.started = r, now
	a.setStateLocked(restart.Running, restart.NoReason, "")
	a.mu.Unlock()
	a.devicesUp()
	return r, nil
}

func (a *adapter) connConfig(r *run, stateDir string) conn.Config {
	return conn.Config{
		Record:   adapterproto.Info{Name: a.rec.Name, Version: a.rec.Version},
		Kind:     a.man.Kind,
		Grant:    a.man.Grant,
		State:    stateDir,
		Host:     adapterproto.Host{Name: adapterproto.HostName, Version: a.s.opt.Version, Product: adapterproto.HostProduct},
		Limits:   a.s.opt.Limits,
		Settings: (*a.s.settings.Load())[a.rec.Name],
		Timing:   a.connTiming(),
		Clock:    a.s.clk,
		Handler:  &handler{a: a},
		Events:   r.events,
		Strikes:  r.strikes,
		Log:      a.s.log,
	}
}

// connTiming is the connection's timing with the manifest's request
// deadline.
func (a *adapter) connTiming() conn.Timing {
	t := a.s.opt.Timing.Conn
	if ms := a.man.Timeouts.RequestMs; ms > 0 {
		t.Request = time.Duration(ms) * time.Millisecond
	}
	return t
}

// prepareStateDir gives the adapter its own state directory (its HOME):
// owned by its user, private to it. The mode is set while the gateway
// still owns the directory, then the owner changed: so the gateway needs
// CAP_CHOWN but not CAP_FOWNER. A directory the adapter already owns is
// its own and left as it is.
func (a *adapter) prepareStateDir(dir string) error {
	if err := manifest.MakeStateDir(a.s.opt.StateDir, a.name); err != nil {
		return fmt.Errorf("create the adapter's state directory: %w", err)
	}
	c := a.s.cred
	if c == nil {
		return os.Chmod(dir, 0o700)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	if ownedBy(fi, c.Uid, c.Gid) {
		return nil
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("make the state directory private: %w", err)
	}
	if err := os.Chown(dir, int(c.Uid), int(c.Gid)); err != nil {
		return fmt.Errorf("give the state directory to the adapter's user: %w", err)
	}
	return nil
}

// kill ends a run at once (section 1: SIGKILL to the whole group), reaps
// it and kills what escaped the group.
func (a *adapter) kill(r *run) {
	select {
	case <-r.proc.Wait():
	default:
		r.killed = killedAtOnce
	}
	if err := r.proc.Kill(); err != nil {
		a.log.Warn("kill adapter", "err", err)
	}
	select {
	case <-r.proc.Wait():
	case <-time.After(killWait):
		a.log.Error("adapter not reaped after SIGKILL", "pid", r.proc.Pid())
	}
	if escapees, remaining, err := process.Sweep(r.proc); err != nil || len(escapees) > 0 || len(remaining) > 0 {
		a.log.Warn("adapter sweep", "escapees", escapees, "remaining", remaining, "err", err)
	}
	a.finish(r)
}

// stop runs the fixed stop sequence (section 8) on a run, then marks the
// adapter stopped. book, when not nil, runs under a.mu just before the
// state changes, on the loop: whoever sees "stopped" sees what it booked
// (a tool's crash series ended by a clean idle stop), never the state
// without it.
func (a *adapter) stop(r *run, why string, book func()) {
	a.setState(restart.Stopping, why)
	// Events from here on are not the stop's to deliver: only those
	// already queued are written (section 8), and later ones are not drops.
	if r.unsubscribe != nil {
		r.unsubscribe()
		r.unsubscribe = nil
	}
	var shutdown func() <-chan struct{}
	if r.conn != nil {
		shutdown = func() <-chan struct{} { return r.conn.Shutdown(a.s.opt.Timing.Events) }
	}
	rep := process.Stop(r.proc, shutdown, a.s.opt.Timing.Stop, a.s.clk)
	a.log.Info("adapter stopped", "why", why, "replied", rep.Replied, "exited", rep.Exited, "status", rep.Status,
		"signals", len(rep.Signals), "escapees", rep.Escapees, "took", rep.Ended.Sub(rep.T0))
	if len(rep.Remaining) > 0 || rep.Err != nil {
		a.log.Error("adapter stop left processes", "remaining", rep.Remaining, "err", rep.Err)
	}
	for _, s := range rep.Signals {
		if s.Group && s.Signal == syscall.SIGKILL {
			r.killed = killedAfterStop
		}
	}
	a.mu.Lock()
	a.lastStop = &rep
	a.mu.Unlock()
	a.finish(r)
	a.mu.Lock()
	if book != nil {
		book()
	}
	a.setStateLocked(restart.Stopped, restart.NoReason, why)
	a.mu.Unlock()
}

// finish detaches an ended run: its connection, events and devices.
func (a *adapter) finish(r *run) {
	if r.conn != nil {
		r.conn.Close()
	}
	if r.unsubscribe != nil {
		r.unsubscribe()
	}
	if r.events != nil {
		r.events.Close()
	}
	r.proc.Close()
	a.mu.Lock()
	if r.conn != nil {
		st := r.conn.Stats()
		a.totals.lateReplies += st.LateReplies
	}
	a.totals.strikes += r.strikes.Total()
	if r.events != nil {
		a.totals.dropped += r.events.Dropped()
	}
	select {
	case <-r.proc.Wait():
		if st, err := r.proc.ExitStatus(); err == nil {
			a.lastExit = a.exitWords(st, r.killed)
		}
	default:
	}
	a.pid = 0
	if a.cur == r {
		a.cur = nil
	}
	a.mu.Unlock()
	a.devicesDown("adapter " + a.name + " is not running")
}

// await waits for a run to end. It returns nil when ctx ends (the gateway
// stops) or, for a tool, when it has been idle its warm time; else why the
// run crashed.
func (a *adapter) await(ctx context.Context, r *run) error {
	var wake <-chan struct{} // a service has no idle time: never woken
	if a.isTool() {
		wake = a.wake
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.conn.Done():
			return a.endReason(r)
		case <-r.proc.Wait():
			return a.exitReason(r)
		case <-wake:
		}
		a.mu.Lock()
		idle := a.inUse == 0 && a.s.clk.Now().Sub(a.lastUsed) >= a.s.opt.Timing.Warm
		a.mu.Unlock()
		if idle {
			return nil
		}
	}
}

// endReason says why a connection ended; for an adapter that closed its
// output by exiting, its exit says more, so it is given a moment.
func (a *adapter) endReason(r *run) error {
	e, _ := r.conn.Err().(*conn.EndError)
	if e != nil && !e.Kill {
		select {
		case <-r.proc.Wait():
			return a.exitReason(r)
		case <-time.After(100 * time.Millisecond):
		}
	}
	return r.conn.Err()
}

func (a *adapter) exitReason(r *run) error {
	st, _ := r.proc.ExitStatus()
	return errors.New("the adapter " + a.exitWords(st, notKilled))
}

// exitWords says how the adapter ended, with the stop's schedule.
func (a *adapter) exitWords(st process.ExitStatus, by killer) string {
	return exitWords(st, by, a.s.opt.Timing.Stop.Kill)
}

func (a *adapter) stopReport() *process.StopReport {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.lastStop
}

// crashed books a crash (section 7) and reports the delay before the next
// start, or fails the adapter after the last allowed crash.
func (a *adapter) crashed(err error) (delay time.Duration, failed bool) {
	delay, failed = a.tracker.Crashed(a.s.clk.Now())
	a.mu.Lock()
	a.totals.crashes++
	a.consecutive = a.tracker.Consecutive()
	a.lastExitWhy(err)
	a.mu.Unlock()
	if failed {
		a.fail(restart.Crashloop, fmt.Sprintf("%d crashes in a row, the last: %v", a.tracker.Consecutive(), err))
	}
	a.log.Warn("adapter crashed", "err", err, "consecutive", a.tracker.Consecutive(), "restart_in", delay)
	return delay, failed
}

// lastExitWhy records a crash's cause as the last exit: it says more than
// the exit status (a kill for missed pings is also "signal: killed").
func (a *adapter) lastExitWhy(err error) { a.lastExit = err.Error() }
