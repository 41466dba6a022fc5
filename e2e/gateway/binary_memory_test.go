package gateway_test

// The whole-binary test of spec §7 and §8's bounds on memory: one agent
// tries every way it has to make the gateway hold memory, and the
// gateway's peak RSS stays under 64 MiB. The helpers are in
// binary_helpers_test.go.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
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

// rssGoal is the bound on the gateway's memory under attack.
const rssGoal = 64 << 20

// attackTime is how long the floods run once the confirmations are made.
const attackTime = 6 * time.Second

// TestBinaryMemoryBounded is one control_low agent (with a read token
// too) doing everything it can to grow the gateway, all at once, on about
// sixty connections:
//
//   - Confirmation Requests: reasons of 255 KiB (refused: too_long), then
//     requests with 1 KiB reasons, 18 at once, each replacing the one
//     before (superseded), until 256 resolved ones with 1 KiB reasons
//     are kept, so that a list of them passes one message;
//   - writes with 255 KiB reasons, pipelined on 8 connections (refused:
//     too_long);
//   - writes of sim.fan padded to 8 KiB, as many as may be in flight, on
//     12 connections, so that hundreds wait for the device at once;
//   - hal/confirmations/list and hal/devices/list, 200 each at a time,
//     again and again, on 12 connections that never read their answers;
//   - 12 watchers that never read while an admin toggles sim.led as fast
//     as it can;
//   - 8 connections holding half a message of 255 KiB, and 2 sending
//     messages over the limit again and again;
//   - and, without a token, 48 connections (8 from each of 6 addresses:
//     three quarters of the budget of connections not yet authenticated,
//     the rest left for the attack's own reconnections), each holding
//     half a first message as long as one may be before hal/initialize.
//
// Connections that do not read shrink their socket's receive buffer, as
// an attacker would, so that what they do not read waits in the gateway
// rather than in the kernel. Afterwards the gateway's peak RSS (VmHWM)
// must be under 64 MiB, and an admin's `gateway confirm list` (which
// pages through 257 requests) and `gateway stop` must work on both
// transports.
func TestBinaryMemoryBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Most of the attack's connections are the agent's: its bound of 16
	// a token is lifted, so that they all count, as they would for an
	// attacker holding several tokens.
	g := startGateway(t, dir, "--config", writeConfig(t, "board: sim\nhub:\n  limits: {maxConnectionsPerToken: 64}\n"))
	agentTok := g.addToken(t, "greedy", "control_low")
	readTok := g.addToken(t, "peek", "read")
	admin := readAdminToken(t, dir)
	pid := g.cmd.Process.Pid
	t.Logf("VmHWM at start: %.1f MiB", mib(vmHWM(t, pid)))
	peakNow := samplePeak(t, pid)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := &attacker{t: t, g: g, ctx: ctx}
	defer a.closeAll()

	a.makeConfirmations(agentTok)
	stopToggling := a.toggleLED(admin)
	a.watchWithoutReading(readTok, 12)
	a.halfSend(agentTok, 8)
	overDone := a.sendOversized(agentTok)
	floodDone := a.floodReasons(agentTok, 8)
	queueDone := a.queueWrites(agentTok, 12)
	a.listWithoutReading(agentTok, readTok, 12)
	a.halfSendUnauthenticated(6, 8)
	time.Sleep(attackTime) // the floods run for this long: a duration, not a wait for an event
	cancel()
	<-floodDone
	<-queueDone
	<-overDone
	stopToggling()

	peak := peakNow()
	t.Logf("peak RSS (VmHWM) of the gateway under attack: %.1f MiB (goal < %d MiB); writes with long reasons refused: %d, applied: %d; oversized messages closed: %d",
		mib(peak), rssGoal>>20, a.tooLong.Load(), a.applied.Load(), a.oversized.Load())
	if peak >= rssGoal {
		t.Errorf("peak RSS %.1f MiB, want < %d MiB", mib(peak), rssGoal>>20)
	}
	// The connections that did not read were closed for it: their queues
	// were full, or all the queues together.
	m := regexp.MustCompile(`(?m)^gateway_hal_queue_overflows_total (\d+)$`).FindStringSubmatch(metrics(t, g))
	if m == nil || m[1] == "0" {
		t.Errorf("queue overflows: %v, want some (the clients that never read)", m)
	} else {
		t.Logf("connections closed for not reading: %s", m[1])
	}
	if a.applied.Load() > 0 || a.tooLong.Load() == 0 {
		t.Errorf("writes with 255 KiB reasons: %d applied, %d refused too_long; want every one refused", a.applied.Load(), a.tooLong.Load())
	}

	// The gateway still serves its operator, on both transports, with
	// the attack's connections still open.
	for _, hub := range []string{g.tcp, g.ws} {
		out := gwOK(t, "confirm", "list", "--hub", hub, "--state-dir", dir)
		rows := len(regexp.MustCompile(`(?m)^c-\d+\s\s`).FindAllString(out, -1)) // the table's, not the lines after it
		pending := len(regexp.MustCompile(`(?m)\spending\s+\S+$`).FindAllString(out, -1))
		if rows != 1+256 || pending != 1 {
			t.Errorf("confirm list on %s: %d requests, %d pending; want %d, %d", hub, rows, pending, 1+256, 1)
		}
	}
	for i, hub := range []string{g.tcp, g.ws} {
		want := "emergency stop engaged: "
		if i > 0 {
			want = "emergency stop was already engaged: "
		}
		if out := gwOK(t, "stop", "--reason", "after the flood", "--hub", hub, "--state-dir", dir); !strings.HasPrefix(out, want) {
			t.Errorf("stop on %s printed %q", hub, out)
		}
	}
	t.Logf("peak RSS after the admin's commands: %.1f MiB", mib(vmHWM(t, pid)))
}

