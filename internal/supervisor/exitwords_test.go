package supervisor

import (
	"syscall"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/supervisor/process"
)

func TestExitWords(t *testing.T) {
	killed := process.ExitStatus{Code: -1, Signal: syscall.SIGKILL}
	tests := []struct {
		st   process.ExitStatus
		by   killer
		want string
	}{
		{process.ExitStatus{Code: 0}, notKilled, "exited with code 0"},
		{process.ExitStatus{Code: 3}, notKilled, "exited with code 3"},
		{killed, killedAfterStop, "was killed by the gateway (SIGKILL) after ignoring the request to stop for 5s"},
		{killed, killedAtOnce, "was killed by the gateway (SIGKILL)"},
		{killed, notKilled, "was killed (SIGKILL) by another process"},
		{process.ExitStatus{Code: -1, Signal: syscall.SIGSEGV}, notKilled, "was killed by SIGSEGV (segmentation fault)"},
		{process.ExitStatus{Code: -1, Signal: syscall.SIGTERM}, killedAfterStop, "was killed by SIGTERM (terminated)"},
		{process.ExitStatus{Code: -1, Signal: syscall.Signal(40)}, notKilled, "was killed by signal 40 (signal 40)"},
	}
	for _, tt := range tests {
		if got := exitWords(tt.st, tt.by, 5*time.Second); got != tt.want {
			t.Errorf("exitWords(%v, %d) = %q, want %q", tt.st, tt.by, got, tt.want)
		}
	}
}
