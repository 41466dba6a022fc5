package gateway_test

// Helpers of the whole-binary tests (DESIGN.md, "Testing tiers", tier 2):
// the gateway binary is built once, started as a child process, and
// talked to only as a client would, through its own client commands and
// through halclient over real sockets.
//
// The slowest of them (over 1.5 s) call t.Parallel: each starts a gateway
// of its own and waits on processes and sockets far more than it
// computes (this package uses about 0.9 of a core), so two at a time
// shorten the package by about 30 s without slowing either much. Those
// that set the process's environment (t.Setenv: the LAN tests' own
// known-gateways file, the audit pages' terminal) cannot, and stay in line.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openhal/gateway/e2e/binaries"
	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal"
)

// waitLong bounds a wait for something that normally takes milliseconds;
// it only matters when the test is about to fail.
const waitLong = 10 * time.Second

func TestMain(m *testing.M) {
	runRogueIfAsked() // this binary run again as a rogue responder (rogue_test.go)
	forgetKnownGateways := isolateKnownGateways()
	code := m.Run()
	forgetKnownGateways()
	binaries.Cleanup()
	os.Exit(code)
}

// gatewayBinary is the gateway as shipped, built once per test run
// (package binaries). Whole-binary tests are skipped with -short.
func gatewayBinary(t testing.TB) string {
	t.Helper()
	skipShort(t)
	return binaries.Gateway(t)
}

// skipShort skips a whole-binary test with -short.
func skipShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("whole-binary test; skipped with -short")
	}
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

// child is a process started by a test; it is killed at the end of the
// test if it is still running.
type child struct {
	name   string
	cmd    *exec.Cmd
	out    *stream
	err    *stream
	exited chan struct{}
	state  *os.ProcessState // set before exited closes
}

func startChild(t testing.TB, args ...string) *child {
	t.Helper()
	c := newChild("gateway "+strings.Join(args, " "), exec.Command(gatewayBinary(t), args...))
	c.cmd.Env = childEnv()
	c.start(t)
	return c
}

// newChild is a child not yet started, running cmd.
func newChild(name string, cmd *exec.Cmd) *child {
	return &child{name: name, cmd: cmd, out: newStream(), err: newStream(), exited: make(chan struct{})}
}

// start starts c's command and follows it to its end. The test's end kills
// it; a failed test shows its log.
func (c *child) start(t testing.TB) {
	t.Helper()
	c.cmd.Stdout, c.cmd.Stderr = c.out, c.err
	c.cmd.WaitDelay = time.Second
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", c.name, err)
	}
	go func() {
		c.cmd.Wait()
		c.state = c.cmd.ProcessState
		c.out.end()
		c.err.end()
		close(c.exited)
	}()
	t.Cleanup(func() {
		c.cmd.Process.Kill()
		<-c.exited
		if t.Failed() {
			t.Logf("%s log:\n%s", c.name, c.err.text())
		}
	})
}

// signal sends sig and waits up to within for the process to exit; it
// returns the exit code and how long the exit took.
func (c *child) signal(t testing.TB, sig os.Signal, within time.Duration) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	if err := c.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %s: %v", c.name, err)
	}
	return c.wait(t, within), time.Since(start)
}

// wait waits up to within for the process to exit and returns its exit
// code (-1 when a signal ended it).
func (c *child) wait(t testing.TB, within time.Duration) int {
	t.Helper()
	select {
	case <-c.exited:
		return c.state.ExitCode()
	case <-time.After(within):
		t.Fatalf("%s still running after %s; stderr:\n%s", c.name, within, c.err.text())
		return 0
	}
}

// gateway is a running `gateway run`.
type gateway struct {
	*child
	dir      string // its state directory
	ws, tcp  string // hub URLs
	unix     string // hub URL, "" without --unix
	httpAddr string // listen addresses, for a restart on the same ports
	tcpAddr  string

	mu      sync.Mutex
	secrets []string // tokens that must never appear in the log
}

// startGateway runs `gateway run` on the sim board with the state
// directory dir, logging at debug level, and waits until it is ready.
// args add to or override the default listeners (127.0.0.1:0 for
// WebSocket and TCP). At the end of the test it checks that the log
// holds no ERROR and none of the tokens the test saw.
func startGateway(t *testing.T, dir string, args ...string) *gateway {
	t.Helper()
	return startGatewayWith(t, dir, 7, args...)
}

// startGatewayWith starts the gateway as startGateway does, on a board
// with the given number of devices.
func startGatewayWith(t *testing.T, dir string, devices int, args ...string) *gateway {
	t.Helper()
	return readyGateway(t, startChild(t, gatewayRunArgs(dir, args...)...), dir, devices)
}

