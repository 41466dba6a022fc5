package modbussim

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

//go:embed sim.py
var script []byte

// Python is the interpreter the simulator runs under: Debian's, which
// sees Debian's python3-pymodbus (a pyenv python3 earlier on PATH does
// not).
const Python = "/usr/bin/python3"

// answerWait bounds how long a control command or the start waits for the
// simulator's line: far beyond any answer, so that only a hung or lost
// simulator meets it.
const answerWait = 30 * time.Second

// Table is one of a unit's four Modbus tables.
type Table string

// The four tables.
const (
	Coil     Table = "coil"     // read-write bits
	Discrete Table = "discrete" // read-only bits
	Input    Table = "input"    // read-only 16-bit registers
	Holding  Table = "holding"  // read-write 16-bit registers
)

// Unit is one slave's tables: for each table, blocks of values by their
// 0-based start address. Bits are 0 or 1. Only the addresses given exist;
// any other answers exception 2 (illegal data address).
type Unit map[Table]map[uint16][]uint16

// Units are the slaves on the simulated line or server, by unit id
// (1..247; 0 is the broadcast address). A unit id not given never answers.
type Units map[byte]Unit

// MarshalJSON writes the simulator's form, {"units": {"1": {...}}}.
func (u Units) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Units map[byte]Unit `json:"units"`
	}{map[byte]Unit(u)})
}

// Sim is a running pymodbus slave simulator, stopped when its test ends.
// Its methods wait for the simulator's answer and fail the test (t.Fatal)
// on an error: call them from the test's goroutine, or use Do elsewhere.
type Sim struct {
	// Addr is where it serves: "127.0.0.1:PORT" for TCP, the serial port's
	// path for RTU.
	Addr string

	t      testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string   // stdout, a line at a time; closed at its end
	done   chan struct{} // closed once the process has been waited for
	stderr *tail

	mu sync.Mutex // one command and its answer at a time
}

// StartTCP starts a Modbus TCP slave on a free loopback port with units.
func StartTCP(t testing.TB, units Units) *Sim {
	t.Helper()
	return start(t, Python, units, "tcp")
}

// StartRTU starts a Modbus RTU slave on the serial port at path (a pty's
// slave, as Relay.Sim) at baud, 8N1, with units.
func StartRTU(t testing.TB, path string, baud int, units Units) *Sim {
	t.Helper()
	return start(t, Python, units, "rtu", path, strconv.Itoa(baud))
}

// start runs the script under python with args and then the units file,
// and waits for its ready line.
func start(t testing.TB, python string, units Units, args ...string) *Sim {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "sim.py")
	conf := filepath.Join(dir, "units.json")
	data, err := json.Marshal(units)
	if err != nil {
		t.Fatalf("modbussim: encode units: %v", err)
	}
	if err := errors.Join(os.WriteFile(path, script, 0o644), os.WriteFile(conf, data, 0o644)); err != nil {
		t.Fatalf("modbussim: %v", err)
	}
	s := &Sim{t: t, lines: make(chan string, 16), done: make(chan struct{}), stderr: &tail{}}
	s.cmd = exec.Command(python, append(append([]string{"-u", path}, args...), conf)...)
	s.cmd.Stderr = s.stderr
	s.stdin, err = s.cmd.StdinPipe()
	if err != nil {
		t.Fatalf("modbussim: %v", err)
	}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("modbussim: %v", err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("modbussim: start %s: %v (install python3-pymodbus: apt-get install python3-pymodbus python3-serial-asyncio; CI's .ci/run does)", python, err)
	}
	if err := prioritize(s.cmd.Process.Pid); err != nil {
		t.Logf("modbussim: the simulator keeps its priority (%v): on a loaded machine it may answer late", err)
	}
	go s.read(stdout)
	t.Cleanup(s.stop)
	line, err := s.answer()
	switch {
	case strings.HasPrefix(line, "err no pymodbus"):
		t.Fatalf("modbussim: %s cannot import pymodbus: install python3-pymodbus (apt-get install python3-pymodbus python3-serial-asyncio; CI's .ci/run does): %s", python, line)
	case err != nil:
		t.Fatalf("modbussim: start %s: %v", strings.Join(args, " "), err)
	case !strings.HasPrefix(line, "ready "):
		t.Fatalf("modbussim: start %s: %s%s", strings.Join(args, " "), line, s.stderr.suffix())
	}
	s.Addr = strings.TrimPrefix(line, "ready ")
	return s
}

// read passes the simulator's stdout on line by line, then reaps it.
func (s *Sim) read(stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		s.lines <- sc.Text()
	}
	close(s.lines)
	s.cmd.Wait()
	close(s.done)
}

// answer waits for the simulator's next line.
func (s *Sim) answer() (string, error) {
	select {
	case line, ok := <-s.lines:
		if ok {
			return line, nil
		}
		<-s.done
		return "", fmt.Errorf("simulator exited (%v)%s", s.cmd.ProcessState, s.stderr.suffix())
	case <-time.After(answerWait):
		return "", fmt.Errorf("simulator gave no answer in %v%s", answerWait, s.stderr.suffix())
	}
}

