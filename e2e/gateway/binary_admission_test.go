package gateway_test

// Whole-binary tests of admission and throttling (openhal-0.1 §2, §3),
// tried as an attacker would: idle connections that never send a byte,
// bad tokens retried without end, from the operator's own machine and from
// another local user; the operator's emergency stop must get through
// within a second all the same. The helpers are in binary_helpers_test.go.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal"
)

// stopWithin is the guarantee: the operator's stop engages within it.
const stopWithin = time.Second

// attack is a flood run by the test (or by a helper process as another
// user): idle connections that never send a byte, and hal/initialize with
// bad tokens, each in a loop until ctx ends.
type attack struct {
	wg                       sync.WaitGroup
	held                     atomic.Int64 // idle connections open now
	unknown, limited, closed atomic.Int64 // bad-token attempts: token_unknown, rate_limited, no answer
}

// idle keeps n connections open that send nothing: one the Hub closes
// (at accept, or after initTimeout) is dialled again after a short pause.
func (a *attack) idle(ctx context.Context, n int, dial func() (net.Conn, error)) {
	for range n {
		a.wg.Go(func() {
			for ctx.Err() == nil {
				if c, err := dial(); err == nil {
					a.held.Add(1)
					stop := context.AfterFunc(ctx, func() { c.Close() })
					io.Copy(io.Discard, c)
					stop()
					c.Close()
					a.held.Add(-1)
				}
				pause(ctx, 50*time.Millisecond)
			}
		})
	}
}

// badTokens runs n loops of hal/initialize with a bad token, each on a
// new connection.
func (a *attack) badTokens(ctx context.Context, n int, dial func() (net.Conn, error)) {
	init := `{"jsonrpc":"2.0","id":1,"method":"hal/initialize","params":{"protocolVersion":"0.1","clientInfo":{"name":"flood","version":"1"},"token":"gw_not-a-token"}}` + "\n"
	for range n {
		a.wg.Go(func() {
			for ctx.Err() == nil {
				if c, err := dial(); err == nil {
					stop := context.AfterFunc(ctx, func() { c.Close() })
					io.WriteString(c, init)
					c.SetReadDeadline(time.Now().Add(15 * time.Second))
					line, _ := bufio.NewReader(c).ReadBytes('\n')
					stop()
					c.Close()
					switch {
					case strings.Contains(string(line), `"rate_limited"`):
						a.limited.Add(1)
					case strings.Contains(string(line), `"token_unknown"`):
						a.unknown.Add(1)
					default:
						a.closed.Add(1)
					}
				}
				pause(ctx, 20*time.Millisecond)
			}
		})
	}
}

func (a *attack) String() string {
	return fmt.Sprintf("%d idle held, bad tokens: %d token_unknown, %d rate_limited, %d closed without an answer",
		a.held.Load(), a.unknown.Load(), a.limited.Load(), a.closed.Load())
}

func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func tcpFrom(local, addr string) func() (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 5 * time.Second}
	return func() (net.Conn, error) { return d.Dial("tcp", addr) }
}

func unixAt(path string) func() (net.Conn, error) {
	return func() (net.Conn, error) { return net.DialTimeout("unix", path, 5*time.Second) }
}

// The environment of the helper process that floods the Unix socket as
// another user: the socket's path.
const unixFloodEnv = "GATEWAY_TEST_UNIX_FLOOD"

