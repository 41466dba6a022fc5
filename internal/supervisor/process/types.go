package process

import (
	"fmt"
	"syscall"
	"time"
)

// The types of this file are the package's vocabulary, portable so that
// the supervisor's status (and the client commands that print it) build
// on every system; running processes is Linux only (process.go).

// ShimCommand is the argument that makes the gateway's binary (or a test
// binary) run ShimMain.
const ShimCommand = "adapter-shim"

// Spec says what to run and as whom.
type Spec struct {
	// Path is the executable. It is not looked up in PATH.
	Path string
	// Args are the arguments after the program name; argv[0] is Path.
	Args []string
	// Dir is the working directory (the adapter's install folder).
	Dir string
	// Env is the complete environment, already cleared and filled by the
	// caller. A nil Env means an empty environment, never the gateway's own:
	// an adapter must not see the gateway's variables.
	Env []string
	// Credential is the user and groups to run as; nil runs as ourselves.
	Credential *Credential
	// Shim, if set, is an executable that runs ShimMain when its first
	// argument is ShimCommand (the gateway's own binary): the process is
	// then started through it, so that nothing it starts outlives the
	// gateway (see shim.go). Pid, signals, exit status and streams are the
	// process's own either way.
	Shim string
}

// ExitStatus is how a process ended: an exit code or a signal.
type ExitStatus struct {
	// Code is the exit code, or -1 if a signal ended the process.
	Code int
	// Signal is the signal that ended the process, or 0 if it exited.
	Signal syscall.Signal
}

// Signaled reports whether a signal ended the process.
func (s ExitStatus) Signaled() bool { return s.Signal != 0 }

func (s ExitStatus) String() string {
	if s.Signaled() {
		return "signal: " + s.Signal.String()
	}
	return fmt.Sprintf("exit status %d", s.Code)
}

// Timing is the stop sequence's schedule, each step measured from T0, the
// moment shutdown was written.
type Timing struct {
	// CloseStdin is when standard input is closed if no reply came first.
	CloseStdin time.Duration
	// Term is when SIGTERM goes to the process group if any member lives.
	Term time.Duration
	// Kill is when SIGKILL goes to the process group. It bounds the stop.
	Kill time.Duration
}

// DefaultTiming is the protocol's schedule (seed "Shutdown", spec §8):
// stdin closed by 2 s, SIGTERM at 2 s, SIGKILL at 5 s.
func DefaultTiming() Timing {
	return Timing{CloseStdin: 2 * time.Second, Term: 2 * time.Second, Kill: 5 * time.Second}
}

// ReapMargin is how long Stop waits, at most, after its last SIGKILL, for
// the kernel to end the killed processes so that they can be reaped and
// checked gone. A SIGKILLed process ends as soon as the kernel runs it
// again, unless it is stuck in the kernel; on a loaded machine (a Pi busy
// with other work, a 2-core CI machine running the race detector) that
// took longer than 250 ms, and a process still exiting was reported left
// behind. Stop returns as soon as they are gone, so the margin costs
// nothing when they go at once; it keeps the stop's total bounded
// (Kill+ReapMargin, 7 s with the protocol's schedule, inside systemd's
// TimeoutStopSec of 15 s) when one is stuck (listed in
// StopReport.Remaining).
const ReapMargin = 2 * time.Second

// Sent is one signal Stop sent.
type Sent struct {
	Signal syscall.Signal
	At     time.Time
	// Pid is the target: the process group's id for a signal to the group,
	// a single process's id for a signal to an escapee.
	Pid   int
	Group bool
}

// StopReport says what happened during a stop.
type StopReport struct {
	T0            time.Time // shutdown written
	Replied       bool      // the reply to shutdown arrived
	RepliedAt     time.Time
	StdinClosedAt time.Time
	Exited        bool // the leader exited and was reaped within the stop
	ExitedAt      time.Time
	Status        ExitStatus // how the leader ended, if Exited
	Signals       []Sent     // in the order sent
	// Escapees are processes outside the group, below it or re-parented to
	// us from it (setsid), that were killed at the end.
	Escapees []int
	// Remaining are pids of the adapter that were still not gone when Stop
	// gave up waiting (ReapMargin after its last SIGKILL). Normally empty.
	Remaining []int
	Ended     time.Time // Stop returned
	Err       error     // what went wrong sending signals or reading /proc
}
