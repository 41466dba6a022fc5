package gateway_test

// Whole-binary tests of the stop's own lane (issue 28): on every path
// that carries an emergency stop — MQTT, a HAL connection, MCP, the CLI,
// the console, a stop button — a stop sent in the middle of a flood of
// writes engages within a second, as an observer with a connection of
// its own sees it (hal/stopped). Each test measures the time from the
// stop's send to hal/stopped over several runs and logs the figures
// (go test -v -run 'TestBinaryStop' ./e2e/gateway).

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/openhal/gateway/internal/mqttbridge/mosquittotest"
	"github.com/openhal/gateway/openhal"
)

// stopRuns is how many stops each test sends, for a median.
const stopRuns = 5

// stopWatch is an observer: an admin connection of its own that notes
// when each hal/stopped arrives. It reads every notification as it
// comes, so that the values a flood sets off never fill its buffer.
type stopWatch struct {
	stops chan time.Time
}

// watchStops connects to g with its admin token and follows its stops.
func watchStops(t *testing.T, g *gateway) *stopWatch {
	t.Helper()
	c, err := dial(t, g.ws, adminToken(t, g))
	if err != nil {
		t.Fatal(err)
	}
	w := &stopWatch{stops: make(chan time.Time, 64)}
	go func() {
		for n := range c.Notifications() {
			if n.Method == openhal.NotifyStopped {
				w.stops <- time.Now()
			}
		}
	}()
	return w
}

// engaged waits for the next hal/stopped and returns how long after sent
// it came; it fails the test past waitLong.
func (w *stopWatch) engaged(t *testing.T, sent time.Time) time.Duration {
	t.Helper()
	select {
	case at := <-w.stops:
		return at.Sub(sent)
	case <-time.After(waitLong):
		t.Fatalf("no hal/stopped within %s of the stop", waitLong)
	}
	return 0
}

// none checks that no hal/stopped is waiting: each run's stop is its own.
func (w *stopWatch) none(t *testing.T) {
	t.Helper()
	select {
	case <-w.stops:
		t.Fatal("a hal/stopped came that no stop of this run sent")
	default:
	}
}