// TestHelperUnixFlood is not a test: it is the body of the helper process
// (another user) that TestBinaryStopReachableUnderFlood starts. It floods
// the socket named in its environment until its standard input closes.
func TestHelperUnixFlood(t *testing.T) {
	path := os.Getenv(unixFloodEnv)
	if path == "" {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	var a attack
	a.idle(ctx, 100, unixAt(path))
	a.badTokens(ctx, 100, unixAt(path))
	fmt.Println("flooding")
	io.Copy(io.Discard, os.Stdin)
	cancel()
	a.wg.Wait()
	fmt.Println(a.String())
}

// TestBinaryStopReachableUnderFlood is the guarantee of issue 12: with 100
// idle TCP connections and 100 loops of bad tokens going on from this
// machine (127.0.0.1, and 127.0.0.3), and — when the test runs as root —
// another user flooding the Unix socket the same way, the operator's
// `gateway stop` over the Unix socket, and an admin over TCP from another
// address (127.0.0.2), each engage the stop within a second. On the old
// code the idle connections took every slot and the admin reserve: both
// failed for as long as the flood went on.
func TestBinaryStopReachableUnderFlood(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	shared := sharedDir(t) // the socket, where another user may reach it
	sock := filepath.Join(shared, "hal.sock")
	config := writeConfig(t, fmt.Sprintf("board: sim\nhub:\n  listen: {unix: %s}\n", sock))
	otherUser := os.Geteuid() == 0
	if otherUser {
		config = writeConfig(t, fmt.Sprintf("board: sim\nhub:\n  listen: {unix: %s, unixGroup: %q}\n", sock, "65534"))
	}
	g := startGateway(t, dir, "--config", config)
	admin := readAdminToken(t, dir)

	ctx, cancel := context.WithCancel(context.Background())
	var a attack
	defer func() { cancel(); a.wg.Wait() }()
	a.idle(ctx, 100, tcpFrom("127.0.0.1", g.tcpAddr))
	a.badTokens(ctx, 50, tcpFrom("127.0.0.1", g.tcpAddr))
	a.badTokens(ctx, 50, tcpFrom("127.0.0.3", g.tcpAddr))
	if otherUser {
		startUnixFlood(t, shared, sock)
	} else {
		t.Log("not root: no other user floods the Unix socket")
	}
	// The flood is in force: the Hub holds the idle connections it may,
	// has refused others at accept, and answers bad tokens (metrics the
	// old code had too, so that this test shows the stop failing there).
	m := waitMetrics(t, g, admin, func(m map[string]float64) bool {
		return m["gateway_hal_connections"] >= 8 && m["gateway_hal_connections_refused_total"] > 100 &&
			m["gateway_hal_unauthorized_total"] > 10
	})
	refused := m["gateway_hal_connections_refused_total"]
	t.Logf("the flood: %s", &a)

	// The operator, on the gateway's machine, over the Unix socket.
	start := time.Now()
	out := gwOK(t, "stop", "--hub", g.unix, "--state-dir", dir, "--reason", "flood drill")
	took := time.Since(start)
	if !strings.HasPrefix(out, "emergency stop engaged: ") {
		t.Errorf("gateway stop printed %q", out)
	}
	gwOK(t, "resume", "--hub", g.unix, "--state-dir", dir)

	// An admin from another address, over TCP.
	tookTCP := stopFrom(t, tcpFrom("127.0.0.2", g.tcpAddr), admin)
	// And over WebSocket, from another address than the flood's.
	gwOK(t, "resume", "--hub", g.unix, "--state-dir", dir)
	tookWS := wsStopFrom(t, "127.0.0.2", g.ws, admin)
	t.Logf("stop over the Unix socket (the CLI, process start included): %v; over TCP from 127.0.0.2: %v; over WebSocket from 127.0.0.2: %v; the flood meanwhile: %s",
		took.Round(time.Millisecond), tookTCP.Round(time.Millisecond), tookWS.Round(time.Millisecond), &a)
	if took > stopWithin || tookTCP > stopWithin || tookWS > stopWithin {
		t.Errorf("the stop took %v over the Unix socket, %v over TCP and %v over WebSocket; want each within %v", took, tookTCP, tookWS, stopWithin)
	}
	// It still is.
	m = waitMetrics(t, g, admin, func(m map[string]float64) bool {
		return m["gateway_hal_connections_unauthenticated"] >= 8 && m["gateway_hal_connections_refused_total"] > refused
	})
	if m["gateway_hal_rate_limited_total"] == 0 {
		t.Errorf("no bad token was rate limited: %v", m)
	}
}

// stopFrom connects with dial, authenticates as admin and sends hal/stop,
// and returns how long it took from the dial to the stop's answer.
func stopFrom(t *testing.T, dial func() (net.Conn, error), admin string) time.Duration {
	t.Helper()
	start := time.Now()
	c, err := dial()
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(waitLong))
	fmt.Fprintf(c, `{"jsonrpc":"2.0","id":1,"method":"hal/initialize","params":{"protocolVersion":"0.1","clientInfo":{"name":"operator","version":"1"},"token":%q}}`+"\n", admin)
	fmt.Fprintf(c, `{"jsonrpc":"2.0","method":"hal/initialized"}`+"\n")
	fmt.Fprintf(c, `{"jsonrpc":"2.0","id":2,"method":"hal/stop","params":{"reason":"flood drill over tcp"}}`+"\n")
	br := bufio.NewReader(c)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			t.Fatalf("no answer to hal/stop: %v (read so far %q)", err, line)
		}
		var m struct {
			ID     json.RawMessage
			Result *openhal.StopResult
			Error  json.RawMessage
		}
		json.Unmarshal(line, &m)
		if len(m.Error) > 0 {
			t.Fatalf("the Hub answered %s", line)
		}
		if string(m.ID) == "2" {
			if m.Result == nil || !m.Result.Stopped {
				t.Fatalf("hal/stop: %s", line)
			}
			return time.Since(start)
		}
	}
}

