package main

// Whole-binary tests of the stop's own lane (issue 28): on every path
// that carries an emergency stop — MQTT, a HAL connection, MCP, the CLI,
// the console, a stop button — a stop sent in the middle of a flood of
// writes engages within a second, as an observer with a connection of
// its own sees it (hal/stopped). Each test measures the time from the
// stop's send to hal/stopped over several runs and logs the figures
// (go test -v -run 'TestBinaryStop' ./cmd/gateway).

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/openhal/gateway/mqttbridge/mosquittotest"
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
	}
	fig.report(t)
}