// adminToken is g's admin token, from its state directory.
func adminToken(t *testing.T, g *gateway) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(g.dir, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// stopFigures are the times of one path's stops.
type stopFigures struct {
	path  string
	times []time.Duration
}

// add notes one stop's time; one past stopWithin (a second,
// binary_admission_test.go) fails the test.
func (f *stopFigures) add(t *testing.T, d time.Duration) {
	t.Helper()
	f.times = append(f.times, d)
	if d > stopWithin {
		t.Errorf("%s: the stop engaged %s after its send, want within %s", f.path, d.Round(time.Millisecond), stopWithin)
	}
}

// report logs the median and the range, the figures docs/mqtt.md and
// docs/protocol.md quote.
func (f *stopFigures) report(t *testing.T) {
	t.Helper()
	s := slices.Clone(f.times)
	slices.Sort(s)
	if len(s) == 0 {
		return
	}
	t.Logf("%s: stop to hal/stopped, %d runs: median %s (min %s, max %s)", f.path, len(s),
		s[len(s)/2].Round(100*time.Microsecond), s[0].Round(100*time.Microsecond), s[len(s)-1].Round(100*time.Microsecond))
}

// resume lifts the stop with the admin token, ready for the next run.
func resume(t *testing.T, g *gateway) {
	t.Helper()
	gwOK(t, g.admin("resume")...)
}

// mqttFlooder is one MQTT connection of a publisher that floods: paho's
// plain client on a socket of its own, so that every command and the
// stop go out on that one connection, in order.
type mqttFlooder struct {
	c *paho.Client
}

func floodMQTT(t *testing.T, port int) *mqttFlooder {
	t.Helper()
	conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	c := paho.NewClient(paho.ClientConfig{Conn: conn})
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	ack, err := c.Connect(ctx, &paho.Connect{ClientID: fmt.Sprintf("flooder-%d", os.Getpid()), CleanStart: true, KeepAlive: 0})
	if err != nil || ack.ReasonCode != 0 {
		t.Fatalf("flooder connect: %v %+v", err, ack)
	}
	t.Cleanup(func() { _ = c.Disconnect(&paho.Disconnect{}) })
	return &mqttFlooder{c: c}
}

// commands publishes n commands at QoS 0 to topic, alternately true and
// false.
func (f *mqttFlooder) commands(t *testing.T, topic string, n int) {
	t.Helper()
	for i := range n {
		p := &paho.Publish{Topic: topic, QoS: 0, Payload: []byte(fmt.Sprint(i%2 == 0))}
		if _, err := f.c.Publish(context.Background(), p); err != nil {
			t.Fatalf("flooder publish %d: %v", i, err)
		}
	}
}

// publish sends one message at qos and returns when it was sent.
func (f *mqttFlooder) publish(t *testing.T, topic, payload string, qos byte) time.Time {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	sent := time.Now()
	if _, err := f.c.Publish(ctx, &paho.Publish{Topic: topic, QoS: qos, Payload: []byte(payload)}); err != nil {
		t.Fatalf("flooder publish %s: %v", topic, err)
	}
	return sent
}

// TestBinaryStopMQTTFlood is issue 28's attack: from one MQTT connection,
// 1,500 QoS 0 commands to sim.led, then a stop on <base>/_stop/set (QoS
// 1, as Home Assistant's button sends it), then 1,500 more: 3,000
// commands in flight around the stop. The stop engages within a second
// of its send, each of several runs, while the bridge drops the commands
// it cannot keep (commandsDropped grows: its queue was full when the
// stop came) and the commands after the stop are refused STOPPED.
func TestBinaryStopMQTTFlood(t *testing.T) {
	t.Parallel()
	_, port := startBroker(t, mosquittotest.Options{})
	g, _, _ := mqttGateway(t, mqttAdapter(t), mqttSettings(port, "flood"))
	b := &mqttBench{g: g, id: "flood", port: port, s: subscribe(t, port)}
	b.s.msg(t, 0, q(b.tp.Status(b.id)), "online")
	b.marker(t) // subscribed: commands reach the bridge
	w := watchStops(t, g)
	f := floodMQTT(t, port)
	fig := &stopFigures{path: "MQTT, 3,000 commands around the stop"}
	for run := range stopRuns {
		mark := b.s.out.len()
		f.commands(t, b.tp.Set(b.id, "sim.led"), 1500)
		sent := f.publish(t, b.tp.StopSet(b.id), fmt.Sprintf(`{"reason":"flood run %d"}`, run), 1)
		f.commands(t, b.tp.Set(b.id, "sim.led"), 1500)
		fig.add(t, w.engaged(t, sent))
		b.s.msg(t, mark, q(b.tp.BridgeState(b.id)), `\{.*"commandsDropped":[1-9]\d*[,}].*`)
		b.s.msg(t, mark, q(b.tp.Result(b.id, "sim.led")), `\{"status":"refused".*"name":"STOPPED".*\}`)
		b.drained(t)
		w.none(t)
		resume(t, g)
	}
	fig.report(t)
}

// drained waits until the bridge has run every command it kept: a
// command to sim.fan, sent after them, is answered (applied, or refused
// while the stop holds). A full queue drops it: it is sent again each
// second until it is answered.
func (b *mqttBench) drained(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for {
		mark := b.s.out.len()
		publish(t, b.port, b.tp.Set(b.id, "sim.fan"), "0", false)
		if _, _, err := b.s.out.await(mark, `^[01] `+q(b.tp.Result(b.id, "sim.fan"))+` `, time.Second); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no answer to a command to sim.fan within %s", waitLong)
		}
	}
}

// halPipe is one TCP connection to the Hub, initialized with a token,
// whose answers a reader takes as they come (a client that does not read
// is closed, and that is not what these tests try).
type halPipe struct {
	c       net.Conn
	answers chan halAnswer // the answers to the ids it watches
	watch   map[string]bool
}

// halAnswer is one answer: its id and its error's code and reason, if any.
type halAnswer struct {
	id, reason string
	code       int64
}

