package browser

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/e2e/binaries"
	"github.com/openhal/gateway/halclient"
)

// waitLong bounds a wait for something that normally takes well under a
// second; it only matters when a test is about to fail.
const waitLong = 15 * time.Second

func TestMain(m *testing.M) {
	code := m.Run()
	binaries.Cleanup()
	os.Exit(code)
}

// gatewayBinary returns $GATEWAY_BIN, or else the gateway as shipped,
// built once per run (package binaries).
func gatewayBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("GATEWAY_BIN"); p != "" {
		return p
	}
	return binaries.Gateway(t)
}

// gateway is a running `gateway run` on the sim board.
type gateway struct {
	dir      string // state directory, kept across restarts
	httpAddr string // WebSocket and console listener, host:port
	tcpAddr  string
	log      *logLines
	cmd      *exec.Cmd
	exited   chan struct{}
	extra    []string // more arguments of `gateway run`, kept across restarts
}

// startGateway runs the gateway with the state directory dir on loopback
// and waits until it is ready; $GATEWAY_CONSOLE_DIR, when set, is given
// as --console-dir. httpAddr and tcpAddr are "127.0.0.1:0" the
// first time and the first run's own addresses for a restart on the same
// ports; extra are more arguments of `gateway run` (--config FILE). The
// end of the test kills it.
func startGateway(t *testing.T, dir, httpAddr, tcpAddr string, extra ...string) *gateway {
	t.Helper()
	g := &gateway{dir: dir, log: newLogLines(), exited: make(chan struct{}), extra: extra}
	args := []string{"run", "--state-dir", dir, "--log-level", "debug", "--http", httpAddr, "--tcp", tcpAddr}
	args = append(args, extra...)
	if d := os.Getenv("GATEWAY_CONSOLE_DIR"); d != "" {
		args = append(args, "--console-dir", d) // a console being edited, without a rebuild
	}
	g.cmd = exec.Command(gatewayBinary(t), args...)
	g.cmd.Env = childEnv()
	g.cmd.Stdout, g.cmd.Stderr = g.log, g.log
	g.cmd.WaitDelay = time.Second
	if err := g.cmd.Start(); err != nil {
		t.Fatalf("start the gateway: %v", err)
	}
	go func() {
		g.cmd.Wait()
		g.log.end()
		close(g.exited)
	}()
	t.Cleanup(func() {
		g.cmd.Process.Kill()
		<-g.exited
		if t.Failed() {
			t.Logf("gateway log:\n%s", g.log.text())
		}
	})
	g.log.waitFor(t, 0, `msg=ready devices=`)
	m := g.log.waitFor(t, 0, `msg=listening transport=websocket url=\S+ addr=(\S+)`)
	g.httpAddr = m[1]
	m = g.log.waitFor(t, 0, `msg=listening transport=tcp url=\S+ addr=(\S+)`)
	g.tcpAddr = m[1]
	return g
}

// restart kills the gateway, as a crash or a power cut would, and starts
// another on the same state directory and ports.
func (g *gateway) restart(t *testing.T) *gateway {
	t.Helper()
	g.cmd.Process.Kill()
	select {
	case <-g.exited:
	case <-time.After(waitLong):
		t.Fatal("the gateway did not exit after SIGKILL")
	}
	return startGateway(t, g.dir, g.httpAddr, g.tcpAddr, g.extra...)
}

// url is the console's address; ws the Hub's.
func (g *gateway) url() string { return "http://" + g.httpAddr + "/" }
func (g *gateway) ws() string  { return "ws://" + g.httpAddr + "/hal" }

// adminToken is the token the first start wrote to the state directory.
func (g *gateway) adminToken(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(g.dir, "admin.token"))
	if err != nil {
		t.Fatalf("read the admin token: %v", err)
	}
	return strings.TrimSpace(string(b))
}

// addToken makes a token with `gateway token add` and waits until the
// running gateway has loaded it. kind is agent, operator or service.
func (g *gateway) addToken(t *testing.T, name, kind, scope string) string {
	t.Helper()
	from := g.log.len()
	cmd := exec.Command(gatewayBinary(t), "token", "add", "--state-dir", g.dir,
		"--name", name, "--kind", kind, "--scope", scope)
	cmd.Env = childEnv()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gateway token add %s: %v", name, err)
	}
	g.log.waitFor(t, from, `msg="tokens loaded"`)
	return strings.TrimSpace(string(out))
}

// dial connects a Go client with tok; the end of the test closes it.
func (g *gateway) dial(t *testing.T, tok string) *halclient.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	c, err := halclient.Dial(ctx, g.ws(), halclient.Options{Token: tok, ClientName: "browsertest"})
	if err != nil {
		t.Fatalf("dial %s: %v", g.ws(), err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// childEnv is this process's environment without the variables that
// would point a client command at another hub, token or state directory.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GATEWAY_HUB", "GATEWAY_TOKEN", "GATEWAY_FINGERPRINT", "STATE_DIRECTORY":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// logLines collects a process's output line by line, so that a test can
// wait for a line.
type logLines struct {
	mu      sync.Mutex
	lines   []string
	partial string
	ended   bool
	changed chan struct{} // closed and replaced on each new line and at the end
}

func newLogLines() *logLines { return &logLines{changed: make(chan struct{})} }

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial += string(p)
	for {
		line, rest, ok := strings.Cut(l.partial, "\n")
		if !ok {
			break
		}
		l.lines, l.partial = append(l.lines, line), rest
	}
	close(l.changed)
	l.changed = make(chan struct{})
	return len(p), nil
}

func (l *logLines) end() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ended = true
	close(l.changed)
	l.changed = make(chan struct{})
}

func (l *logLines) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.lines)
}

func (l *logLines) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n") + l.partial
}

// waitFor waits for a line from index from on that matches pattern and
// returns its submatches.
func (l *logLines) waitFor(t *testing.T, from int, pattern string) []string {
	t.Helper()
	re := regexp.MustCompile(pattern)
	timer := time.NewTimer(waitLong)
	defer timer.Stop()
	for {
		l.mu.Lock()
		for _, line := range l.lines[min(from, len(l.lines)):] {
			if m := re.FindStringSubmatch(line); m != nil {
				l.mu.Unlock()
				return m
			}
		}
		ended, changed := l.ended, l.changed
		l.mu.Unlock()
		if ended {
			t.Fatalf("the gateway exited without a line matching %s:\n%s", pattern, l.text())
		}
		select {
		case <-changed:
		case <-timer.C:
			t.Fatalf("no line matching %s within %s", pattern, waitLong)
		}
	}
}