// attacker holds the attack's connections and counts what it saw.
type attacker struct {
	t   *testing.T
	g   *gateway
	ctx context.Context // ends the floods

	mu    sync.Mutex
	conns []io.Closer

	tooLong, applied, oversized atomic.Int64
}

func (a *attacker) keep(c io.Closer) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.conns = append(a.conns, c)
}

func (a *attacker) closeAll() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range a.conns {
		c.Close()
	}
}

// rawConn is a connection that speaks the protocol by hand, to do what no
// well-behaved client does: not read, or send half a message.
type rawConn struct {
	nc net.Conn        // TCP, or
	ws *websocket.Conn // WebSocket
}

// smallReceiveBuffer makes a socket's receive buffer as small as the
// kernel allows (no autotuning), so that what its reader does not read
// stays with the sender.
func smallReceiveBuffer(network, address string, c syscall.RawConn) error {
	var err error
	c.Control(func(fd uintptr) { err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	return err
}

// dialRaw connects over transport ("tcp" or "ws") and initializes with
// tok, without reading the answer.
func (a *attacker) dialRaw(transport, tok string) (*rawConn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	d := &net.Dialer{Control: smallReceiveBuffer}
	rc := &rawConn{}
	if transport == "tcp" {
		nc, err := d.DialContext(ctx, "tcp", a.g.tcpAddr)
		if err != nil {
			return nil, err
		}
		rc.nc = nc
	} else {
		client := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
		ws, _, err := websocket.Dial(ctx, a.g.ws, &websocket.DialOptions{HTTPClient: client})
		if err != nil {
			return nil, err
		}
		ws.SetReadLimit(-1)
		rc.ws = ws
	}
	a.keep(rc)
	init := fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"hal/initialize","params":{"protocolVersion":"0.1","clientInfo":{"name":"greedy","version":"1"},"token":%q}}`, tok)
	if err := rc.send(init); err != nil {
		return nil, err
	}
	return rc, rc.send(`{"jsonrpc":"2.0","method":"hal/initialized"}`)
}

func (rc *rawConn) send(msg string) error {
	if rc.nc != nil {
		rc.nc.SetWriteDeadline(time.Now().Add(waitLong))
		_, err := io.WriteString(rc.nc, msg+"\n")
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	return rc.ws.Write(ctx, websocket.MessageText, []byte(msg))
}

// lines calls fn with each message the gateway sends until the
// connection ends.
func (rc *rawConn) lines(fn func([]byte)) {
	if rc.nc != nil {
		sc := bufio.NewScanner(rc.nc)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			fn(sc.Bytes())
		}
		return
	}
	for {
		_, b, err := rc.ws.Read(context.Background())
		if err != nil {
			return
		}
		fn(b)
	}
}

func (rc *rawConn) Close() error {
	if rc.nc != nil {
		return rc.nc.Close()
	}
	return rc.ws.CloseNow()
}

func transportOf(i int) string { return []string{"tcp", "ws"}[i%2] }

// mustDial dials or fails the test.
func (a *attacker) mustDial(transport, tok string) *rawConn {
	rc, err := a.dialRaw(transport, tok)
	if err != nil {
		a.t.Fatalf("dial %s: %v", transport, err)
	}
	return rc
}

// toggleLED writes sim.led as an admin, 8 writes in flight, until the
// returned function is called.
func (a *attacker) toggleLED(admin string) (stop func()) {
	c, err := dial(a.t, a.g.ws, admin)
	if err != nil {
		a.t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), waitLong)
				_, err := c.Write(ctx, "sim.led", (i+w)%2 == 0, "")
				cancel()
				var he *halclient.HubError
				if err != nil && !errors.As(err, &he) && !errors.Is(err, context.DeadlineExceeded) {
					// A write may wait long behind the flood of the audit
					// log (TIMEOUT): the values flow all the same.
					a.t.Errorf("admin toggling sim.led: %v", err)
					return
				}
			}
		})
	}
	return func() { close(done); wg.Wait() }
}

// holdIdle opens n connections that initialize and then do nothing.
func (a *attacker) holdIdle(tok string, n int) {
	for i := range n {
		a.mustDial(transportOf(i), tok)
	}
}

// watchWithoutReading opens n connections that take notifications and
// never read them.
func (a *attacker) watchWithoutReading(tok string, n int) {
	a.holdIdle(tok, n) // initialized: notifications flow to them
}

// halfSend opens n connections that each send 255 KiB of a message and
// never finish it.
func (a *attacker) halfSend(tok string, n int) {
	half := `{"jsonrpc":"2.0","id":1,"method":"hal/write","params":{"device":"sim.led","value":true,"reason":"` + strings.Repeat("h", 255<<10)
	for i := range n {
		rc := a.mustDial(transportOf(i), tok)
		if rc.nc != nil {
			if _, err := io.WriteString(rc.nc, half); err != nil {
				a.t.Fatalf("half a message: %v", err)
			}
			continue
		}
		w, err := rc.ws.Writer(context.Background(), websocket.MessageText)
		if err != nil {
			a.t.Fatalf("half a message: %v", err)
		}
		if _, err := io.WriteString(w, half); err != nil {
			a.t.Fatalf("half a message: %v", err)
		}
		// w is never closed: the frame never ends.
	}
}

// halfSendUnauthenticated opens perPeer connections from each of peers
// loopback addresses, alternately TCP and WebSocket, that send all but
// the last byte of a hal/initialize as long as the gateway takes before
// authentication (hub.limits.initMessageBytes, 16 KiB) and never finish
// it: the most that peers without a token can make it hold.
func (a *attacker) halfSendUnauthenticated(peers, perPeer int) {
	pad := strings.Repeat("u", 16<<10-200)
	half := `{"jsonrpc":"2.0","id":1,"method":"hal/initialize","params":{"protocolVersion":"0.1","clientInfo":{"name":"` + pad
	// All at once: each dial waits for a gateway the floods keep busy
	// (0.2-1.3 s a WebSocket), and one after the other they took 15 s.
	var wg sync.WaitGroup
	for p := range peers {
		local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(10+p))}
		d := &net.Dialer{Control: smallReceiveBuffer, LocalAddr: local, Timeout: waitLong}
		for i := range perPeer {
			wg.Go(func() {
				if err := a.halfSendFrom(d, transportOf(i), half); err != nil {
					a.t.Errorf("unauthenticated connection from %s: %v", local.IP, err)
				}
			})
		}
	}
	wg.Wait()
	if a.t.Failed() {
		a.t.FailNow()
	}
}

// halfSendFrom connects over transport with d and sends half, the start
// of a first message that never ends.
func (a *attacker) halfSendFrom(d *net.Dialer, transport, half string) error {
	if transport == "tcp" {
		nc, err := d.Dial("tcp", a.g.tcpAddr)
		if err != nil {
			return err
		}
		a.keep(nc)
		_, err = io.WriteString(nc, half)
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	ws, _, err := websocket.Dial(ctx, a.g.ws, &websocket.DialOptions{HTTPClient: client})
	if err != nil {
		return err
	}
	a.keep(&rawConn{ws: ws})
	w, err := ws.Writer(context.Background(), websocket.MessageText)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, half) // w is never closed: the frame never ends
	return err
}

// sendOversized connects, sends a message of 300 KiB, and reads until the
// gateway closes the connection, over and over on both transports, until
// the attack ends.
func (a *attacker) sendOversized(tok string) <-chan struct{} {
	done := make(chan struct{})
	big := `{"jsonrpc":"2.0","id":1,"method":"hal/ping","params":{"x":"` + strings.Repeat("o", 300<<10) + `"}}`
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			for a.ctx.Err() == nil {
				rc, err := a.dialRaw(transportOf(i), tok)
				if err != nil {
					continue // the slots may all be taken for a moment
				}
				if rc.send(big) == nil {
					rc.lines(func([]byte) {})
					a.oversized.Add(1)
				}
				rc.Close()
			}
		})
	}
	go func() { wg.Wait(); close(done) }()
	return done
}