// gatewayRunArgs are the arguments of `gateway run` that startGateway
// gives, with args added.
func gatewayRunArgs(dir string, args ...string) []string {
	return append([]string{"run", "--state-dir", dir, "--log-level", "debug", "--http", "127.0.0.1:0", "--tcp", "127.0.0.1:0"}, args...)
}

// readyGateway follows c, a `gateway run` just started, until it is ready
// with the given number of devices, and notes where it listens.
func readyGateway(t *testing.T, c *child, dir string, devices int) *gateway {
	t.Helper()
	return readyGatewayAt(t, c, dir, fmt.Sprint(devices))
}

// readyGatewayAt is readyGateway with the number of devices as a
// pattern: a gateway is ready with or without the devices its adapters
// add as they start.
func readyGatewayAt(t *testing.T, c *child, dir string, devices string) *gateway {
	t.Helper()
	g := &gateway{child: c, dir: dir}
	t.Cleanup(func() { g.checkLog(t) })
	g.await(t, devices)
	return g
}

// await follows g until it is ready with devices (a pattern) and notes
// where it listens.
func (g *gateway) await(t testing.TB, devices string) {
	t.Helper()
	g.err.waitFor(t, 0, `msg=ready devices=(?:`+devices+`) `, waitLong)
	listening := regexp.MustCompile(`msg=listening transport=(\w+) url=(\S+) addr=(\S+)`)
	for _, line := range strings.Split(g.err.text(), "\n") {
		m := listening.FindStringSubmatch(line)
		switch {
		case m == nil:
		case m[1] == "websocket":
			g.ws, g.httpAddr = m[2], m[3]
		case m[1] == "tcp":
			g.tcp, g.tcpAddr = m[2], m[3]
		case m[1] == "unix":
			g.unix = m[2]
		}
	}
	if g.ws == "" || g.tcp == "" {
		t.Fatalf("the gateway did not log both its WebSocket and TCP URLs:\n%s", g.err.text())
	}
	if b, err := os.ReadFile(filepath.Join(g.dir, "admin.token")); err == nil {
		g.secret(strings.TrimSpace(string(b)))
	}
}

// secret notes a token that the log must never show.
func (g *gateway) secret(tok string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.secrets = append(g.secrets, tok)
}

// checkLog runs after the gateway has been stopped or killed.
func (g *gateway) checkLog(t *testing.T) {
	g.cmd.Process.Kill()
	<-g.exited
	log := g.err.text()
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, s := range g.secrets {
		if s != "" && strings.Contains(log, s) {
			t.Errorf("the gateway's log shows a token")
		}
	}
	if strings.Contains(log, "level=ERROR") {
		t.Errorf("the gateway logged an error")
	}
	if t.Failed() {
		t.Logf("gateway log:\n%s", log)
	}
}

// stop sends SIGTERM and checks that the gateway says it is stopping and
// exits 0 within 3 s.
func (g *gateway) stop(t *testing.T) {
	t.Helper()
	code, took := g.signal(t, syscall.SIGTERM, 3*time.Second)
	if code != 0 {
		t.Errorf("gateway exited %d after SIGTERM, want 0", code)
	}
	if !strings.Contains(g.err.text(), "msg=stopping") {
		t.Errorf("gateway did not log stopping:\n%s", g.err.text())
	}
	t.Logf("gateway stopped %s after SIGTERM", took.Round(time.Millisecond))
}

// kill ends the gateway with SIGKILL, as a crash or a power cut would.
func (g *gateway) kill(t testing.TB) {
	t.Helper()
	g.signal(t, syscall.SIGKILL, waitLong)
}

// addToken runs `gateway token add` for an agent and waits until the
// running gateway takes the token: it logs the reload of the token file,
// and a connection with the token is accepted, within 1 s of the add.
func (g *gateway) addToken(t *testing.T, name, scope string, extra ...string) string {
	t.Helper()
	from := g.err.len()
	r := gw(t, append([]string{"token", "add", "--state-dir", g.dir, "--name", name, "--kind", "agent", "--scope", scope}, extra...)...)
	deadline := time.Now().Add(time.Second)
	if r.code != 0 || !tokenLine.MatchString(r.stdout) || r.stderr != "" {
		t.Fatalf("token add: exit %d, stdout %q, stderr %q; want the token alone", r.code, r.stdout, r.stderr)
	}
	tok := strings.TrimSpace(r.stdout)
	g.secret(tok)
	n := len(listTokens(t, g.dir))
	g.err.waitFor(t, from, fmt.Sprintf(`msg="tokens loaded" .* tokens=%d$`, n), time.Until(deadline))
	dialUntil(t, g.ws, tok, deadline).Close()
	return tok
}