// Do sends one control command (see sim.py: "get 1 holding 100 2") and
// returns what follows "ok" in its answer, or an error with the "err"
// answer's text. It is safe from any goroutine.
func (s *Sim) Do(command string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := io.WriteString(s.stdin, command+"\n"); err != nil {
		return "", fmt.Errorf("modbussim %s: %w%s", command, err, s.stderr.suffix())
	}
	line, err := s.answer()
	if err != nil {
		return "", fmt.Errorf("modbussim %s: %w", command, err)
	}
	if rest, ok := strings.CutPrefix(line, "ok"); ok {
		return strings.TrimSpace(rest), nil
	}
	return "", fmt.Errorf("modbussim %s: %s", command, strings.TrimPrefix(line, "err "))
}

func (s *Sim) must(command string) string {
	s.t.Helper()
	out, err := s.Do(command)
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

// Silent makes unit u stop answering, as a unit that lost power; requests
// to it time out. A response it was holding back (Delay) is dropped.
func (s *Sim) Silent(u byte) { s.t.Helper(); s.must(fmt.Sprintf("silent %d", u)) }

// Answer makes unit u answer again.
func (s *Sim) Answer(u byte) { s.t.Helper(); s.must(fmt.Sprintf("answer %d", u)) }

// Set writes vals into unit u's table from addr on (bits as 0 or 1),
// adding addresses that did not exist.
func (s *Sim) Set(u byte, table Table, addr uint16, vals ...uint16) {
	s.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "set %d %s %d", u, table, addr)
	for _, v := range vals {
		fmt.Fprintf(&b, " %d", v)
	}
	s.must(b.String())
}

// Get reads n values of unit u's table from addr on (bits as 0 or 1): how a
// test reads back what the gateway wrote. Every address must exist.
func (s *Sim) Get(u byte, table Table, addr uint16, n int) []uint16 {
	s.t.Helper()
	out := s.must(fmt.Sprintf("get %d %s %d %d", u, table, addr, n))
	fields := strings.Fields(out)
	vals := make([]uint16, len(fields))
	for i, f := range fields {
		v, err := strconv.ParseUint(f, 10, 16)
		if err != nil {
			s.t.Fatalf("modbussim get: bad value %q in %q", f, out)
		}
		vals[i] = uint16(v)
	}
	if len(vals) != n {
		s.t.Fatalf("modbussim get: %d values for %d: %q", len(vals), n, out)
	}
	return vals
}

// Delay makes unit u answer d late (0: at once). The response waits on the
// simulator's event loop: other units, and other TCP connections, are
// answered meanwhile.
func (s *Sim) Delay(u byte, d time.Duration) {
	s.t.Helper()
	s.must(fmt.Sprintf("delay %d %d", u, d.Milliseconds()))
}

// Count is the number of responses (exceptions too) sent so far.
func (s *Sim) Count() int {
	s.t.Helper()
	out := s.must("count")
	n, err := strconv.Atoi(out)
	if err != nil {
		s.t.Fatalf("modbussim count: %q", out)
	}
	return n
}

// Request is one request the simulator heard: the unit it was for, its
// function code (1-4 reads, 5 and 6 single writes, 15 and 16 multiple),
// its first address and how many coils or registers it spans (1 for a
// single write).
type Request struct {
	Unit     byte
	Function byte
	Address  uint16
	Count    uint16
}

func (r Request) String() string {
	return fmt.Sprintf("unit %d fc%d %d+%d", r.Unit, r.Function, r.Address, r.Count)
}

// Requests returns the requests heard since the last call (since the
// start, the first time), oldest first, and forgets them: how a test sees
// which reads and writes reached the line. Requests for a silent unit are
// heard too; a frame garbled on the way or for a unit not configured is
// not. At most the last 10000 are kept between two calls.
func (s *Sim) Requests() []Request {
	s.t.Helper()
	out := s.must("requests")
	var reqs []Request
	for _, f := range strings.Fields(out) {
		var r Request
		if _, err := fmt.Sscanf(f, "%d:%d:%d:%d", &r.Unit, &r.Function, &r.Address, &r.Count); err != nil {
			s.t.Fatalf("modbussim requests: bad request %q in %q: %v", f, out, err)
		}
		reqs = append(reqs, r)
	}
	return reqs
}

// stop asks the simulator to quit and kills it if it does not, reading
// its last lines so that the reader is never stuck.
func (s *Sim) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	io.WriteString(s.stdin, "quit\n")
	s.stdin.Close()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case _, ok := <-s.lines:
			if !ok {
				<-s.done
				return
			}
		case <-timeout:
			s.cmd.Process.Kill()
			for range s.lines {
			}
			<-s.done
			return
		}
	}
}

// tail keeps the last few KB of the simulator's stderr for error messages.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailMax = 4096

func (w *tail) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if len(w.buf) > tailMax {
		w.buf = w.buf[len(w.buf)-tailMax:]
	}
	return len(p), nil
}

// suffix is ": its stderr" for an error message, or "".
func (w *tail) suffix() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if s := strings.TrimSpace(string(w.buf)); s != "" {
		return "; its stderr: " + s
	}
	return ""
}
