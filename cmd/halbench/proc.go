package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// startTimeout bounds how long a child may take to say it is ready.
const startTimeout = 15 * time.Second

// stopTimeout is how long a child has to exit after SIGTERM before it is
// killed.
const stopTimeout = 5 * time.Second

// process is a child that halbench started: the gateway or the echo
// server. Both log in slog's text format to stderr, one line per
// listener (`msg=listening transport=websocket url=ws://…`) and then
// `msg=ready`.
type process struct {
	cmd  *exec.Cmd
	urls map[string]string // by transport, from the listening lines
	done chan struct{}     // closed when the process has exited

	mu      sync.Mutex
	tail    []string // its last lines, to explain a failure
	waiters []*lineWaiter
}

// lineWaiter waits for n lines that match re.
type lineWaiter struct {
	re   *regexp.Regexp
	n    int
	done chan struct{}
}

// tailLines is how many of a child's last lines are kept.
const tailLines = 20

// startProcess starts path with args and waits for its ready line. The
// waiters count the lines they match from the child's first line on
// (wait for them with waitLines).
func startProcess(ctx context.Context, path string, args []string, waiters ...*lineWaiter) (*process, error) {
	p := &process{cmd: exec.Command(path, args...), urls: map[string]string{}, done: make(chan struct{}), waiters: waiters}
	p.cmd.SysProcAttr = childAttr()
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", path, err)
	}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", path, err)
	}
	ready := make(chan struct{})
	go p.readLog(stderr, ready)
	go func() {
		p.cmd.Wait()
		close(p.done)
	}()
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case <-ready:
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("%s exited before it was ready (%s):\n%s", path, p.cmd.ProcessState, p.lastLines())
	case <-timer.C:
		err = fmt.Errorf("%s was not ready within %s:\n%s", path, startTimeout, p.lastLines())
	case <-ctx.Done():
		err = ctx.Err()
	}
	p.stop()
	return nil, err
}

var (
	listeningLine = regexp.MustCompile(`\bmsg=listening\b.*\btransport=(\S+).*\burl=(\S+)`)
	readyLine     = regexp.MustCompile(`\bmsg=ready\b`)
)

// readLog reads the child's log to its end: it notes the URLs, closes
// ready at the ready line, and keeps the last lines. A child that logs
// and is never read would block on a full pipe.
func (p *process) readLog(r io.Reader, ready chan struct{}) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	isReady := false
	for sc.Scan() {
		line := sc.Text()
		p.mu.Lock()
		p.tail = append(p.tail, line)
		if len(p.tail) > tailLines {
			p.tail = p.tail[len(p.tail)-tailLines:]
		}
		if m := listeningLine.FindStringSubmatch(line); m != nil && !isReady {
			p.urls[m[1]] = m[2]
		}
		p.countLine(line)
		p.mu.Unlock()
		if !isReady && readyLine.MatchString(line) {
			isReady = true
			close(ready)
		}
	}
	io.Copy(io.Discard, r)
}

// countLine counts line for the waiters it matches. p.mu is held.
func (p *process) countLine(line string) {
	for _, w := range p.waiters {
		if w.n > 0 && w.re.MatchString(line) {
			if w.n--; w.n == 0 {
				close(w.done)
			}
		}
	}
}

// expectLines returns a waiter for n lines matching re, for startProcess.
func expectLines(re *regexp.Regexp, n int) *lineWaiter {
	w := &lineWaiter{re: re, n: n, done: make(chan struct{})}
	if n <= 0 {
		close(w.done)
	}
	return w
}

// waitLines waits until w has seen its lines, the child exits, or timeout
// passes.
func (p *process) waitLines(ctx context.Context, w *lineWaiter, timeout time.Duration) error {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-w.done:
		return nil
	case <-p.done:
		return fmt.Errorf("%s exited (%s):\n%s", p.cmd.Path, p.cmd.ProcessState, p.lastLines())
	case <-timer.C:
		return fmt.Errorf("%s did not log the lines matching %s within %s:\n%s", p.cmd.Path, w.re, timeout, p.lastLines())
	case <-ctx.Done():
		return ctx.Err()
	}
}

// url returns the URL the child logged for transport.
func (p *process) url(transport string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	u, ok := p.urls[transport]
	if !ok {
		return "", fmt.Errorf("%s logged no listening line with transport=%s", p.cmd.Path, transport)
	}
	return u, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

func (p *process) lastLines() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.tail, "\n")
}

// stop asks the child to end, and kills it if it does not.
func (p *process) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	timer := time.NewTimer(stopTimeout)
	defer timer.Stop()
	select {
	case <-p.done:
	case <-timer.C:
		p.cmd.Process.Kill()
		<-p.done
	}
}

// userHZ is the unit of the CPU times in /proc/PID/stat: USER_HZ, which
// the Linux ABI fixes at 100 on every architecture the gateway runs on.
const userHZ = 100

// cpuTicks returns the CPU time the process has used, user and system,
// in ticks of 1/userHZ s (/proc/PID/stat, fields 14 and 15).
func cpuTicks(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read cpu time of process %d: %w", pid, err)
	}
	return parseStatTicks(string(b))
}

// parseStatTicks reads utime+stime from the text of /proc/PID/stat. The
// command name (field 2) may hold spaces and parentheses, so the fields
// are counted from its closing parenthesis, the last one in the line.
func parseStatTicks(stat string) (uint64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("/proc stat: no command name")
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3 (state); utime is field 14, stime field 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc stat: %d fields", len(f)+2)
	}
	utime, err1 := strconv.ParseUint(f[11], 10, 64)
	stime, err2 := strconv.ParseUint(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("/proc stat: %w", err)
	}
	return utime + stime, nil
}

// cpuTime returns the time the process's threads have run on a CPU, to
// the nanosecond (the first field of /proc/PID/task/TID/schedstat, summed):
// an idle gateway uses a few milliseconds a minute, below the 10 ms tick
// of /proc/PID/stat. A thread that exits takes its time with it; the Go
// runtime keeps its threads.
func cpuTime(pid int) (time.Duration, error) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0, fmt.Errorf("read cpu time of process %d: %w", pid, err)
	}
	var sum time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if err != nil {
			continue // the thread exited meanwhile
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			return 0, fmt.Errorf("/proc/%d/task/%s/schedstat: empty", pid, t.Name())
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/task/%s/schedstat: %w", pid, t.Name(), err)
		}
		sum += time.Duration(ns)
	}
	return sum, nil
}

// memory returns the resident set size of the process and its peak
// (VmRSS and VmHWM of /proc/PID/status), in bytes.
func memory(pid int) (rss, peak int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("read memory of process %d: %w", pid, err)
	}
	return parseStatusMemory(string(b))
}

func parseStatusMemory(status string) (rss, peak int64, err error) {
	found := 0
	for line := range strings.Lines(status) {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc status: %s: %w", name, err)
		}
		if name == "VmRSS" {
			rss = kb << 10
		} else {
			peak = kb << 10
		}
		found++
	}
	if found != 2 {
		return 0, 0, errors.New("/proc status: no VmRSS or VmHWM")
	}
	return rss, peak, nil
}
