//go:build linux

package process

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// startShim turns cmd, built to start spec's executable directly, into
// the start of the shim that starts it (shim.go), and runs it. started
// gets the outcome of the adapter's start, as the shim reports it.
func (p *Proc) startShim(cmd *exec.Cmd, spec Spec, started chan<- error) error {
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("lifeline pipe: %w", err)
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		lifeR.Close()
		lifeW.Close()
		return fmt.Errorf("status pipe: %w", err)
	}
	// What to start goes first on the lifeline, into the pipe's buffer
	// before the shim runs (a few hundred bytes: the write cannot block).
	line, err := json.Marshal(newShimSpec(spec))
	if err == nil {
		_, err = lifeW.Write(append(line, '\n'))
	}
	if err != nil {
		for _, f := range []*os.File{lifeR, lifeW, statusR, statusW} {
			f.Close()
		}
		return fmt.Errorf("hand the adapter to its shim: %w", err)
	}
	cmd.Path = spec.Shim
	// Our own name as its argv[0], so that ps shows "gateway
	// adapter-shim", not the path it was started by (/proc/self/exe).
	cmd.Args = []string{os.Args[0], ShimCommand}
	cmd.Dir = "/" // the adapter's directory is the shim's to enter, as the adapter's user
	// No death signal: the shim must outlive the gateway long enough to
	// kill the tree, and learns of its death from the lifeline. No
	// credential: the shim switches users for the adapter.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.ExtraFiles = []*os.File{lifeR, statusW} // descriptors 3 and 4
	go p.runShim(cmd, spec.Path, statusR, lifeW, started)
	return nil
}

// runShim starts the shim, reads the adapter's pid and later its exit
// status from the status pipe, and reaps the shim. The lifeline's write
// end is kept open until then: closing it tells the shim to kill its tree.
func (p *Proc) runShim(cmd *exec.Cmd, path string, status, lifeline *os.File, started chan<- error) {
	defer status.Close()
	defer lifeline.Close()
	err := cmd.Start()
	// The shim has its copies of the ends it was given; ours must go, so
	// that the status pipe reaches EOF when the shim ends.
	for _, f := range cmd.ExtraFiles {
		f.Close()
	}
	if err != nil {
		started <- err
		return
	}
	p.shim = cmd.Process.Pid
	lines := bufio.NewScanner(status)
	pid, err := shimPid(lines, path)
	if err != nil {
		cmd.Wait()
		started <- err
		return
	}
	p.pid = pid
	if st, err := readStat(p.pid); err == nil {
		p.start = st.start
	}
	started <- nil
	reported := false
	for !reported && lines.Scan() {
		reported = p.shimStatus(lines.Text())
	}
	if reported {
		close(p.done)
	}
	werr := cmd.Wait()
	if !reported {
		p.status = ExitStatus{Code: -1}
		p.waitErr = fmt.Errorf("the shim of pid %d ended before the adapter's exit: %v", p.pid, werr)
		close(p.done)
	}
}

// shimPid reads the shim's first line: the adapter's pid, or why it
// could not be started (the error exec would have given).
func shimPid(lines *bufio.Scanner, path string) (int, error) {
	if !lines.Scan() {
		return 0, errors.New("the adapter shim ended without starting it")
	}
	word, rest, _ := strings.Cut(lines.Text(), " ")
	switch word {
	case "pid":
		return strconv.Atoi(rest)
	case "error":
		num, msg, _ := strings.Cut(rest, " ")
		if n, _ := strconv.Atoi(num); n != 0 {
			return 0, &os.PathError{Op: "fork/exec", Path: path, Err: syscall.Errno(n)}
		}
		return 0, errors.New(msg)
	}
	return 0, fmt.Errorf("the adapter shim said %q", lines.Text())
}

// shimStatus records the adapter's exit from a status line and reports
// whether the line was one.
func (p *Proc) shimStatus(line string) bool {
	word, rest, _ := strings.Cut(line, " ")
	n, err := strconv.Atoi(rest)
	switch {
	case err != nil:
		return false
	case word == "exit":
		p.status = ExitStatus{Code: n}
	case word == "signal":
		p.status = ExitStatus{Code: -1, Signal: syscall.Signal(n)}
	default:
		return false
	}
	return true
}