// pipeTo connects to g's TCP listener and initializes with tok; the
// answers to the ids in watch go to answers.
func pipeTo(t *testing.T, g *gateway, tok string, watch ...string) *halPipe {
	t.Helper()
	c, err := net.Dial("tcp", g.tcpAddr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	p := &halPipe{c: c, answers: make(chan halAnswer, len(watch)), watch: map[string]bool{}}
	for _, id := range watch {
		p.watch[id] = true
	}
	fmt.Fprintf(c, `{"jsonrpc":"2.0","id":"init","method":"hal/initialize","params":{"protocolVersion":"0.1","clientInfo":{"name":"flooder","version":"1"},"token":%q}}`+"\n", tok)
	fmt.Fprintf(c, `{"jsonrpc":"2.0","method":"hal/initialized"}`+"\n")
	ready := make(chan error, 1)
	go p.read(ready)
	if err := <-ready; err != nil {
		t.Fatal(err)
	}
	return p
}

// read takes every message until the connection ends.
func (p *halPipe) read(ready chan<- error) {
	dec := json.NewDecoder(p.c)
	for {
		var m struct {
			ID    json.RawMessage
			Error *struct {
				Code int64
				Data struct{ Reason string }
			}
		}
		if err := dec.Decode(&m); err != nil {
			if ready != nil {
				ready <- fmt.Errorf("hal/initialize: %w", err)
			}
			return
		}
		id := strings.Trim(string(m.ID), `"`)
		if id == "init" && ready != nil {
			if m.Error != nil {
				ready <- fmt.Errorf("hal/initialize: error %d %s", m.Error.Code, m.Error.Data.Reason)
				return
			}
			ready <- nil
			ready = nil
		}
		if p.watch[id] {
			a := halAnswer{id: id}
			if m.Error != nil {
				a.code, a.reason = m.Error.Code, m.Error.Data.Reason
			}
			p.answers <- a
		}
	}
}

// writes sends n writes of device in one go, alternately true and false,
// with ids w<from>... .
func (p *halPipe) writes(t *testing.T, device string, from, n int) {
	t.Helper()
	var b strings.Builder
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":"w%d","method":"hal/write","params":{"device":%q,"value":%v}}`+"\n", i, device, i%2 == 0)
	}
	if _, err := io.WriteString(p.c, b.String()); err != nil {
		t.Fatalf("pipelined writes: %v", err)
	}
}

// send writes one request line.
func (p *halPipe) send(t *testing.T, line string) time.Time {
	t.Helper()
	sent := time.Now()
	if _, err := io.WriteString(p.c, line+"\n"); err != nil {
		t.Fatalf("send %s: %v", line, err)
	}
	return sent
}

// answer waits for the answer to a watched id.
func (p *halPipe) answer(t *testing.T, id string) halAnswer {
	t.Helper()
	select {
	case a := <-p.answers:
		if a.id != id {
			t.Fatalf("answer to %s came, want %s", a.id, id)
		}
		return a
	case <-time.After(waitLong):
		t.Fatalf("no answer to %s within %s", id, waitLong)
	}
	return halAnswer{}
}

// TestBinaryStopHALPipeline: three control_low connections over TCP each
// pipeline 1,000 writes of sim.led (32 in flight each, the rest BUSY),
// and the first sends hal/stop right after its writes: the stop is never
// refused BUSY for the requests in flight, and it engages within a second
// of its send, its safe value ahead of the writes queued for sim.led
// (which then get STOPPED). A write sent after it is refused. (1,000 a
// connection: each refused write's BUSY answer waits in the connection's
// queue of 1,024 messages, and a connection whose queue overflows is
// closed, spec §8.)
func TestBinaryStopHALPipeline(t *testing.T) {
	t.Parallel()
	g := startGateway(t, t.TempDir())
	agent := g.addToken(t, "flooder", "control_low")
	w := watchStops(t, g)
	fig := &stopFigures{path: "HAL over TCP, 3 connections of 1,000 pipelined writes, hal/stop after the writes on one of them"}
	for run := range stopRuns {
		p := pipeTo(t, g, agent, "stop", "last")
		others := []*halPipe{pipeTo(t, g, agent), pipeTo(t, g, agent)}
		for _, o := range others {
			o.writes(t, "sim.led", 0, 1000)
		}
		p.writes(t, "sim.led", 0, 1000)
		sent := p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":"stop","method":"hal/stop","params":{"reason":"pipeline run %d"}}`, run))
		fig.add(t, w.engaged(t, sent))
		if a := p.answer(t, "stop"); a.code != 0 {
			t.Errorf("run %d: hal/stop answered error %d %s, want the stop", run, a.code, a.reason)
		}
		p.send(t, `{"jsonrpc":"2.0","id":"last","method":"hal/write","params":{"device":"sim.led","value":true}}`)
		if a := p.answer(t, "last"); a.code != openhal.CodeStopped && a.code != openhal.CodeBusy {
			t.Errorf("run %d: a write after the stop answered %d %s, want STOPPED or BUSY", run, a.code, a.reason)
		}
		w.none(t)
		resume(t, g)
		for _, c := range append(others, p) {
			c.c.Close() // one token's connections are bounded (16 by default)
		}
	}
	fig.report(t)
}

