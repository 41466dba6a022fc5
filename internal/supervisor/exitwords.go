package supervisor

import (
	"fmt"
	"syscall"
	"time"

	"github.com/openhal/gateway/internal/supervisor/process"
)

// killer says whether the gateway killed a run, and when.
type killer int

const (
	notKilled       killer = iota
	killedAtOnce           // a crash, a strike or a failed handshake: SIGKILL without a stop
	killedAfterStop        // the stop sequence's last step: it ignored shutdown, stdin's end and SIGTERM
)

// exitWords says how an adapter ended, in words a person reads in
// `gateway adapter status` and the log, after "the adapter": an exit
// code, or the signal by its name, and who sent a SIGKILL when it was the
// gateway (stopKill is when the stop sequence sends it). Never Go's
// "signal: killed".
func exitWords(st process.ExitStatus, by killer, stopKill time.Duration) string {
	if !st.Signaled() {
		return fmt.Sprintf("exited with code %d", st.Code)
	}
	if st.Signal == syscall.SIGKILL {
		switch by {
		case killedAfterStop:
			return fmt.Sprintf("was killed by the gateway (SIGKILL) after ignoring the request to stop for %v", stopKill)
		case killedAtOnce:
			return "was killed by the gateway (SIGKILL)"
		}
		return "was killed (SIGKILL) by another process"
	}
	return fmt.Sprintf("was killed by %s (%s)", signalName(st.Signal), st.Signal)
}

// signalName is a signal's C name, as kill -l and the man pages give it.
func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	case syscall.SIGILL:
		return "SIGILL"
	case syscall.SIGTRAP:
		return "SIGTRAP"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGBUS:
		return "SIGBUS"
	case syscall.SIGFPE:
		return "SIGFPE"
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	case syscall.SIGALRM:
		return "SIGALRM"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return fmt.Sprintf("signal %d", int(s))
}
