//go:build linux

package gateway_test

// Whole-binary tests of the systemd side (issue 7, items 2, 3 and 7): a
// real NOTIFY_SOCKET, WATCHDOG_USEC as systemd sets it, the test-only
// fault injection of a binary built with -tags testhang, and SIGTERM.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
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

	"github.com/coder/websocket"

	"github.com/openhal/gateway/e2e/binaries"
)

// hangBinary is the gateway built with -tags testhang, where
// GATEWAY_TEST_HANG works, once per test run (package binaries).
func hangBinary(t *testing.T) string {
	t.Helper()
	skipShort(t)
	return binaries.GatewayTestHang(t)
}

// notifySocket is a real NOTIFY_SOCKET for a child gateway.
type notifySocket struct {
	t    *testing.T
	path string
	conn *net.UnixConn
}

func newNotifySocket(t *testing.T) *notifySocket {
	t.Helper()
	path := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &notifySocket{t: t, path: path, conn: conn}
}

// next returns the next message, or "" when none came within d.
func (s *notifySocket) next(d time.Duration) string {
	buf := make([]byte, 4096)
	s.conn.SetReadDeadline(time.Now().Add(d))
	n, err := s.conn.Read(buf)
	if err != nil {
		return ""
	}
	return string(buf[:n])
}

// waitFor returns the messages up to and including the first that
// matches pattern, failing the test after within.
func (s *notifySocket) waitFor(pattern string, within time.Duration) []string {
	s.t.Helper()
	re := regexp.MustCompile(pattern)
	deadline := time.Now().Add(within)
	var got []string
	for time.Now().Before(deadline) {
		m := s.next(time.Until(deadline))
		if m == "" {
			break
		}
		got = append(got, m)
		if re.MatchString(m) {
			return got
		}
	}
	s.t.Fatalf("no message matching %q within %s; got %q", pattern, within, got)
	return nil
}

// drain reads whatever is queued now.
func (s *notifySocket) drain() {
	for s.next(20*time.Millisecond) != "" {
	}
}

// sdGateway is `gateway run` started as systemd would start it: with
// NOTIFY_SOCKET and the given extra environment.
type sdGateway struct {
	*child
	dir, ws, tcp, httpAddr string
}

func startSD(t *testing.T, bin, dir string, sock *notifySocket, env []string, args ...string) *sdGateway {
	t.Helper()
	all := append([]string{"run", "--state-dir", dir, "--log-level", "debug", "--http", "127.0.0.1:0", "--tcp", "127.0.0.1:0"}, args...)
	c := newChild("gateway "+strings.Join(all, " "), exec.Command(bin, all...))
	c.cmd.Env = append(childEnv(), append([]string{"NOTIFY_SOCKET=" + sock.path}, env...)...)
	c.start(t)
	g := &sdGateway{child: c, dir: dir}
	c.err.waitFor(t, 0, `msg=ready `, waitLong)
	listening := regexp.MustCompile(`msg=listening transport=(\w+) url=(\S+) addr=(\S+)`)
	for _, line := range strings.Split(c.err.text(), "\n") {
		if m := listening.FindStringSubmatch(line); m != nil && m[1] == "websocket" {
			g.ws, g.httpAddr = m[2], m[3]
		} else if m != nil && m[1] == "tcp" {
			g.tcp = m[2]
		}
	}
	return g
}