// mcpStdio is `gateway mcp` on stdio spoken to line by line, as a flooding
// agent would: the answers to the ids it watches go to answers; the rest
// are read and dropped.
type mcpStdio struct {
	in      io.WriteCloser
	answers chan mcpStdioAnswer
	watch   map[string]bool
}

// mcpStdioAnswer is a tools/call answer: its id, and its text when the
// tool failed.
type mcpStdioAnswer struct {
	id, failure string
}

// startMCPStdio runs `gateway mcp --hub <ws>` as tok and initializes it.
func startMCPStdio(t *testing.T, g *gateway, tok string, watch ...string) *mcpStdio {
	t.Helper()
	cmd := exec.Command(gatewayBinary(t), "mcp", "--hub", g.ws)
	cmd.Env = append(childEnv(), "GATEWAY_TOKEN="+tok)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	m := &mcpStdio{in: in, answers: make(chan mcpStdioAnswer, 16), watch: map[string]bool{"init": true}}
	for _, id := range watch {
		m.watch[id] = true
	}
	go m.read(out)
	m.send(t, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"`+mcpRevision+`","capabilities":{},"clientInfo":{"name":"flooder","version":"1"}}}`)
	m.answer(t, "init")
	m.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return m
}

func (m *mcpStdio) read(out io.Reader) {
	dec := json.NewDecoder(out)
	for {
		var msg struct {
			ID     json.RawMessage
			Result *struct {
				IsError bool
				Content []struct{ Text string }
			}
			Error *struct{ Message string }
		}
		if err := dec.Decode(&msg); err != nil {
			return
		}
		id := strings.Trim(string(msg.ID), `"`)
		if !m.watch[id] {
			continue
		}
		a := mcpStdioAnswer{id: id}
		switch {
		case msg.Error != nil:
			a.failure = "protocol error: " + msg.Error.Message
		case msg.Result != nil && msg.Result.IsError && len(msg.Result.Content) > 0:
			a.failure = msg.Result.Content[0].Text
		case msg.Result != nil && msg.Result.IsError:
			a.failure = "tool error"
		}
		m.answers <- a
	}
}

func (m *mcpStdio) send(t *testing.T, lines string) time.Time {
	t.Helper()
	sent := time.Now()
	if _, err := io.WriteString(m.in, lines+"\n"); err != nil {
		t.Fatalf("gateway mcp's input: %v", err)
	}
	return sent
}

func (m *mcpStdio) answer(t *testing.T, id string) mcpStdioAnswer {
	t.Helper()
	select {
	case a := <-m.answers:
		if a.id != id {
			t.Fatalf("answer to %s came, want %s", a.id, id)
		}
		return a
	case <-time.After(waitLong):
		t.Fatalf("no answer to %s within %s", id, waitLong)
	}
	return mcpStdioAnswer{}
}

// toolCalls is n tools/call lines of name with args, ids <prefix><i>.
func toolCalls(prefix, name string, n int, args func(i int) map[string]any) string {
	var b strings.Builder
	for i := range n {
		line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": fmt.Sprint(prefix, i), "method": "tools/call",
			"params": map[string]any{"name": name, "arguments": args(i)}})
		b.Write(line)
		if i < n-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// ledArgs are write_device's arguments for sim.led, alternately true and
// false.
func ledArgs(i int) map[string]any { return map[string]any{"device": "sim.led", "value": i%2 == 0} }

// TestBinaryStopMCPStdio: an agent on `gateway mcp` (stdio) sends 1,500
// write_device calls, then emergency_stop, then 1,500 more, without
// waiting for any answer: the bridge runs them at once over its one
// connection to the Hub, whose requests in flight they fill. The stop is
// not refused (the Hub keeps it a room beyond the limit) and engages
// within a second of its send; a write after it fails STOPPED.
func TestBinaryStopMCPStdio(t *testing.T) {
	t.Parallel()
	g := startGateway(t, t.TempDir())
	agent := g.addToken(t, "flooder", "control_low")
	w := watchStops(t, g)
	m := startMCPStdio(t, g, agent, "stop", "last")
	fig := &stopFigures{path: "MCP on stdio, 3,000 write_device calls around emergency_stop"}
	for run := range stopRuns {
		m.send(t, toolCalls(fmt.Sprintf("a%d-", run), "write_device", 1500, ledArgs))
		sent := m.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":"stop","method":"tools/call","params":{"name":"emergency_stop","arguments":{"reason":"mcp flood run %d"}}}`, run))
		m.send(t, toolCalls(fmt.Sprintf("b%d-", run), "write_device", 1500, ledArgs))
		fig.add(t, w.engaged(t, sent))
		if a := m.answer(t, "stop"); a.failure != "" {
			t.Errorf("run %d: emergency_stop failed: %s", run, a.failure)
		}
		m.send(t, `{"jsonrpc":"2.0","id":"last","method":"tools/call","params":{"name":"write_device","arguments":{"device":"sim.led","value":true}}}`)
		if a := m.answer(t, "last"); !strings.Contains(a.failure, "STOPPED") && !strings.Contains(a.failure, "busy") {
			t.Errorf("run %d: a write after the stop: %q, want STOPPED (or busy)", run, a.failure)
		}
		w.none(t)
		resume(t, g)
	}
	fig.report(t)
}

