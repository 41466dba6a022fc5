//go:build !linux

package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"

	"github.com/openhal/gateway/internal/clock"
)

// ErrUnsupported is what every call that would run a process returns on a
// system other than Linux: the stop sequence relies on Linux alone
// (pidfds, PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER, /proc).
var ErrUnsupported = errors.New("running adapters needs Linux (this is " + runtime.GOOS + ")")

// Proc is one started process; on this system none can be started.
type Proc struct {
	Stdin  io.WriteCloser
	Stdout io.Reader
	Stderr io.Reader
}

// ShimMain has no shim to run here: adapters run on Linux only.
func ShimMain([]string) int {
	fmt.Println("adapter-shim:", ErrUnsupported)
	return 2
}

// Start fails with ErrUnsupported.
func Start(_ context.Context, spec Spec) (*Proc, error) {
	return nil, fmt.Errorf("start %s: %w", spec.Path, ErrUnsupported)
}

// Pid returns 0: no process was started.
func (p *Proc) Pid() int { return 0 }

// Wait returns a closed channel: there is nothing to wait for.
func (p *Proc) Wait() <-chan struct{} {
	done := make(chan struct{})
	close(done)
	return done
}

// ExitStatus fails with ErrUnsupported.
func (p *Proc) ExitStatus() (ExitStatus, error) { return ExitStatus{}, ErrUnsupported }

// Kill fails with ErrUnsupported.
func (p *Proc) Kill() error { return ErrUnsupported }

// Close does nothing.
func (p *Proc) Close() error { return nil }

// SetSubreaper fails with ErrUnsupported.
func SetSubreaper() error { return ErrUnsupported }

// Descendants fails with ErrUnsupported.
func Descendants(int) ([]int, error) { return nil, ErrUnsupported }

// Orphans fails with ErrUnsupported.
func Orphans(uint64) ([]int, error) { return nil, ErrUnsupported }

// Stop returns a report that carries ErrUnsupported.
func Stop(_ *Proc, _ func() <-chan struct{}, _ Timing, clk clock.Clock) StopReport {
	now := clk.Now()
	return StopReport{T0: now, Ended: now, Err: ErrUnsupported}
}

// Sweep fails with ErrUnsupported.
func Sweep(*Proc) (escapees, remaining []int, err error) { return nil, nil, ErrUnsupported }