// listTokens runs `gateway token list --json` and returns the names.
func listTokens(t *testing.T, dir string) []string {
	t.Helper()
	r := gw(t, "token", "list", "--json", "--state-dir", dir)
	var entries []struct{ Name string }
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &entries) != nil {
		t.Fatalf("token list --json: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name
	}
	return names
}

// dial connects with halclient and closes the connection at the end of
// the test.
func dial(t *testing.T, url, tok string) (*halclient.Conn, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	c, err := halclient.Dial(ctx, url, halclient.Options{Token: tok, ClientName: "binary_test"})
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

// dialUntil dials until the hub accepts tok, and fails the test at the
// deadline. The gateway has logged that it reloaded its tokens before
// this is called, so a refusal can only come from the moment between
// that log line and the hub taking the new table; it retries at most
// twice, since the hub stops answering an address after 5 refusals a
// minute.
func dialUntil(t *testing.T, url, tok string, deadline time.Time) *halclient.Conn {
	t.Helper()
	for refused := 0; ; refused++ {
		c, err := dial(t, url, tok)
		if err == nil {
			return c
		}
		var he *halclient.HubError
		if !errors.As(err, &he) || he.Code() != openhal.CodeUnauthorized || refused == 2 || time.Now().After(deadline) {
			t.Fatalf("the gateway did not take the new token within 1 s: %v", err)
		}
		<-time.After(min(50*time.Millisecond, time.Until(deadline)))
	}
}

// result is how a client command ended.
type result struct {
	stdout, stderr string
	code           int
}

// gw runs the gateway binary with args to the end (at most waitLong).
func gw(t testing.TB, args ...string) result {
	t.Helper()
	return gwIn(t, nil, args...)
}

// gwIn is gw with the command line after prefix: `ip netns exec NS`, to
// run it in another network namespace.
func gwIn(t testing.TB, prefix []string, args ...string) result {
	t.Helper()
	// The binary first: the first call of a run builds it, which under
	// load takes longer than the command's own deadline.
	argv := append(append(slices.Clone(prefix), gatewayBinary(t)), args...)
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = childEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("gateway %s: %v", strings.Join(args, " "), err)
	}
	if ctx.Err() != nil {
		t.Fatalf("gateway %s still running after %s; stderr:\n%s", strings.Join(args, " "), waitLong, stderr.String())
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
}

// gwOK runs a command that must succeed and returns its standard output.
func gwOK(t testing.TB, args ...string) string {
	t.Helper()
	r := gw(t, args...)
	if r.code != 0 {
		t.Fatalf("gateway %s: exit %d, stderr %q", strings.Join(args, " "), r.code, r.stderr)
	}
	return r.stdout
}

// wantOneLineError checks a failed command's output: nothing on standard
// output, exit 1, and exactly one line on standard error, starting with
// "gateway: " and containing want, with no sign of a panic.
func wantOneLineError(t *testing.T, r result, want string) {
	t.Helper()
	line, rest, _ := strings.Cut(r.stderr, "\n")
	switch {
	case r.code != 1:
		t.Errorf("exit %d, want 1 (stderr %q)", r.code, r.stderr)
	case r.stdout != "":
		t.Errorf("stdout %q, want nothing", r.stdout)
	case rest != "" || !strings.HasSuffix(r.stderr, "\n"):
		t.Errorf("stderr %q, want exactly one line", r.stderr)
	case !strings.HasPrefix(line, "gateway: "):
		t.Errorf("stderr %q does not start with \"gateway: \"", line)
	case !strings.Contains(line, want):
		t.Errorf("stderr %q does not say %q", line, want)
	case strings.Contains(r.stderr, "goroutine") || strings.Contains(r.stderr, "panic"):
		t.Errorf("stderr %q looks like a crash", r.stderr)
	}
}

// watchProc runs `gateway watch` with args and waits until it has read
// every device once (its resync), so that what happens next reaches it
// as a notification. It returns the child and the hub run (bootId) it
// connected to.
func watchProc(t *testing.T, args ...string) (*child, string) {
	t.Helper()
	w := startChild(t, append([]string{"watch"}, args...)...)
	_, m := w.out.waitFor(t, 0, watchTS+`connected to \S+: openhal \S+ \(run ([^)]+)\) as `, waitLong)
	w.out.waitFor(t, 0, watchTS+`sim\.led = (true|false) \(seq \d+, current\)$`, waitLong)
	return w, m[1]
}