// mcpPoster posts to /mcp on one keep-alive connection of its own, as
// tok in session.
type mcpPoster struct {
	hc                *http.Client
	url, tok, session string
}

func newMCPPoster(g *gateway, tok, session string) *mcpPoster {
	return &mcpPoster{
		hc:  &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1}},
		url: "http://" + g.httpAddr + "/mcp", tok: tok, session: session,
	}
}

// post sends body and returns the answer's JSON-RPC message.
func (p *mcpPoster) post(ctx context.Context, body string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, strings.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+p.tok)
	req.Header.Set("Mcp-Session-Id", p.session)
	req.Header.Set("Mcp-Protocol-Version", mcpRevision)
	resp, err := p.hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%d %s", resp.StatusCode, b)
	}
	return mcpAnswer{code: resp.StatusCode, body: string(b)}.message(), nil
}

// TestBinaryStopMCPHTTP: twelve keep-alive connections of one agent call
// write_device on one /mcp session, each as fast as it is answered, and
// emergency_stop comes on the same session from a thirteenth: it engages
// within a second of its send, and the writes after it fail STOPPED.
func TestBinaryStopMCPHTTP(t *testing.T) {
	t.Parallel()
	g := startGateway(t, t.TempDir(), "--mcp")
	agent := g.addToken(t, "flooder", "control_low")
	session := mcpSession(t, g, agent)
	w := watchStops(t, g)

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var calls atomic.Int64
	defer func() { cancel(); wg.Wait() }()
	for i := range 12 {
		p := newMCPPoster(g, agent, session)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ctx.Err() == nil; n++ {
				if _, err := p.post(ctx, toolCallID(fmt.Sprintf("f%d-%d", i, n), "write_device", ledArgs(i+n))); err == nil {
					calls.Add(1)
				}
			}
		}()
	}
	stopper := newMCPPoster(g, agent, session)
	fig := &stopFigures{path: "MCP over /mcp, 12 connections calling write_device on the session"}
	for run := range stopRuns {
		from := calls.Load()
		waitFor(t, "the flood to be under way", func() bool { return calls.Load() >= from+100 })
		sent := time.Now()
		answer, err := stopper.post(ctx, toolCallID(fmt.Sprint("stop", run), "emergency_stop", map[string]any{"reason": fmt.Sprintf("mcp http run %d", run)}))
		if err != nil || !strings.Contains(answer, `"stopped":true`) || strings.Contains(answer, `"isError":true`) {
			t.Fatalf("run %d: emergency_stop answered %v %.300s", run, err, answer)
		}
		fig.add(t, w.engaged(t, sent))
		answer, err = stopper.post(ctx, toolCallID(fmt.Sprint("last", run), "write_device", map[string]any{"device": "sim.led", "value": true}))
		if err != nil || !strings.Contains(answer, "STOPPED") {
			t.Errorf("run %d: a write after the stop: %v %.300s, want STOPPED", run, err, answer)
		}
		w.none(t)
		resume(t, g)
	}
	fig.report(t)
}

// toolCallID is the body of a tools/call request with the given id.
func toolCallID(id, name string, args map[string]any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": name, "arguments": args}})
	return string(b)
}

// waitFor polls cond until it holds, failing the test past waitLong.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, waitLong)
		}
		<-time.After(5 * time.Millisecond)
	}
}