// waitMetrics reads /metrics from 127.0.0.2 (127.0.0.1 may be the
// flood's) until ok holds for them.
func waitMetrics(t *testing.T, g *gateway, tok string, ok func(map[string]float64) bool) map[string]float64 {
	t.Helper()
	dial := tcpFrom("127.0.0.2", g.httpAddr)
	hc := &http.Client{Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext:       func(context.Context, string, string) (net.Conn, error) { return dial() },
	}}
	deadline := time.Now().Add(waitLong)
	for {
		m := readMetrics(t, hc, "http://"+g.httpAddr+"/metrics", tok)
		if ok(m) {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics never showed what the test waits for: %v", m)
		}
		<-time.After(50 * time.Millisecond) // a poll: metrics change no event the test can wait on
	}
}

func readMetrics(t *testing.T, hc *http.Client, url, tok string) map[string]float64 {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	m := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var name string
		var v float64
		if !strings.HasPrefix(sc.Text(), "#") {
			if _, err := fmt.Sscan(sc.Text(), &name, &v); err == nil {
				m[name] = v
			}
		}
	}
	return m
}

// sharedDir is a directory every user may enter, removed at the end.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "gateway-shared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// startUnixFlood starts this test binary again as user 65534 (nobody),
// flooding the Unix socket at sock (TestHelperUnixFlood), until the test
// ends. The binary is copied where that user may run it.
func startUnixFlood(t *testing.T, shared, sock string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(shared, "flood.test")
	if err := copyExecutable(self, bin); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestHelperUnixFlood$", "-test.count=1")
	cmd.Env = append(childEnv(), unixFloodEnv+"="+sock)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := newChild("unix flood as uid 65534", cmd)
	c.start(t)
	t.Cleanup(func() { stdin.Close(); c.wait(t, waitLong); t.Logf("the other user's flood: %s", c.out.text()) })
	c.out.waitFor(t, 0, `^flooding$`, waitLong)
}

