package qemutest

import (
	"fmt"
	"io"
	"time"
)

// T is the part of *testing.T a Report uses: a failed check fails the test.
type T interface {
	Helper()
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
}

// Report runs the checks of a system test and prints each as a PASS,
// FAIL or SKIP line with its duration, then "N passed, N failed", to out
// (so that they stand out in make's output) and to the test's log. A
// failed check fails the test; the checks after it still run.
type Report struct {
	t              T
	out            io.Writer
	passed, failed int
}

// NewReport returns a Report printing to out (os.Stdout in the tests)
// and t.
func NewReport(t T, out io.Writer) *Report { return &Report{t: t, out: out} }

// Check runs check and reports its outcome under name.
func (r *Report) Check(name string, check func() error) {
	r.t.Helper()
	start := time.Now()
	err := check()
	took := time.Since(start).Round(10 * time.Millisecond)
	if err != nil {
		r.failed++
		line := fmt.Sprintf("FAIL %s (%s): %v", name, took, err)
		fmt.Fprintln(r.out, line)
		r.t.Errorf("%s", line)
		return
	}
	r.passed++
	line := fmt.Sprintf("PASS %s (%s)", name, took)
	fmt.Fprintln(r.out, line)
	r.t.Logf("%s", line)
}

// Skip reports a check that cannot run here, and why; it counts as
// neither passed nor failed.
func (r *Report) Skip(name string, why error) {
	r.t.Helper()
	line := fmt.Sprintf("SKIP %s: %v", name, why)
	fmt.Fprintln(r.out, line)
	r.t.Logf("%s", line)
}

// Failed is the number of failed checks so far.
func (r *Report) Failed() int { return r.failed }

// Summary prints "N passed, N failed".
func (r *Report) Summary() {
	r.t.Helper()
	line := fmt.Sprintf("%d passed, %d failed", r.passed, r.failed)
	fmt.Fprintln(r.out, line)
	r.t.Logf("%s", line)
}
