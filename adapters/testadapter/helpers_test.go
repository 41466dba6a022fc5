//go:build unix

package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openhal/gateway/adapterproto/reference"
	"github.com/openhal/gateway/e2e/binaries"
)

// waitLong bounds every wait for the adapter; a correct run takes
// milliseconds.
const waitLong = 10 * time.Second

func TestMain(m *testing.M) {
	code := m.Run()
	binaries.Cleanup()
	os.Exit(code)
}

// binary builds the test adapter, once per test run (package binaries),
// as the supervisor's tests do.
func binary(t *testing.T) string {
	t.Helper()
	return binaries.Build(t, binaries.Program{Pkg: "./adapters/testadapter"})
}

// proc is one running test adapter, driven over pipes.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	home   string
	stdin  io.WriteCloser
	lines  chan []byte   // stdout, line by line; closed at EOF
	done   chan struct{} // closed once the process is waited for
	state  *os.ProcessState
	stderr bytes.Buffer // safe to read once done is closed
}

// start runs the adapter with args in its own process group, with HOME
// and the working directory a fresh directory, as the supervisor would.
func start(t *testing.T, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, home: t.TempDir(), lines: make(chan []byte, 1024), done: make(chan struct{})}
	p.cmd = exec.Command(binary(t), args...)
	p.cmd.Env = []string{"HOME=" + p.home, "PATH=" + os.Getenv("PATH")}
	p.cmd.Dir = p.home
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p.cmd.Stderr = &p.stderr
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go p.readStdout(stdout)
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("adapter stderr:\n%s", p.stderr.String())
		}
	})
	return p
}

// readStdout passes stdout on line by line, then waits for the process
// (exec wants every read done before Wait).
func (p *proc) readStdout(stdout io.Reader) {
	r := bufio.NewReader(stdout)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			p.lines <- bytes.TrimSuffix(line, []byte("\n"))
		}
		if err != nil {
			break
		}
	}
	close(p.lines)
	p.cmd.Wait()
	p.state = p.cmd.ProcessState
	close(p.done)
}

// send writes one line to the adapter.
func (p *proc) send(line []byte) {
	p.t.Helper()
	if _, err := p.stdin.Write(append(append([]byte(nil), line...), '\n')); err != nil {
		p.t.Fatalf("write to adapter: %v", err)
	}
}

// next returns the adapter's next line.
func (p *proc) next() []byte {
	p.t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			p.t.Fatal("adapter closed its stdout")
		}
		return line
	case <-time.After(waitLong):
		p.t.Fatal("no line from the adapter")
	}
	return nil
}

// expect checks that the adapter's next line is want, byte for byte.
func (p *proc) expect(want []byte) {
	p.t.Helper()
	if got := p.next(); !bytes.Equal(got, want) {
		p.t.Fatalf("adapter wrote\n%s\nwant\n%s", got, want)
	}
}

// handshake runs the reference handshake.
func (p *proc) handshake() {
	p.t.Helper()
	p.send(ref(p.t, "initialize"))
	p.expect(ref(p.t, "initialize_result"))
	p.send(ref(p.t, "initialized"))
}

// exitCode waits for the process to end by itself.
func (p *proc) exitCode() int {
	p.t.Helper()
	select {
	case <-p.done:
		return p.state.ExitCode()
	case <-time.After(waitLong):
		p.t.Fatal("adapter did not exit")
	}
	return -1
}

// readFile reads a record of the adapter's.
func (p *proc) readFile(name string) string {
	p.t.Helper()
	b, err := os.ReadFile(filepath.Join(p.home, name))
	if err != nil {
		p.t.Fatal(err)
	}
	return string(b)
}

// ref returns a reference frame, failing the test if it is missing.
func ref(t *testing.T, name string) []byte {
	t.Helper()
	b := reference.Bytes(name)
	if b == nil {
		t.Fatalf("no reference frame %q", name)
	}
	return b
}

// lines splits a record file into its lines.
func lines(s string) []string {
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