// floodReasons pipelines writes of sim.led with 255 KiB reasons on n
// connections, reading the answers, until the attack ends.
func (a *attacker) floodReasons(tok string, n int) <-chan struct{} {
	done := make(chan struct{})
	reason := strings.Repeat("r", 255<<10)
	var wg sync.WaitGroup
	for i := range n {
		rc := a.mustDial(transportOf(i), tok)
		go rc.lines(func(b []byte) {
			switch {
			case bytes.Contains(b, []byte(`"reason":"too_long"`)):
				a.tooLong.Add(1)
			case bytes.Contains(b, []byte(`"status":"applied"`)):
				a.applied.Add(1)
			}
		})
		wg.Go(func() {
			for id := 1; a.ctx.Err() == nil; id++ {
				msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"hal/write","params":{"device":"sim.led","value":%v,"reason":"%s"}}`, id, id%2 == 0, reason)
				if rc.send(msg) != nil {
					return
				}
			}
		})
	}
	go func() { wg.Wait(); close(done) }()
	return done
}

// queueWrites pipelines writes of sim.fan on n connections, each with a
// reason of 1 KiB and padded with spaces to 8 KiB, reading the answers,
// until the attack ends: the writes wait for the device one behind the
// other, as many as the gateway takes in flight.
func (a *attacker) queueWrites(tok string, n int) <-chan struct{} {
	done := make(chan struct{})
	reason := strings.Repeat("q", openhal.MaxReasonBytes)
	pad := strings.Repeat(" ", 7<<10)
	var wg sync.WaitGroup
	for i := range n {
		rc := a.mustDial(transportOf(i), tok)
		go rc.lines(func([]byte) {})
		wg.Go(func() {
			for id := 1; a.ctx.Err() == nil; id++ {
				msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"hal/write",%s"params":{"device":"sim.fan","value":%d,"timeoutMs":60000,"reason":"%s"}}`, id, pad, id%100, reason)
				if rc.send(msg) != nil {
					return
				}
			}
		})
	}
	go func() { wg.Wait(); close(done) }()
	return done
}