func (g *sdGateway) admin(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(g.dir, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// healthz returns /healthz's status code and body.
func (g *sdGateway) healthz(t *testing.T) (int, string) {
	t.Helper()
	client := http.Client{Timeout: waitLong}
	resp, err := client.Get("http://" + g.httpAddr + "/healthz")
	if err != nil {
		t.Fatalf("GET /healthz: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// TestBinarySystemdNotify: under a NOTIFY_SOCKET the gateway asks for
// more start time, says READY=1 only with its listeners open, keeps
// STATUS= current as clients come and the emergency stop engages, and
// says STOPPING=1 on SIGTERM before exiting 0.
func TestBinarySystemdNotify(t *testing.T) {
	sock := newNotifySocket(t)
	dir := t.TempDir()
	g := startSD(t, gatewayBinary(t), dir, sock, nil)
	before := sock.waitFor(`^READY=1$`, waitLong)
	if before[0] != "EXTEND_TIMEOUT_USEC=30000000" {
		t.Errorf("first message %q, want EXTEND_TIMEOUT_USEC=30000000", before[0])
	}
	wantStatus := "STATUS=devices 7, faults 0, clients 0, adapters 0/0 running, emergency stop off"
	if !containsString(before, wantStatus) {
		t.Errorf("before READY=1: %q, want %q among them", before, wantStatus)
	}
	// READY=1 came: both listeners answer.
	for _, addr := range []string{g.httpAddr, strings.TrimPrefix(g.tcp, "tcp://")} {
		c, err := net.DialTimeout("tcp", addr, waitLong)
		if err != nil {
			t.Fatalf("after READY=1, dial %s: %v", addr, err)
		}
		c.Close()
	}
	sock.drain() // the two bare connections above came and went
	c, err := dial(t, g.ws, g.admin(t))
	if err != nil {
		t.Fatal(err)
	}
	sock.waitFor(`^STATUS=devices 7, faults 0, clients 1, `, waitLong)
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	if _, err := c.Stop(ctx, "systemd status test"); err != nil {
		t.Fatal(err)
	}
	sock.waitFor(`^STATUS=.*, emergency stop ENGAGED$`, waitLong)
	code, _ := g.signal(t, syscall.SIGTERM, waitLong)
	sock.waitFor(`^STOPPING=1$`, waitLong)
	if code != 0 {
		t.Errorf("exit code %d after SIGTERM", code)
	}
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestBinaryWatchdogHang wedges each of the three watched parts with the
// test-only fault injection: the watchdog pets before, stops petting
// after, and names the part in its log and in /healthz.
func TestBinaryWatchdogHang(t *testing.T) {
	for _, part := range []string{"hub", "supervisor", "audit"} {
		t.Run(part, func(t *testing.T) {
			t.Parallel()
			sock := newNotifySocket(t)
			g := startSD(t, hangBinary(t), t.TempDir(), sock,
				[]string{"WATCHDOG_USEC=1000000", "GATEWAY_TEST_HANG=" + part + ":2s"})
			sock.waitFor(`^READY=1$`, waitLong)
			// Pets before the wedge: at once, then every 0.5 s.
			sock.waitFor(`^WATCHDOG=1$`, waitLong)
			sock.waitFor(`^WATCHDOG=1$`, waitLong)
			if strings.Contains(g.err.text(), "parts stuck") {
				t.Fatalf("a part was stuck before the wedge")
			}
			g.err.waitFor(t, 0, `msg="test-only fault injection: wedging" part=`+part, waitLong)
			g.err.waitFor(t, 0, `level=ERROR msg="watchdog: parts stuck; systemd's watchdog is not petted" stuck=`+part+`$`, waitLong)
			sock.drain() // pets of the ticks before the stuck one
			// More than a whole WATCHDOG_USEC without a pet: systemd
			// would have killed it by now.
			deadline := time.Now().Add(1500 * time.Millisecond)
			for time.Now().Before(deadline) {
				if m := sock.next(time.Until(deadline)); m == "WATCHDOG=1" {
					t.Fatalf("petted while %s is wedged", part)
				}
			}
			code, body := g.healthz(t)
			if code != http.StatusServiceUnavailable || body != "stuck: "+part {
				t.Errorf("/healthz = %d %q, want 503 \"stuck: %s\"", code, body, part)
			}
			if n := strings.Count(g.err.text(), "parts stuck"); n != 1 {
				t.Errorf("the stuck part logged %d times, want once", n)
			}
		})
	}
}

// instrumentLines plays a serial instrument that records every line it
// gets and answers "MEAS?" with "12.5 V", each answer only once release
// is closed.
type instrumentLines struct {
	mu      sync.Mutex
	lines   []string
	asked   chan string // each question, as it comes
	release chan struct{}
}

func newInstrumentLines() *instrumentLines {
	return &instrumentLines{asked: make(chan string, 16), release: make(chan struct{})}
}

func (in *instrumentLines) answer(line string) string {
	in.mu.Lock()
	in.lines = append(in.lines, line)
	in.mu.Unlock()
	in.asked <- line
	if line != "MEAS?" {
		return "OK"
	}
	<-in.release
	return "12.5 V"
}

func (in *instrumentLines) got() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]string(nil), in.lines...)
}

// serialConfig is a generic board with a serial instrument per port,
// bench.psu0, bench.psu1, ..., each with the safe value "OUT OFF".
// waitDevicesOK waits until each of ids is in state ok, told by the
// Hub's hal/deviceState notifications after a first list, and fails the
// test at the deadline.
func waitDevicesOK(t *testing.T, url, tok string, ids ...string) {
	t.Helper()
	c, err := dial(t, url, tok)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	devs, err := c.Devices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	state := map[string]string{}
	for _, d := range devs {
		state[d.ID] = string(d.State)
	}
	for {
		waiting := slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return state[id] == "ok" })
		if len(waiting) == 0 {
			return
		}
		select {
		case n, ok := <-c.Notifications():
			if !ok {
				t.Fatalf("the connection ended while %v were not ok", waiting)
			}
			var p struct{ Device, State string }
			if n.Method == "hal/deviceState" && json.Unmarshal(n.Params, &p) == nil {
				state[p.Device] = p.State
			}
		case <-ctx.Done():
			t.Fatalf("%v not ok within %s: %v", waiting, waitLong, state)
		}
	}
}

func serialConfig(t *testing.T, ports ...string) string {
	var b strings.Builder
	b.WriteString("board: generic\ndevices:\n")
	for i, port := range ports {
		fmt.Fprintf(&b, "  bench.psu%d:\n    kind: serial\n    label: Bench supply\n    port: %s\n    baud: 9600\n    risk: low\n    safe: \"OUT OFF\"\n", i, port)
	}
	return writeConfig(t, b.String())
}

// TestBinaryHungDeviceKeepsPetting: a device that never answers (an
// instrument asked a question it ignores) keeps a write in flight, and
// the watchdog keeps petting all along: one hung sensor must not reboot
// the bench.
func TestBinaryHungDeviceKeepsPetting(t *testing.T) {
	dir := t.TempDir()
	in := newInstrumentLines()
	t.Cleanup(func() { close(in.release) })
	inst := openInstrument(t, in.answer)
	sock := newNotifySocket(t)
	g := startSD(t, gatewayBinary(t), dir, sock, []string{"WATCHDOG_USEC=600000"}, "--config", serialConfig(t, inst.slave))
	sock.waitFor(`^READY=1$`, waitLong)
	waitDevicesOK(t, g.tcp, g.admin(t), "bench.psu0")
	c, err := dial(t, g.tcp, g.admin(t))
	if err != nil {
		t.Fatal(err)
	}
	written := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLong)
		defer cancel()
		timeout := int64(4000)
		written <- c.Call(ctx, "hal/write", map[string]any{"device": "bench.psu0", "value": "MEAS?", "reply": true, "timeoutMs": timeout}, nil)
	}()
	if q := <-in.asked; q != "MEAS?" {
		t.Fatalf("the instrument was asked %q", q)
	}
	sock.drain()
	start := time.Now()
	for range 4 { // two whole watchdog intervals with the device hung
		sock.waitFor(`^WATCHDOG=1$`, waitLong)
	}
	if el := time.Since(start); el < 900*time.Millisecond {
		t.Errorf("four pets in %v", el)
	}
	select {
	case err := <-written:
		t.Fatalf("the write ended while the instrument is silent: %v", err)
	default:
	}
	if strings.Contains(g.err.text(), "parts stuck") {
		t.Errorf("the watchdog called a part stuck while a device hung")
	}
	if code, body := g.healthz(t); code != http.StatusOK {
		t.Errorf("/healthz = %d %q while a device hangs", code, body)
	}
}

