//go:build linux

package process

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The shim stands between the gateway and one adapter so that nothing the
// adapter started outlives the gateway, however the gateway ends. The
// adapter's own death signal (Pdeathsig) ends the adapter alone; its
// children, in its group or in sessions of their own, would be re-parented
// to init and live on. The shim is a child subreaper: every process below
// it whose parent dies is re-parented to it, so all of the adapter's tree
// stays below the shim. It holds the read end of a pipe (the lifeline)
// whose only write end is the gateway's: when the gateway dies, by any
// signal, the kernel closes that end, the shim reads EOF and kills its
// whole tree, reaps it and exits.
//
// To the gateway the shim is invisible: the adapter is still the leader
// of its own process group, the pid the gateway signals, sweeps and
// reports is the adapter's, and its exit status arrives on a second pipe
// (the status pipe) the moment the shim reaps it. The shim itself exits
// once the adapter has exited and nothing is left below it.
//
// The shim is the gateway's own binary re-executed with ShimCommand as its
// first argument (Spec.Shim); its main calls ShimMain.

// The shim's extra descriptors: the lifeline's read end and the status
// pipe's write end.
const (
	shimLifelineFd = 3
	shimStatusFd   = 4
)

// shimReapTick bounds how long the shim's kill of its tree waits for a
// SIGCHLD before it looks again for processes forked in the meantime.
const shimReapTick = 50 * time.Millisecond

// shimSpec is what the shim starts: the first line on the lifeline, in
// JSON. Not on its command line: `pgrep -f` and `ps` for the adapter's
// path find the adapter alone, not its shim too.
type shimSpec struct {
	Path   string   `json:"path"`
	Args   []string `json:"args"`
	Dir    string   `json:"dir"`
	Cred   bool     `json:"cred"` // switch to Uid, Gid and Groups
	Uid    uint32   `json:"uid"`
	Gid    uint32   `json:"gid"`
	Groups []uint32 `json:"groups"`
}

func newShimSpec(spec Spec) shimSpec {
	s := shimSpec{Path: spec.Path, Args: spec.Args, Dir: spec.Dir}
	if c := spec.Credential; c != nil {
		s.Cred, s.Uid, s.Gid, s.Groups = true, c.Uid, c.Gid, c.Groups
	}
	return s
}

// credential is the spec's credential for the adapter; Groups is never
// nil, so that the adapter gets exactly those groups, none if empty.
func (s shimSpec) credential() *syscall.Credential {
	if !s.Cred {
		return nil
	}
	return &syscall.Credential{Uid: s.Uid, Gid: s.Gid, Groups: append([]uint32{}, s.Groups...)}
}

// readShimSpec reads the spec, the lifeline's first line.
func readShimSpec(r *bufio.Reader) (shimSpec, error) {
	var s shimSpec
	line, err := r.ReadBytes('\n')
	if err != nil {
		return s, fmt.Errorf("read what to start: %w", err)
	}
	if err := json.Unmarshal(line, &s); err != nil || s.Path == "" {
		return s, fmt.Errorf("what to start: %q: %v", line, err)
	}
	return s, nil
}