// makeConfirmations asks for the heater as the agent: with 255 KiB
// reasons (refused), then with 1 KiB reasons in rounds of 18 at once,
// each request replacing the agent's one before (superseded), until 256
// resolved requests are kept; the last one stays pending.
func (a *attacker) makeConfirmations(tok string) {
	t := a.t
	c, err := dial(t, a.g.tcp, tok)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	heater := func(reason string) (halclient.WriteResult, error) {
		return c.Write(ctx, "sim.heater", true, reason)
	}
	for range 20 {
		if _, err := heater(strings.Repeat("L", 255<<10)); !isHubError(err, openhal.CodeInvalidParams, "too_long") {
			t.Errorf("a heater request with a 255 KiB reason: %v, want INVALID_PARAMS too_long", err)
		}
	}
	const perRound = 18
	rounds := (256 + 1 + perRound - 1) / perRound
	for round := range rounds {
		var wg sync.WaitGroup
		for i := range perRound {
			wg.Go(func() {
				res, err := heater(fmt.Sprintf("%02d.%02d", round, i) + strings.Repeat(" ", openhal.MaxReasonBytes-5))
				if err != nil || res.Confirmation == nil {
					t.Errorf("heater request %d of round %d: %+v, %v; want pending", i, round, res, err)
				}
			})
		}
		wg.Wait()
	}
}

