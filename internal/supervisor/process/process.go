//go:build linux

// Package process runs one adapter process at the operating-system level:
// it starts the executable in a process group of its own with a death
// signal, exposes its standard streams as pipes, kills its whole group at
// once, and runs the fixed stop sequence of adapter protocol 1 (section 8).
// What is said on the pipes is the protocol's business, not this package's.
//
// Linux only: it relies on process groups, PR_SET_PDEATHSIG,
// PR_SET_CHILD_SUBREAPER, pidfds (Linux 5.3) and /proc. Elsewhere it
// builds (the client commands import the supervisor for its types), but
// Start and the other calls fail with ErrUnsupported.
package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// Proc is one started process and its process group (whose id is its pid).
type Proc struct {
	// Stdin is the write end of the process's standard input.
	Stdin io.WriteCloser
	// Stdout and Stderr are the read ends of its standard output and error.
	// They reach EOF once every process holding the write end (the adapter
	// and whatever inherited it) has closed it or died; Close releases them.
	Stdout io.Reader
	Stderr io.Reader

	pid   int
	start uint64 // start time in clock ticks since boot, from /proc
	shim  int    // the shim's pid, 0 if started without one

	stdin, stdout, stderr *os.File

	done    chan struct{} // closed once the process is reaped
	status  ExitStatus    // valid once done is closed
	waitErr error         // non-nil if waiting failed for another reason
}

// Start starts spec's executable in a process group of its own, with
// SIGKILL as its parent-death signal.
//
// PR_SET_PDEATHSIG fires when the thread that forked the child exits, not
// when the process does (prctl(2)). Go moves goroutines between threads and
// ends a thread when a goroutine that locked it returns without unlocking,
// so a fork from an arbitrary goroutine could leave the child tied to a
// thread that the runtime later ends, killing a healthy adapter. Start
// therefore forks from a goroutine of its own that locks its thread before
// the fork and keeps it locked, and alive, until the child has been reaped.
// That goroutine is also the one that waits for the child; once the child is
// reaped it returns, and the runtime ends the thread, harmlessly.
//
// ctx only bounds the start: if it is done, nothing is started. Once
// started, the process lives until it exits, Kill or Stop.
func Start(ctx context.Context, spec Spec) (*Proc, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.Path, err)
	}
	p := &Proc{done: make(chan struct{})}
	var child [3]*os.File // the ends the child gets: stdin read, stdout and stderr write
	closeAll := func() {
		for _, f := range []*os.File{child[0], child[1], child[2], p.stdin, p.stdout, p.stderr} {
			if f != nil {
				f.Close()
			}
		}
	}
	var err error
	if child[0], p.stdin, err = os.Pipe(); err != nil {
		return nil, fmt.Errorf("start %s: stdin pipe: %w", spec.Path, err)
	}
	if p.stdout, child[1], err = os.Pipe(); err != nil {
		closeAll()
		return nil, fmt.Errorf("start %s: stdout pipe: %w", spec.Path, err)
	}
	if p.stderr, child[2], err = os.Pipe(); err != nil {
		closeAll()
		return nil, fmt.Errorf("start %s: stderr pipe: %w", spec.Path, err)
	}
	env := spec.Env
	if env == nil {
		env = []string{} // exec.Cmd treats nil as "inherit"
	}
	cmd := &exec.Cmd{
		Path: spec.Path,
		Args: append([]string{spec.Path}, spec.Args...),
		Dir:  spec.Dir,
		Env:  env,
		// *os.File streams are handed to the child as they are: no copying
		// goroutines, so Wait returns when the process ends, not when its
		// pipes are drained.
		Stdin:  child[0],
		Stdout: child[1],
		Stderr: child[2],
		SysProcAttr: &syscall.SysProcAttr{
			Setpgid:    true,
			Pdeathsig:  syscall.SIGKILL,
			Credential: spec.Credential,
		},
	}
	started := make(chan error, 1)
	if spec.Shim == "" {
		go p.run(cmd, started)
	} else if err := p.startShim(cmd, spec, started); err != nil {
		closeAll()
		return nil, fmt.Errorf("start %s: %w", spec.Path, err)
	}
	if err := <-started; err != nil {
		closeAll()
		return nil, fmt.Errorf("start %s: %w", spec.Path, err)
	}
	for _, f := range child {
		f.Close()
	}
	p.Stdin, p.Stdout, p.Stderr = p.stdin, p.stdout, p.stderr
	return p, nil
}

// run forks and then reaps the child on one locked thread; see Start.
func (p *Proc) run(cmd *exec.Cmd, started chan<- error) {
	// Never unlocked: returning while locked makes the runtime end this
	// thread, which is what we want once the child is gone, and no other
	// goroutine may ever run on it while the child lives.
	runtime.LockOSThread()
	if err := cmd.Start(); err != nil {
		started <- err
		return
	}
	p.pid = cmd.Process.Pid
	// The child cannot be reaped before Wait below, so its /proc entry
	// exists (perhaps as a zombie) and its start time is its own.
	if st, err := readStat(p.pid); err == nil {
		p.start = st.start
	}
	started <- nil
	err := cmd.Wait()
	var exitErr *exec.ExitError
	switch {
	case err == nil || errors.As(err, &exitErr):
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if ws.Signaled() {
			p.status = ExitStatus{Code: -1, Signal: ws.Signal()}
		} else {
			p.status = ExitStatus{Code: ws.ExitStatus()}
		}
	default:
		p.status = ExitStatus{Code: -1}
		p.waitErr = fmt.Errorf("wait for pid %d: %w", p.pid, err)
	}
	close(p.done)
}

// Pid returns the process id, which is also its process group id.
func (p *Proc) Pid() int { return p.pid }

// Wait returns a channel that is closed once the process has exited and
// been reaped. Members of its group may outlive it.
func (p *Proc) Wait() <-chan struct{} { return p.done }

// ExitStatus returns how the process ended. Before Wait's channel is
// closed it returns the zero ExitStatus and a nil error; the error is set
// only if waiting itself failed.
func (p *Proc) ExitStatus() (ExitStatus, error) {
	select {
	case <-p.done:
		return p.status, p.waitErr
	default:
		return ExitStatus{}, nil
	}
}

// Kill sends SIGKILL to the whole process group at once.
//
// The group id is the leader's pid, which Linux does not hand out again
// while any process still uses it as a group id; so the signal cannot reach
// an unrelated process while the group has members. Once the leader is
// reaped and the group is empty, Kill sends nothing.
//
// Members that the leader's death re-parents to us (see SetSubreaper) and
// processes that left the group are not reaped or reached by Kill: call
// Sweep once Wait's channel is closed.
func (p *Proc) Kill() error {
	select {
	case <-p.done:
		if !groupAlive(p.pid) {
			return nil
		}
	default:
	}
	if err := syscall.Kill(-p.pid, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
		return fmt.Errorf("kill process group %d: %w", p.pid, err)
	}
	return nil
}

// Close releases the gateway's ends of the three pipes. A Read blocked on
// Stdout or Stderr returns an error. Call it once the readers are done (or
// to make them stop); it does not affect the process beyond closing its
// standard input.
func (p *Proc) Close() error {
	return errors.Join(ignoreClosed(p.stdin.Close()), ignoreClosed(p.stdout.Close()), ignoreClosed(p.stderr.Close()))
}

func ignoreClosed(err error) error {
	if errors.Is(err, os.ErrClosed) {
		return nil
	}
	return err
}
