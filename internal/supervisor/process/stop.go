//go:build linux

package process

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openhal/gateway/internal/clock"
)

// groupPoll is how often Stop checks whether the process group has emptied
// after its leader exited. The kernel gives no event for "a process group
// is now empty" (only the parent of each member hears of its death), so
// this one condition is polled; every other step waits on an event.
const groupPoll = 20 * time.Millisecond

// sweepLead is how long before the SIGKILL deadline Stop looks up and
// pins (pidfd) the processes that escaped the group. The scan of /proc
// takes milliseconds on a quiet machine and tens of them or more on a
// loaded one, and the kill must not wait for it (spec §8: SIGKILL no later
// than 200 ms after T0+5 s). A process forked or re-parented after the
// scan is not lost: the group's SIGKILL re-parents the children of its
// members to the gateway, a subreaper (SetSubreaper), where the sweep's
// next rounds find them as orphans.
const sweepLead = 300 * time.Millisecond

// Stop runs the fixed stop sequence on p (spec §8, seed "Shutdown").
//
// sendShutdown writes the shutdown request and returns a channel closed when
// its reply arrives (nil if none can come, e.g. the write failed); a nil
// sendShutdown skips the request. T0 is the moment it returns, so it must
// not block on an adapter that does not read: the caller bounds that write
// (and the queued events before it, up to 1 s by the spec). Then:
// standard input is closed when the reply arrives or at T0+CloseStdin; at
// T0+Term SIGTERM goes to the process group if any member is still alive,
// even if the leader has exited; at T0+Kill SIGKILL goes to the group, and
// then every process that escaped the group (its descendants in another
// group or session, and setsid orphans re-parented to us, see Orphans),
// looked up sweepLead before, and any that appeared since, is killed too
// and reaped. Stop returns early once the leader has exited and
// the group is empty, after the same sweep of escapees; it never takes
// longer than Kill+ReapMargin.
//
// The schedule runs on clk. The final wait for the kernel to end killed
// processes is on the real clock: it is a wait on the kernel, not protocol
// time.
//
// Escapees are attributed to p by session and start time: an orphan in
// another session started after p belongs to p or to an adapter started
// later and still running. While p is the newest adapter, or the only one
// that daemonizes, that is exact; otherwise the setsid orphan of an adapter
// started after p is killed too, early. (The kernel keeps no record of
// which process an orphan descended from; only a cgroup per adapter would
// make this exact.) It relies on the gateway starting no child of its own
// in a session of its own.
func Stop(p *Proc, sendShutdown func() (replied <-chan struct{}), t Timing, clk clock.Clock) StopReport {
	var replied <-chan struct{}
	if sendShutdown != nil {
		replied = sendShutdown()
	}
	r := StopReport{T0: clk.Now()}
	var errs []error

	after := func(d time.Duration) (<-chan struct{}, clock.Timer) {
		c := make(chan struct{})
		return c, clk.AfterFunc(d, func() { close(c) })
	}
	closeC, closeT := after(t.CloseStdin)
	termC, termT := after(t.Term)
	sweepC, sweepT := after(max(t.Kill-sweepLead, 0))
	killC, killT := after(t.Kill)
	defer func() { closeT.Stop(); termT.Stop(); sweepT.Stop(); killT.Stop() }()
	var pollC <-chan struct{} // armed while the leader is gone but the group lives

	closeStdin := func() {
		if r.StdinClosedAt.IsZero() {
			if err := ignoreClosed(p.stdin.Close()); err != nil {
				errs = append(errs, fmt.Errorf("close stdin of %d: %w", p.pid, err))
			}
			r.StdinClosedAt = clk.Now()
		}
	}
	signalGroup := func(sig syscall.Signal) {
		at := clk.Now()
		if err := syscall.Kill(-p.pid, sig); err != nil && err != syscall.ESRCH {
			errs = append(errs, fmt.Errorf("send %v to process group %d: %w", sig, p.pid, err))
			return
		}
		r.Signals = append(r.Signals, Sent{Signal: sig, At: at, Pid: p.pid, Group: true})
	}
	exited := p.Wait()
	leaderGone := func() {
		exited = nil
		r.Exited, r.ExitedAt = true, clk.Now()
		r.Status, _ = p.ExitStatus()
	}

	var sw *sweep
loop:
	for {
		select {
		case <-replied:
			replied = nil
			r.Replied, r.RepliedAt = true, clk.Now()
			closeStdin()
		case <-closeC:
			closeC = nil
			closeStdin()
		case <-exited:
			leaderGone()
			if !groupAlive(p.pid) {
				break loop
			}
			pollC, _ = after(groupPoll)
		case <-pollC:
			if !groupAlive(p.pid) {
				break loop
			}
			pollC, _ = after(groupPoll)
		case <-termC:
			termC = nil
			closeStdin() // CloseStdin > Term would be a misconfiguration; never leave it open past SIGTERM
			if groupAlive(p.pid) {
				signalGroup(syscall.SIGTERM)
			}
		case <-sweepC:
			sweepC = nil
			// Find and pin (pidfd) the escapees ahead of the kill, whose
			// deadline must not wait for a scan of /proc.
			var err error
			if sw, err = newSweep(p); err != nil {
				errs = append(errs, err)
			}
		case <-killC:
			closeStdin()
			if sw == nil { // both timers were due at once
				var err error
				if sw, err = newSweep(p); err != nil {
					errs = append(errs, err)
				}
			}
			if groupAlive(p.pid) {
				signalGroup(syscall.SIGKILL)
			}
			break loop
		}
	}
	closeStdin()

	if sw == nil {
		var err error
		if sw, err = newSweep(p); err != nil {
			errs = append(errs, err)
		}
	}
	deadline := time.Now().Add(ReapMargin)
	if sw != nil {
		errs = append(errs, sw.kill(p, &r, clk))
	}
	if exited != nil {
		tm := time.NewTimer(time.Until(deadline))
		select {
		case <-exited:
			leaderGone()
		case <-tm.C:
			r.Remaining = append(r.Remaining, p.pid)
		}
		tm.Stop()
	}
	if sw != nil {
		r.Remaining = append(r.Remaining, sw.wait(deadline)...)
		sw.close()
	}
	r.Ended = clk.Now()
	r.Err = errors.Join(errs...)
	return r
}

