//go:build linux

package process

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// SetSubreaper makes the calling process a child subreaper
// (PR_SET_CHILD_SUBREAPER): a process that loses its parent below us, such
// as an adapter's grandchild that left the adapter's process group with
// setsid and whose parent then exited, is re-parented to us rather than to
// init. It then stays visible (its PPid is our pid) and can be killed when
// its adapter stops. The gateway calls it once at start.
//
// A subreaper must reap what it inherits; Stop reaps the orphans it kills.
func SetSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set child subreaper: %w", err)
	}
	return nil
}

// stat is the part of /proc/<pid>/stat this package reads.
type stat struct {
	pid     int
	state   byte // R, S, D, Z, ...
	ppid    int
	pgrp    int
	session int
	start   uint64 // start time, clock ticks after boot
}

func (s stat) zombie() bool { return s.state == 'Z' || s.state == 'X' }

func readStat(pid int) (stat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, err
	}
	return parseStat(b)
}

// parseStat parses a /proc/<pid>/stat line. The command name is in
// parentheses and may itself contain spaces and parentheses, so the fields
// are counted from the last ')'.
func parseStat(b []byte) (stat, error) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return stat{}, fmt.Errorf("parse /proc stat %q: no command name", b)
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil {
		return stat{}, fmt.Errorf("parse /proc stat pid: %w", err)
	}
	// Fields after the name: 3 state, 4 ppid, 5 pgrp, 6 session, ... 22 starttime.
	f := bytes.Fields(b[end+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return stat{}, fmt.Errorf("parse /proc stat of pid %d: %d fields", pid, len(f))
	}
	s := stat{pid: pid, state: f[0][0]}
	ints := []*int{&s.ppid, &s.pgrp, &s.session}
	for i, p := range ints {
		if *p, err = strconv.Atoi(string(f[1+i])); err != nil {
			return stat{}, fmt.Errorf("parse /proc stat of pid %d: field %d: %w", pid, 4+i, err)
		}
	}
	if s.start, err = strconv.ParseUint(string(f[19]), 10, 64); err != nil {
		return stat{}, fmt.Errorf("parse /proc stat of pid %d: starttime: %w", pid, err)
	}
	return s, nil
}

// scan reads the stat of every process. Processes that vanish while it
// reads are skipped.
func scan() ([]stat, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, fmt.Errorf("scan processes: %w", err)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("scan processes: %w", err)
	}
	out := make([]stat, 0, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		s, err := readStat(pid)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
				continue
			}
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// descendants returns the pids below the roots in the parent tree of all,
// roots excluded.
func descendants(all []stat, roots ...int) []int {
	kids := make(map[int][]int)
	for _, s := range all {
		kids[s.ppid] = append(kids[s.ppid], s.pid)
	}
	seen := make(map[int]bool)
	for _, r := range roots {
		seen[r] = true
	}
	var out []int
	queue := append([]int(nil), roots...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, k := range kids[pid] {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
				queue = append(queue, k)
			}
		}
	}
	return out
}

// Descendants returns the pids of every living process below pid in the
// parent tree (children, their children, ...), whatever their process group
// or session. A process whose parent has exited is no longer below pid: it
// has been re-parented (to us, if we are a subreaper; see Orphans).
func Descendants(pid int) ([]int, error) {
	all, err := scan()
	if err != nil {
		return nil, fmt.Errorf("descendants of %d: %w", pid, err)
	}
	return descendants(all, pid), nil
}

// Orphans returns our children that we did not start: processes whose
// parent is us and whose session is not ours. This package never starts a
// child in another session (Start uses Setpgid, not Setsid), so such a
// child is a process that called setsid below one of our adapters and was
// re-parented to us (see SetSubreaper). since, if non-zero, keeps only
// processes started at or after that many clock ticks after boot.
func Orphans(since uint64) ([]int, error) {
	all, err := scan()
	if err != nil {
		return nil, fmt.Errorf("find orphans: %w", err)
	}
	var out []int
	for _, s := range orphans(all, since) {
		out = append(out, s.pid)
	}
	return out, nil
}

func orphans(all []stat, since uint64) []stat {
	self, sid := os.Getpid(), unix.Getsid
	ours, err := sid(0)
	if err != nil {
		return nil
	}
	var out []stat
	for _, s := range all {
		if s.ppid == self && s.session != ours && s.start >= since {
			out = append(out, s)
		}
	}
	return out
}

// groupAlive reports whether process group pgid has a member that has not
// exited. kill(-pgid, 0) alone also succeeds for a group whose members are
// all zombies, which are dead and need no signal, so a success is
// confirmed from /proc.
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); err == syscall.ESRCH {
		return false
	}
	all, err := scan()
	if err != nil {
		return true // cannot tell: assume alive, a signal to an empty group is harmless
	}
	for _, s := range all {
		if s.pgrp == pgid && !s.zombie() {
			return true
		}
	}
	return false
}