func copyExecutable(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// TestBinaryValidTokenAfterFailures: after 5 bad tokens and more from
// 127.0.0.1 (rate_limited), the admin's own token from 127.0.0.1 is
// admitted at once, on TCP, WebSocket and the Unix socket. On the old code
// `gateway stop` failed with rate_limited for a minute.
func TestBinaryValidTokenAfterFailures(t *testing.T) {
	dir := t.TempDir()
	g := startGateway(t, dir, "--unix", filepath.Join(dir, "hal.sock"))
	for _, hub := range []string{g.tcp, g.unix} {
		for i := range 7 {
			want := "unknown or revoked token"
			if i >= 5 {
				want = "too many failed attempts"
			}
			wantOneLineError(t, gw(t, "devices", "--hub", hub, "--token", "gw_wrong"), want)
		}
	}
	wantOneLineError(t, gw(t, "devices", "--hub", g.ws, "--token", "gw_wrong"), "too many failed attempts")
	for i, hub := range []string{g.tcp, g.ws, g.unix} {
		start := time.Now()
		out := gwOK(t, "stop", "--hub", hub, "--state-dir", dir, "--reason", "after the bad tokens")
		want := "emergency stop engaged: "
		if i > 0 {
			want = "emergency stop was already engaged: "
		}
		if !strings.HasPrefix(out, want) {
			t.Errorf("%s: gateway stop printed %q", hub, out)
		}
		if took := time.Since(start); took > stopWithin {
			t.Errorf("%s: gateway stop took %v", hub, took)
		}
	}
}

// TestBinaryHTTPIdleClosed: an HTTP keep-alive connection idle for
// hub.limits.httpIdleTimeout is closed by the gateway and counted in
// /metrics. On the old code it stayed open.
func TestBinaryHTTPIdleClosed(t *testing.T) {
	const idle = 300 * time.Millisecond
	dir := t.TempDir()
	config := writeConfig(t, fmt.Sprintf("board: sim\nhub:\n  limits: {httpIdleTimeout: %s}\n", idle))
	g := startGateway(t, dir, "--config", config)
	c, err := net.Dial("tcp", g.httpAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: gateway\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /healthz: %v %v", resp, err)
	}
	io.Copy(io.Discard, resp.Body)
	start := time.Now()
	c.SetReadDeadline(time.Now().Add(waitLong))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("the idle connection: %v, want EOF from the gateway", err)
	}
	if took := time.Since(start); took < idle/2 {
		t.Errorf("closed after %v, before the idle timeout %v", took, idle)
	}
	// The count follows the close (the server's hook runs after it).
	m := waitMetrics(t, g, readAdminToken(t, dir), func(m map[string]float64) bool { return m["gateway_http_idle_closed_total"] >= 1 })
	if m["gateway_http_idle_closed_total"] != 1 {
		t.Errorf("gateway_http_idle_closed_total = %v, want 1", m["gateway_http_idle_closed_total"])
	}
}

// underPrlimit starts `gateway run` under prlimit --nofile=soft:hard
// (util-linux), with a Unix socket too and more arguments, and waits
// until it is ready.
func underPrlimit(t *testing.T, dir string, soft, hard int, more ...string) *gateway {
	t.Helper()
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("prlimit (util-linux) is not installed")
	}
	args := append([]string{fmt.Sprintf("--nofile=%d:%d", soft, hard), gatewayBinary(t)},
		gatewayRunArgs(dir, append([]string{"--unix", filepath.Join(dir, "hal.sock")}, more...)...)...)
	cmd := exec.Command(prlimit, args...)
	cmd.Env = childEnv()
	c := newChild(fmt.Sprintf("gateway run (nofile %d:%d)", soft, hard), cmd)
	c.start(t)
	return readyGateway(t, c, dir, 7)
}

// TestBinaryOpenFileLimit: the gateway raises its soft limit of open
// files to the hard limit at start, and says so.
func TestBinaryOpenFileLimit(t *testing.T) {
	g := underPrlimit(t, t.TempDir(), 256, 2048)
	g.err.waitFor(t, 0, `msg="open-file limit" soft=2048 hard=2048$`, waitLong)
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", g.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "Max open files            2048                 2048") {
		t.Errorf("the gateway's limits:\n%s", b)
	}
}