// TestBinaryGracefulShutdown: SIGTERM while a slow write is in flight on
// a WebSocket connection and another on TCP, each to its own instrument.
// The gateway stops accepting, both answers arrive, the WebSocket gets a
// close frame (1001) and the TCP connection an orderly close, then each
// instrument gets its safe value (audited as {hub, shutdown}), and the
// exit code is 0.
func TestBinaryGracefulShutdown(t *testing.T) {
	dir := t.TempDir()
	release := make(chan struct{})
	in := []*instrumentLines{newInstrumentLines(), newInstrumentLines()}
	in[0].release, in[1].release = release, release
	inst := []*instrument{openInstrument(t, in[0].answer), openInstrument(t, in[1].answer)}
	sock := newNotifySocket(t)
	g := startSD(t, gatewayBinary(t), dir, sock, nil, "--config", serialConfig(t, inst[0].slave, inst[1].slave))
	sock.waitFor(`^READY=1$`, waitLong)
	tok := g.admin(t)
	// READY comes before the serial ports are open (a port is opened in
	// the background, offline until then): a write to a port not yet
	// open is refused, and its instrument never asked.
	waitDevicesOK(t, g.tcp, tok, "bench.psu0", "bench.psu1")
	ctx, cancel := context.WithTimeout(context.Background(), 2*waitLong)
	defer cancel()

	ws, _, err := websocket.Dial(ctx, g.ws, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + tok}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	tcp, err := net.DialTimeout("tcp", strings.TrimPrefix(g.tcp, "tcp://"), waitLong)
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	tcpLines := bufio.NewReader(tcp)

	initMsg := func(tok string) string {
		return `{"jsonrpc":"2.0","id":0,"method":"hal/initialize","params":{"protocolVersion":"0.1","clientInfo":{"name":"shutdown-test","version":"1"}` + tok + `}}`
	}
	write := func(dev string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"hal/write","params":{"device":"` + dev + `","value":"MEAS?","reply":true,"timeoutMs":8000}}`
	}
	initialized := `{"jsonrpc":"2.0","method":"hal/initialized"}`
	wsRead := func() string {
		t.Helper()
		_, b, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("websocket read: %v", err)
		}
		return string(b)
	}
	tcpRead := func() string {
		t.Helper()
		tcp.SetReadDeadline(time.Now().Add(2 * waitLong))
		line, err := tcpLines.ReadString('\n')
		if err != nil {
			t.Fatalf("tcp read: %v", err)
		}
		return line
	}
	for _, m := range []string{initMsg(""), initialized} {
		if err := ws.Write(ctx, websocket.MessageText, []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	if r := wsRead(); !strings.Contains(r, `"id":0,"result"`) {
		t.Fatalf("websocket initialize: %s", r)
	}
	fmt.Fprintf(tcp, "%s\n%s\n", initMsg(`,"token":"`+tok+`"`), initialized)
	if r := tcpRead(); !strings.Contains(r, `"id":0,"result"`) {
		t.Fatalf("tcp initialize: %s", r)
	}
	// Each write reaches its instrument and waits there for the answer.
	if err := ws.Write(ctx, websocket.MessageText, []byte(write("bench.psu0"))); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(tcp, "%s\n", write("bench.psu1"))
	for i := range in {
		select {
		case q := <-in[i].asked:
			if q != "MEAS?" {
				t.Fatalf("instrument %d was asked %q", i, q)
			}
		case <-time.After(waitLong): // a deadline, not a pause: the question is the event
			t.Fatalf("instrument %d was never asked (the write's answer: %s)", i, []func() string{wsRead, tcpRead}[i]())
		}
	}

	if err := g.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	sock.waitFor(`^STOPPING=1$`, waitLong)
	g.err.waitFor(t, 0, `msg="listeners closed; answering requests in flight"`, waitLong)
	// Stopped accepting: a new connection is refused.
	if c, err := net.DialTimeout("tcp", strings.TrimPrefix(g.tcp, "tcp://"), waitLong); err == nil {
		c.Close()
		t.Errorf("a new TCP connection was accepted after SIGTERM")
	}
	close(release) // the instruments answer now

	if r := nextResult(t, wsRead); !strings.Contains(r, `"id":7,"result"`) || !strings.Contains(r, "12.5 V") {
		t.Errorf("websocket answer: %s", r)
	}
	_, _, err = ws.Read(ctx)
	if st := websocket.CloseStatus(err); st != websocket.StatusGoingAway {
		t.Errorf("after the answer the websocket ended with %v (status %v), want a close frame 1001", err, st)
	}
	if r := nextResult(t, tcpRead); !strings.Contains(r, `"id":7,"result"`) {
		t.Errorf("tcp answer: %s", r)
	}
	tcp.SetReadDeadline(time.Now().Add(waitLong))
	for {
		line, err := tcpLines.ReadString('\n')
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("tcp after the answer: %v (want an orderly close)", err)
		}
		if strings.Contains(line, `"id"`) {
			t.Errorf("tcp: unexpected answer after the last: %s", line)
		}
	}
	if code := g.wait(t, waitLong); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0", code)
	}
	for i := range in {
		if lines := in[i].got(); len(lines) != 2 || lines[1] != "OUT OFF" {
			t.Errorf("instrument %d got %q; want MEAS? and then the safe value OUT OFF", i, lines)
		}
	}
	// The audit log, read from its files (the gateway is gone): each safe
	// write is there, by {hub, shutdown}.
	files, _ := filepath.Glob(filepath.Join(dir, "audit", "*"))
	var entries []string
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, `"OUT OFF"`) {
				entries = append(entries, line)
			}
		}
	}
	for i := range in {
		dev := fmt.Sprintf(`"bench.psu%d"`, i)
		found := false
		for _, e := range entries {
			found = found || strings.Contains(e, dev) && strings.Contains(e, `"kind":"hub"`) && strings.Contains(e, `"name":"shutdown"`)
		}
		if !found {
			t.Errorf("no audit entry of bench.psu%d's safe value by {hub, shutdown}; entries with OUT OFF: %q", i, entries)
		}
	}
}

// nextResult reads messages until one with an id (an answer), skipping
// notifications.
func nextResult(t *testing.T, read func() string) string {
	t.Helper()
	for {
		m := read()
		if strings.Contains(m, `"id"`) {
			return m
		}
	}
}

// listenerFiles opens a TCP listener on a free port of each of ips and
// returns their files, as systemd hands sockets over, and addresses.
func listenerFiles(t *testing.T, ips ...net.IP) (files []*os.File, addrs []string) {
	t.Helper()
	for _, ip := range ips {
		ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: ip})
		if err != nil {
			t.Fatal(err)
		}
		f, err := ln.File()
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, ln.Addr().String())
		ln.Close() // f keeps the socket
		files = append(files, f)
	}
	return files, addrs
}

// startActivated starts the gateway with args as systemd starts a
// socket-activated service, with the sockets of files (http, then tcp)
// from fd 3 on.
func startActivated(t *testing.T, name string, files []*os.File, args ...string) *child {
	t.Helper()
	// sh's $$ is the pid exec keeps: LISTEN_PID names the gateway.
	sh := append([]string{"-c", `LISTEN_PID=$$ exec "$0" "$@"`, gatewayBinary(t)}, args...)
	c := newChild(name, exec.Command("/bin/sh", sh...))
	c.cmd.Env = append(childEnv(), fmt.Sprintf("LISTEN_FDS=%d", len(files)), "LISTEN_FDNAMES=http:tcp")
	c.cmd.ExtraFiles = files
	c.start(t)
	for _, f := range files {
		f.Close()
	}
	return c
}

// TestBinarySocketActivation: the gateway started as systemd starts a
// socket-activated service — LISTEN_PID, LISTEN_FDS=2 and
// LISTEN_FDNAMES=http:tcp, the sockets at fds 3 and 4 — serves on the
// sockets it was given, not on the addresses of its flags; a client that
// connected before the gateway started is answered.
func TestBinarySocketActivation(t *testing.T) {
	dir := t.TempDir()
	loopback := net.IPv4(127, 0, 0, 1)
	files, addrs := listenerFiles(t, loopback, loopback)
	// A client that comes before the service: the kernel queues it.
	early, err := net.DialTimeout("tcp", addrs[1], waitLong)
	if err != nil {
		t.Fatal(err)
	}
	defer early.Close()

	c := startActivated(t, "gateway (socket-activated)", files, "run", "--state-dir", dir, "--http", "127.0.0.1:0", "--tcp", "127.0.0.1:0")
	c.err.waitFor(t, 0, `msg=ready `, waitLong)
	c.err.waitFor(t, 0, `msg=listening transport=websocket url=ws://`+regexp.QuoteMeta(addrs[0])+`/hal addr=\S+ socket=systemd$`, waitLong)
	c.err.waitFor(t, 0, `msg=listening transport=tcp url=tcp://`+regexp.QuoteMeta(addrs[1])+` addr=\S+ socket=systemd$`, waitLong)
	tok, err := os.ReadFile(filepath.Join(dir, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(early, `{"jsonrpc":"2.0","id":0,"method":"hal/initialize","params":{"protocolVersion":"0.1","clientInfo":{"name":"early","version":"1"},"token":"%s"}}`+"\n", strings.TrimSpace(string(tok)))
	early.SetReadDeadline(time.Now().Add(waitLong))
	line, err := bufio.NewReader(early).ReadString('\n')
	if err != nil || !strings.Contains(line, `"id":0,"result"`) {
		t.Fatalf("the early client got %q, %v", line, err)
	}
	conn, err := dial(t, "ws://"+addrs[0]+"/hal", strings.TrimSpace(string(tok)))
	if err != nil {
		t.Fatalf("websocket on the passed socket: %v", err)
	}
	conn.Close()
	if code, _ := c.signal(t, syscall.SIGTERM, waitLong); code != 0 {
		t.Errorf("exit code %d", code)
	}
}

// A plain socket systemd hands over on an address off loopback is served
// (the unit is the operator's choice), and the start-up log says that
// tokens cross it in clear; one on loopback is not warned about.
func TestBinaryActivatedPlainSocketWarned(t *testing.T) {
	files, addrs := listenerFiles(t, net.IPv4zero, net.IPv4(127, 0, 0, 1))
	c := startActivated(t, "gateway (socket-activated on 0.0.0.0)", files, "run", "--state-dir", t.TempDir())
	c.err.waitFor(t, 0, `msg=ready `, waitLong)
	c.err.waitFor(t, 0, `level=WARN msg="plain socket passed by systemd is off loopback: every token given to it crosses the network in clear; `+
		`make its socket unit listen on 127.0.0.1 and serve the network with the TLS listeners \(docs/install.md\)" name=http addr=`+regexp.QuoteMeta(addrs[0])+`$`, waitLong)
	if strings.Contains(c.err.text(), "name=tcp addr="+addrs[1]) {
		t.Errorf("the loopback socket was warned about:\n%s", c.err.text())
	}
	if code, _ := c.signal(t, syscall.SIGTERM, waitLong); code != 0 {
		t.Errorf("exit code %d", code)
	}
}