// floodWrites keeps n connections of tok writing sim.led in batches of 500
// pipelined writes, each batch read back before the next, until the test
// ends. It returns a counter of the batches done.
func floodWrites(t *testing.T, g *gateway, tok string, n int) *atomic.Int64 {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var pipes []*halPipe
	t.Cleanup(func() {
		cancel()
		for _, p := range pipes {
			p.c.Close() // a write blocked on a full socket returns
		}
		wg.Wait()
	})
	batches := &atomic.Int64{}
	for range n {
		p := pipeTo(t, g, tok, "mark")
		pipes = append(pipes, p)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i += 500 {
				var b strings.Builder
				for j := i; j < i+500; j++ {
					fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":"w%d","method":"hal/write","params":{"device":"sim.led","value":%v}}`+"\n", j, j%2 == 0)
				}
				b.WriteString(`{"jsonrpc":"2.0","id":"mark","method":"hal/ping"}` + "\n")
				if _, err := io.WriteString(p.c, b.String()); err != nil {
					return
				}
				select {
				case <-p.answers:
					batches.Add(1)
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	return batches
}

// holdConnections opens n initialized connections of tok that do nothing
// more, as agents keeping their sessions open.
func holdConnections(t *testing.T, g *gateway, tok string, n int) {
	t.Helper()
	for range n {
		pipeTo(t, g, tok)
	}
}

// TestBinaryStopCLIFlood: while four agent connections flood sim.led with
// pipelined writes and forty more agent connections sit open, the
// operator's `gateway stop` (a process of its own, admin token from the
// state directory) engages the stop within a second of its start.
func TestBinaryStopCLIFlood(t *testing.T) {
	t.Parallel()
	g := startGateway(t, t.TempDir())
	w := watchStops(t, g)
	for i := range 4 {
		holdConnections(t, g, g.addToken(t, fmt.Sprint("idle", i), "control_low"), 10)
	}
	batches := floodWrites(t, g, g.addToken(t, "flooder", "control_low"), 4)
	fig := &stopFigures{path: "gateway stop (the CLI, process start included), 4 connections flooding writes, 40 more open"}
	for run := range stopRuns {
		from := batches.Load()
		waitFor(t, "the flood to be under way", func() bool { return batches.Load() >= from+4 })
		sent := time.Now()
		out := gwOK(t, g.admin("stop", "--reason", fmt.Sprint("cli flood run ", run))...)
		fig.add(t, w.engaged(t, sent))
		if !strings.HasPrefix(out, "emergency stop engaged: ") {
			t.Errorf("run %d: gateway stop printed %q", run, out)
		}
		w.none(t)
		resume(t, g)
	}
	fig.report(t)
}

// TestBinaryStopButtonFlood: sim.button is the stop button
// (`stopButton`); while four agent connections flood sim.led with
// pipelined writes, an admin presses it (a write of true, the sim board's
// outside world): the stop engages within a second of the press, and is
// not lifted while the button is held.
func TestBinaryStopButtonFlood(t *testing.T) {
	t.Parallel()
	g := startGateway(t, t.TempDir(), "--config", writeConfig(t, "board: sim\nstopButton: sim.button\n"))
	w := watchStops(t, g)
	batches := floodWrites(t, g, g.addToken(t, "flooder", "control_low"), 4)
	admin := pipeTo(t, g, adminToken(t, g), "press", "release")
	fig := &stopFigures{path: "the stop button (sim.button pressed), 4 connections flooding writes"}
	for run := range stopRuns {
		from := batches.Load()
		waitFor(t, "the flood to be under way", func() bool { return batches.Load() >= from+4 })
		sent := admin.send(t, `{"jsonrpc":"2.0","id":"press","method":"hal/write","params":{"device":"sim.button","value":true}}`)
		fig.add(t, w.engaged(t, sent))
		if a := admin.answer(t, "press"); a.code != 0 {
			t.Fatalf("run %d: pressing the button: error %d %s", run, a.code, a.reason)
		}
		if r := gw(t, g.admin("resume")...); r.code == 0 || !strings.Contains(r.stderr, "sim.button") {
			t.Errorf("run %d: resume while the button is held: exit %d, %q; want refused, naming sim.button", run, r.code, r.stderr)
		}
		admin.send(t, `{"jsonrpc":"2.0","id":"release","method":"hal/write","params":{"device":"sim.button","value":false}}`)
		if a := admin.answer(t, "release"); a.code != 0 {
			t.Fatalf("run %d: releasing the button: error %d %s", run, a.code, a.reason)
		}
		w.none(t)
		resume(t, g)
	}
	fig.report(t)
}