// TestBinaryListenersSurviveEMFILE: with its descriptors used up (under
// prlimit --nofile), the gateway's listeners cannot accept; each backs
// off instead of ending, /healthz (asked over a connection accepted
// before) answers 503 naming them, and once descriptors are free again
// every listener — HTTP/WebSocket, TCP, Unix — serves again and /healthz
// is 200. On the old code one EMFILE ended the TCP and Unix listeners for
// good ("listener failed") while /healthz said ok.
func TestBinaryListenersSurviveEMFILE(t *testing.T) {
	const nofile = 64
	dir := t.TempDir()
	// One token holds every connection: its bound must not stop them
	// before the descriptors run out.
	config := writeConfig(t, fmt.Sprintf("board: sim\nhub:\n  limits: {maxConnectionsPerToken: %d}\n", 2*nofile))
	g := underPrlimit(t, dir, nofile, nofile, "--config", config)
	admin := readAdminToken(t, dir)
	health := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	defer health.CloseIdleConnections()
	healthz := func() (int, string) {
		t.Helper()
		resp, err := health.Get("http://" + g.httpAddr + "/healthz")
		if err != nil {
			t.Fatalf("GET /healthz: %v", err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(b))
	}
	if code, body := healthz(); code != http.StatusOK {
		t.Fatalf("/healthz at start: %d %q", code, body)
	}

	// Use up the descriptors with connections that authenticate (so that
	// no limit of the Hub's closes them), until one is not accepted.
	var held []*halclient.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	mark := g.err.len()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c, err := halclient.Dial(ctx, g.tcp, halclient.Options{Token: admin, ClientName: "exhaust"})
		cancel()
		if err != nil {
			break
		}
		held = append(held, c)
		if len(held) > nofile {
			t.Fatalf("%d connections accepted under a limit of %d descriptors", len(held), nofile)
		}
	}
	// One connection waits in each listener's queue.
	for _, dial := range []func() (net.Conn, error){
		func() (net.Conn, error) { return net.Dial("tcp", g.httpAddr) },
		func() (net.Conn, error) { return net.Dial("unix", filepath.Join(dir, "hal.sock")) },
	} {
		c, err := dial()
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	for _, name := range []string{"http", "tcp", "unix"} {
		g.err.waitFor(t, mark, `level=WARN msg="listener cannot accept; backing off and trying again" listener=`+name+` err=.*too many open files`, waitLong)
	}
	if code, body := healthz(); code != http.StatusServiceUnavailable || body != "stuck: listener http, listener tcp, listener unix" {
		t.Errorf("/healthz with no descriptor left: %d %q, want 503 naming the three listeners", code, body)
	}
	t.Logf("%d connections used up %d descriptors", len(held), nofile)

	// Free them: every listener accepts again.
	mark = g.err.len()
	for _, c := range held {
		c.Close()
	}
	held = nil
	for _, name := range []string{"http", "tcp", "unix"} {
		g.err.waitFor(t, mark, `level=INFO msg="listener accepting again" listener=`+name+` `, waitLong)
	}
	// While the connections close one by one, a listener that got one
	// descriptor may find none at its next accept and back off again: the
	// state settles once they are all closed. /healthz is polled: no one
	// event says that every listener is accepting.
	deadline := time.Now().Add(waitLong)
	for code, body := healthz(); code != http.StatusOK || body != "ok"; code, body = healthz() {
		if time.Now().After(deadline) {
			t.Fatalf("/healthz once descriptors are free: %d %q", code, body)
		}
		<-time.After(20 * time.Millisecond)
	}
	for _, hub := range []string{g.ws, g.tcp, g.unix} {
		if out := gwOK(t, "read", "sim.led", "--hub", hub, "--state-dir", dir); out != "false\n" {
			t.Errorf("read over %s: %q", hub, out)
		}
	}
}

// wsStopFrom is stopFrom over WebSocket, dialled from the address local.
func wsStopFrom(t *testing.T, local, url, admin string) time.Duration {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 5 * time.Second}
	client := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	start := time.Now()
	c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: client})
	if err != nil {
		t.Fatalf("dial %s from %s: %v", url, local, err)
	}
	defer c.CloseNow()
	for _, m := range []string{
		fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"hal/initialize","params":{"protocolVersion":"0.1","clientInfo":{"name":"operator","version":"1"},"token":%q}}`, admin),
		`{"jsonrpc":"2.0","method":"hal/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"hal/stop","params":{"reason":"flood drill over websocket"}}`,
	} {
		if err := c.Write(ctx, websocket.MessageText, []byte(m)); err != nil {
			t.Fatalf("write to %s: %v", url, err)
		}
	}
	for {
		_, msg, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("no answer to hal/stop over WebSocket: %v", err)
		}
		var m struct {
			ID     json.RawMessage
			Result *openhal.StopResult
			Error  json.RawMessage
		}
		json.Unmarshal(msg, &m)
		if len(m.Error) > 0 {
			t.Fatalf("the Hub answered %s", msg)
		}
		if string(m.ID) == "2" {
			if m.Result == nil || !m.Result.Stopped {
				t.Fatalf("hal/stop: %s", msg)
			}
			return time.Since(start)
		}
	}
}