// sweep holds the processes of an adapter other than its leader: group
// members and escapees, each pinned by a pidfd so that signals and reaping
// cannot hit a recycled pid.
type sweep struct {
	pgid    int
	targets map[int]target
}

type target struct {
	fd      int
	inGroup bool
	killed  bool
}

func newSweep(p *Proc) (*sweep, error) {
	sw := &sweep{pgid: p.pid, targets: make(map[int]target)}
	_, err := sw.collect(p)
	return sw, err
}

// collect adds the processes of p not yet pinned: members of its group,
// everything below the leader or a member in the parent tree, setsid
// orphans re-parented to us since p started or below p's shim, and
// everything below those.
// It reports whether it found any new one.
func (sw *sweep) collect(p *Proc) (bool, error) {
	all, err := scan()
	if err != nil {
		return false, fmt.Errorf("sweep adapter %d: %w", p.pid, err)
	}
	roots := []int{p.pid}
	inGroup := make(map[int]bool)
	for _, s := range all {
		if s.pgrp == p.pid && s.pid != p.pid {
			roots = append(roots, s.pid)
			inGroup[s.pid] = true
		}
	}
	for _, s := range orphans(all, p.start) {
		roots = append(roots, s.pid)
	}
	if p.shim != 0 {
		// Started through a shim, a subreaper: whatever left the leader's
		// tree was re-parented to the shim, not to us.
		roots = append(roots, descendants(all, p.shim)...)
	}
	found := false
	for _, pid := range append(roots[1:], descendants(all, roots...)...) {
		if _, ok := sw.targets[pid]; ok || pid == p.pid {
			continue
		}
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue // gone (and reaped) since the scan
		}
		sw.targets[pid] = target{fd: fd, inGroup: inGroup[pid]}
		found = true
	}
	return found, nil
}

// kill SIGKILLs every pinned process, then looks again for processes that
// were forked or re-parented meanwhile, a few rounds at most: a process
// killed through its pidfd forks no more, so each round can only find what
// the previous one raced with.
func (sw *sweep) kill(p *Proc, r *StopReport, clk clock.Clock) error {
	var errs []error
	for round := 0; round < 4; round++ {
		for pid, t := range sw.targets {
			if t.killed {
				continue
			}
			t.killed = true
			sw.targets[pid] = t
			if err := unix.PidfdSendSignal(t.fd, unix.SIGKILL, nil, 0); err != nil {
				if err != unix.ESRCH {
					errs = append(errs, fmt.Errorf("kill pid %d of adapter %d: %w", pid, p.pid, err))
				}
				continue
			}
			if !t.inGroup {
				r.Escapees = append(r.Escapees, pid)
				r.Signals = append(r.Signals, Sent{Signal: syscall.SIGKILL, At: clk.Now(), Pid: pid})
			}
		}
		more, err := sw.collect(p)
		if err != nil {
			errs = append(errs, err)
			break
		}
		if !more {
			break
		}
	}
	return errors.Join(errs...)
}

// wait waits until every pinned process has exited or the deadline passes,
// then reaps those that are our children (re-parented to us as subreaper),
// and returns the pids that had not exited.
func (sw *sweep) wait(deadline time.Time) []int {
	pending := make(map[int]int, len(sw.targets)) // fd -> pid
	for pid, t := range sw.targets {
		pending[t.fd] = pid
	}
	for len(pending) > 0 {
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		fds := make([]unix.PollFd, 0, len(pending))
		for fd := range pending {
			fds = append(fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
		}
		n, err := unix.Poll(fds, int(left.Milliseconds())+1)
		if err != nil && err != unix.EINTR {
			break
		}
		if n <= 0 {
			continue
		}
		for _, f := range fds {
			if f.Revents != 0 {
				delete(pending, int(f.Fd))
			}
		}
	}
	// Every parent among the targets has exited by now, so a zombie whose
	// parent was one of them has already been re-parented to us: reaping
	// after the wait, not during it, catches them all.
	for _, t := range sw.targets {
		var info unix.Siginfo
		_ = unix.Waitid(unix.P_PIDFD, t.fd, &info, unix.WEXITED|unix.WNOHANG, nil) // ECHILD: not ours to reap
	}
	var left []int
	for _, pid := range pending {
		left = append(left, pid)
	}
	return left
}

// Sweep kills and reaps what is left of p outside its leader: members of
// its group, descendants in other groups or sessions, and setsid orphans
// re-parented to us (the same sweep that ends Stop). After Kill, once Wait's
// channel is closed, it reaps the group members and escapees that Kill's
// signal re-parented to us or did not reach. It waits at most ReapMargin
// and returns the escapees it killed and the pids still not gone.
func Sweep(p *Proc) (escapees, remaining []int, err error) {
	var r StopReport
	sw, err := newSweep(p)
	if err != nil {
		return nil, nil, err
	}
	defer sw.close()
	deadline := time.Now().Add(ReapMargin)
	err = sw.kill(p, &r, clock.Real())
	return r.Escapees, sw.wait(deadline), err
}

func (sw *sweep) close() {
	for _, t := range sw.targets {
		unix.Close(t.fd)
	}
}