// listWithoutReading sends hal/confirmations/list and hal/devices/list,
// 200 of each at a time, on each of n connections, alternately the
// agent's and the reader's, again and again until the attack ends, and
// never reads: pages keep coming for as long as the gateway builds them,
// however fast it does on a loaded machine, so that each connection's
// queue fills.
func (a *attacker) listWithoutReading(agentTok, readTok string, n int) {
	var b strings.Builder
	for id := 1; id <= 200; id++ {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"hal/confirmations/list"}`+"\n", 2*id)
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"hal/devices/list"}`+"\n", 2*id+1)
	}
	requests := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	for i := range n {
		rc := a.mustDial(transportOf(i), []string{agentTok, readTok}[i/2%2])
		go func() {
			for a.ctx.Err() == nil {
				for _, r := range requests {
					if a.ctx.Err() != nil || rc.send(r) != nil {
						return // the attack ended, or closed for not reading: what the gateway may do
					}
				}
			}
		}()
	}
}

// isHubError reports whether err is the Hub's error with this code and
// data.reason.
func isHubError(err error, code int64, reason string) bool {
	var he *halclient.HubError
	return errors.As(err, &he) && he.Code() == code && he.Reason() == reason
}

// samplePeak follows the VmHWM of process pid, logging it each second
// at the end of the test, and returns a function that reads it now —
// or, once the process has died, the last figure read.
func samplePeak(t *testing.T, pid int) func() int64 {
	var mu sync.Mutex
	var last int64
	var seconds []string
	read := func() int64 {
		mu.Lock()
		defer mu.Unlock()
		if hwm, err := readHWM(pid); err == nil {
			last = hwm
		}
		return last
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	t.Cleanup(func() {
		close(done)
		<-stopped
		t.Logf("VmHWM each second, MiB: %s", strings.Join(seconds, " "))
	})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			hwm := read()
			if i%10 == 0 {
				seconds = append(seconds, fmt.Sprintf("%.1f", mib(hwm)))
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return read
}

// readHWM reads the peak resident set size of process pid, in bytes.
func readHWM(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	m := regexp.MustCompile(`(?m)^VmHWM:\s+(\d+) kB$`).FindSubmatch(b)
	if m == nil {
		return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
	}
	kb, err := strconv.ParseInt(string(m[1]), 10, 64)
	return kb << 10, err
}

// vmHWM returns the peak resident set size of process pid, in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	hwm, err := readHWM(pid)
	if err != nil {
		t.Fatalf("the gateway's peak RSS: %v", err)
	}
	return hwm
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