// ShimMain runs the shim and returns its exit code. Its standard streams
// are the adapter's; descriptors 3 and 4 are the lifeline, whose first
// line says what to start (shimSpec), and the status pipe. It takes no
// arguments.
func ShimMain([]string) int {
	// The adapter's death signal is tied to the thread that forks it: the
	// main thread, locked here, lives as long as the shim.
	runtime.LockOSThread()
	for _, fd := range []int{shimLifelineFd, shimStatusFd} {
		// Pipes, not whatever else is there (the Go runtime's own
		// descriptors, when run by hand).
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
			fmt.Fprintln(os.Stderr, "gateway: adapter-shim is started by the gateway for each adapter, not by hand")
			return 2
		}
	}
	status := os.NewFile(shimStatusFd, "status")
	lifeline := os.NewFile(shimLifelineFd, "lifeline")
	syscall.CloseOnExec(shimStatusFd)
	syscall.CloseOnExec(shimLifelineFd)
	life := bufio.NewReader(lifeline)
	spec, err := readShimSpec(life)
	if err != nil {
		fmt.Fprintf(status, "error 0 adapter-shim: %v\n", err)
		return 2
	}
	// Handled, not ignored: an ignored signal stays ignored across exec,
	// and the adapter must get SIGTERM's default. The shim is in a group of
	// its own, so only a signal meant for it (systemd's stop of the whole
	// cgroup, an operator) arrives here; the gateway's stop runs the
	// adapter's sequence, and the shim follows its adapter.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	sigchld := make(chan os.Signal, 1)
	signal.Notify(sigchld, syscall.SIGCHLD)
	if err := SetSubreaper(); err != nil {
		fmt.Fprintf(status, "error 0 adapter-shim: %v\n", err)
		return 1
	}
	proc, err := os.StartProcess(spec.Path, append([]string{spec.Path}, spec.Args...), &os.ProcAttr{
		Dir: spec.Dir, Env: os.Environ(),
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
		Sys:   &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: spec.credential()},
	})
	if err != nil {
		errno := syscall.Errno(0)
		if pe, ok := err.(*os.PathError); ok {
			errno, _ = pe.Err.(syscall.Errno)
		}
		fmt.Fprintf(status, "error %d %v\n", errno, err)
		return 127
	}
	fmt.Fprintf(status, "pid %d\n", proc.Pid)
	if err := releaseStdio(); err != nil {
		fmt.Fprintf(status, "warn %v\n", err)
	}
	gone := make(chan struct{})
	go func() {
		io.Copy(io.Discard, life)
		close(gone)
	}()
	return shimLoop(proc.Pid, status, sigchld, gone)
}

// releaseStdio puts /dev/null on the shim's standard streams: the pipes
// must reach EOF when the adapter and its children close them, not when
// the shim does.
func releaseStdio() error {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", os.DevNull, err)
	}
	defer null.Close()
	for fd := 0; fd < 3; fd++ {
		if err := unix.Dup3(int(null.Fd()), fd, 0); err != nil {
			return fmt.Errorf("put %s on fd %d: %w", os.DevNull, fd, err)
		}
	}
	return nil
}

// shimLoop reaps until the adapter has exited and nothing is left below
// the shim, reporting the adapter's status on status; if the gateway goes
// first, it kills the whole tree.
func shimLoop(adapter int, status io.Writer, sigchld <-chan os.Signal, gone <-chan struct{}) int {
	adapterDone := false
	for {
		select {
		case <-gone:
			killTree(sigchld)
			return 0
		case <-sigchld:
		}
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if err == syscall.ECHILD && adapterDone {
				return 0
			}
			if pid <= 0 {
				break
			}
			if pid == adapter {
				adapterDone = true
				if ws.Signaled() {
					fmt.Fprintf(status, "signal %d\n", int(ws.Signal()))
				} else {
					fmt.Fprintf(status, "exit %d\n", ws.ExitStatus())
				}
			}
		}
	}
}

// killTree SIGKILLs every process below the shim and reaps them, looking
// again until none is left: a process forked between a look and the kill
// is found by the next look, and a killed process forks no more.
func killTree(sigchld <-chan os.Signal) {
	self := os.Getpid()
	for {
		if all, err := scan(); err == nil {
			for _, pid := range descendants(all, self) {
				// A pid read from /proc could in principle be reaped by its own
				// parent and reused before this kill; the tree is being torn down
				// at once, so the window is the scan's few milliseconds.
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if err == syscall.ECHILD {
				return // no child, hence nothing below us: we are a subreaper
			}
			if pid <= 0 {
				break
			}
		}
		select {
		case <-sigchld:
		case <-time.After(shimReapTick):
		}
	}
}
