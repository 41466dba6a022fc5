package halclient_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gateway/clock/clocktest"
	"gateway/device"
	"gateway/halhub"
	"gateway/halhub/token"
	"gateway/openhal"
)

// The client's tests run against the gateway's real Hub (package halhub),
// over real loopback TCP, WebSocket and Unix sockets, serving a small bench
// of devices from a real device.Registry. A test fakes only what that Hub
// cannot do at all, in the test itself.

// benchTime is the bench's clock, which never moves: values are stamped
// with it and never age, so that what a test reads does not depend on how
// fast it runs.
var benchTime = time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)

// testHub is a real Hub with its token store, a bench of devices, and the
// listeners it serves. restart replaces the Hub with a new one (a new
// bootId) on the same addresses, as a restarted gateway would be; down
// and up take the same Hub off the network and back.
type testHub struct {
	t            *testing.T
	opt          halhub.Options
	store        *token.Store
	admin, agent string // tokens: operator "admin" (admin), agent "bench-agent" (control.low)
	wire         *wire

	hub   *halhub.Hub
	reg   *device.Registry
	bench map[string]*benchDevice
	addrs map[string]string // transport → the address it listens on
	lns   []net.Listener
}

// newTestHub starts a Hub over the bench, listening nowhere yet (see
// listen). configure may change its options.
func newTestHub(t *testing.T, configure ...func(*halhub.Options)) *testHub {
	t.Helper()
	opt := halhub.Options{Version: "test", Limits: halhub.DefaultLimits(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, c := range configure {
		c(&opt)
	}
	h := &testHub{t: t, opt: opt, store: token.Open(t.TempDir()), wire: newWire(), addrs: map[string]string{}}
	h.admin = h.token(t, "admin", openhal.KindOperator, openhal.ScopeAdmin)
	h.agent = h.token(t, "bench-agent", openhal.KindAgent, openhal.ScopeControlLow)
	h.start()
	t.Cleanup(func() { h.down(); h.hub.Close() })
	return h
}

// token adds a token to the store and hands the store to the Hub, as the
// gateway does when the token file changes.
func (h *testHub) token(t *testing.T, name, kind string, scope openhal.Scope, devices ...string) string {
	t.Helper()
	tok, err := h.store.Add(name, kind, scope, devices)
	if err != nil {
		t.Fatal(err)
	}
	if h.hub != nil {
		h.loadTokens()
	}
	return tok
}

func (h *testHub) loadTokens() {
	tab, err := h.store.Load()
	if err != nil {
		h.t.Fatal(err)
	}
	h.hub.SetTokens(tab)
}

// start makes a new run: a registry with a fresh bench, whose values take
// seq 1 to 4, and a Hub over it.
func (h *testHub) start() {
	clk := clocktest.NewFake(benchTime)
	h.reg = device.NewRegistry(clk.Now)
	h.bench = newBench(h.t, h.reg, clk.Now)
	h.hub = halhub.New(h.reg, h.opt)
	h.loadTokens()
}

// listen serves transport ("ws", "tcp" or "unix") and returns its URL.
func (h *testHub) listen(transport string) string {
	h.t.Helper()
	addr := "127.0.0.1:0"
	if transport == "unix" {
		addr = filepath.Join(h.t.TempDir(), "hal.sock")
	}
	h.addrs[transport] = h.serve(transport, addr)
	switch transport {
	case "ws":
		return "ws://" + h.addrs[transport] + "/hal"
	case "tcp":
		return "tcp://" + h.addrs[transport]
	}
	return "unix://" + h.addrs[transport]
}

// serve listens at addr with the current Hub and returns the address.
func (h *testHub) serve(transport, addr string) string {
	h.t.Helper()
	network := "tcp"
	if transport == "unix" {
		network = "unix"
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		h.t.Fatalf("listen on %s (again): %v", addr, err)
	}
	h.lns = append(h.lns, ln)
	wl := &wireListener{Listener: ln, w: h.wire, ws: transport == "ws"}
	if transport == "ws" {
		srv := &http.Server{Handler: h.hub.Handler(halhub.HTTPOptions{})}
		go srv.Serve(wl)
	} else {
		go h.hub.ServeLines(wl)
	}
	return ln.Addr().String()
}

// down takes the Hub off the network: its listeners close and every
// connection is cut. The Hub itself runs on.
func (h *testHub) down() {
	for _, ln := range h.lns {
		ln.Close()
	}
	h.lns = nil
	h.wire.cut()
}

// up listens again where the Hub listened before down.
func (h *testHub) up() {
	for tr, addr := range h.addrs {
		h.serve(tr, addr)
	}
}

// restart stops the Hub and starts a new one, with a new bootId and a new
// bench, on the same addresses and with the same tokens.
func (h *testHub) restart() {
	h.down()
	h.hub.Close()
	h.start()
	h.up()
}

// set gives a bench device a new value, which it reports as a device
// reports an edge or a measurement.
func (h *testHub) set(id string, v any) {
	h.t.Helper()
	d, ok := h.bench[id]
	if !ok {
		h.t.Fatalf("no bench device %s", id)
	}
	d.set(v)
}

// add registers one more device and returns it.
func (h *testHub) add(d device.Device) device.Reporter {
	h.t.Helper()
	rep, err := h.reg.Add(d)
	if err != nil {
		h.t.Fatal(err)
	}
	return rep
}

// benchDevice is a device of the bench. Its value is kept here too, so
// that a sensor's Read returns what it last reported.
type benchDevice struct {
	desc device.Descriptor
	now  func() time.Time
	rep  device.Reporter

	mu sync.Mutex
	v  any
}

func (d *benchDevice) Descriptor() device.Descriptor { return d.desc }

func (d *benchDevice) set(v any) {
	d.mu.Lock()
	d.v = v
	d.mu.Unlock()
	d.rep.Value(v, d.now())
}

// output is a writable bench device: its value is what was last written.
type output struct{ *benchDevice }

func (o output) Write(_ context.Context, req device.WriteRequest) (device.WriteResult, error) {
	o.mu.Lock()
	o.v = req.Value
	o.mu.Unlock()
	return device.WriteResult{}, nil
}

// sensor is a bench device that measures on demand: an input pin, a
// thermometer.
type sensor struct{ *benchDevice }

func (s sensor) Read(context.Context) (device.Reading, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return device.Reading{Value: s.v, TS: s.now()}, nil
}

// newBench registers the bench in reg and reports the initial values:
// sim.led seq 1, sim.door seq 2, sim.heater seq 3, sim.temperature seq 4.
func newBench(t *testing.T, reg *device.Registry, now func() time.Time) map[string]*benchDevice {
	boolean := device.Schema{Type: device.TypeBoolean}
	temp := device.Schema{Type: device.TypeObject, Properties: map[string]device.Schema{
		"temperature": {Type: device.TypeNumber, Unit: "Cel"},
	}}
	bench := map[string]*benchDevice{}
	var order []*benchDevice
	for _, b := range []struct {
		desc    device.Descriptor
		initial any
	}{
		{device.Descriptor{ID: "sim.led", Kind: device.KindGPIOOutput, Access: device.AccessReadWrite, Risk: device.RiskLow, Schema: boolean}, false},
		{device.Descriptor{ID: "sim.door", Kind: device.KindGPIOInput, Access: device.AccessRead, Risk: device.RiskLow, Schema: boolean}, false},
		{device.Descriptor{ID: "sim.heater", Kind: device.KindGPIOOutput, Access: device.AccessReadWrite, Risk: device.RiskHigh, Schema: boolean, Safe: false}, false},
		{device.Descriptor{ID: "sim.temperature", Kind: device.KindSensor, Access: device.AccessRead, Risk: device.RiskLow, Schema: temp}, map[string]any{"temperature": 20.5}},
	} {
		b.desc.Source, b.desc.State = "sim", device.StateOK
		d := &benchDevice{desc: b.desc, now: now, v: b.initial}
		var dev device.Device = sensor{d}
		if b.desc.Access.CanWrite() {
			dev = output{d}
		}
		rep, err := reg.Add(dev)
		if err != nil {
			t.Fatal(err)
		}
		d.rep = rep
		bench[b.desc.ID] = d
		order = append(order, d)
	}
	for _, d := range order {
		d.set(d.v)
	}
	return bench
}

// wire sees what clients send to the Hub: it hands each connection to the
// Hub unchanged, and splits a copy of the bytes the Hub reads into
// messages (lines, or the text frames after a WebSocket upgrade), so that a
// test can check what the client sent and when a connection ended.
type wire struct {
	mu      sync.Mutex
	conns   []*wireConn
	changed chan struct{}
}

func newWire() *wire { return &wire{changed: make(chan struct{})} }

// connSeen is what the Hub received on one connection.
type connSeen struct {
	bearer string        // the WebSocket upgrade's bearer token
	msgs   []wireMessage // in order
	ended  bool
}

type wireMessage struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func (c connSeen) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "{bearer %q, ended %v:", c.bearer, c.ended)
	for _, m := range c.msgs {
		fmt.Fprintf(&b, " %s %s", m.Method, m.Params)
	}
	return b.String() + "}"
}

// count returns how many messages named method arrived.
func (c connSeen) count(method string) int {
	n := 0
	for _, m := range c.msgs {
		if m.Method == method {
			n++
		}
	}
	return n
}

// waitFor waits until ok holds for the connections seen so far, in the
// order they were accepted, or fails the test after 10 s.
func (w *wire) waitFor(t *testing.T, what string, ok func([]connSeen) bool) []connSeen {
	t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for {
		w.mu.Lock()
		seen := make([]connSeen, len(w.conns))
		for i, c := range w.conns {
			seen[i] = connSeen{bearer: c.bearer, msgs: append([]wireMessage(nil), c.msgs...), ended: c.ended}
		}
		ch := w.changed
		w.mu.Unlock()
		if ok(seen) {
			return seen
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("waited 10 s for %s; seen %v", what, seen)
		}
	}
}

// allEnded reports whether every connection has ended.
func allEnded(seen []connSeen) bool {
	for _, c := range seen {
		if !c.ended {
			return false
		}
	}
	return true
}

// changedLocked wakes waitFor; w.mu is held.
func (w *wire) changedLocked() {
	close(w.changed)
	w.changed = make(chan struct{})
}

// cut closes every connection under the Hub, as a network that goes away.
func (w *wire) cut() {
	w.mu.Lock()
	conns := append([]*wireConn(nil), w.conns...)
	w.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

type wireListener struct {
	net.Listener
	w  *wire
	ws bool
}

func (l *wireListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	c := &wireConn{Conn: nc, w: l.w, ws: l.ws}
	l.w.mu.Lock()
	l.w.conns = append(l.w.conns, c)
	l.w.changedLocked()
	l.w.mu.Unlock()
	return c, nil
}

// wireConn is one connection as the Hub sees it. Fields other than Conn
// and ws are guarded by w.mu.
type wireConn struct {
	net.Conn
	w  *wire
	ws bool

	buf      []byte // read, not yet split into messages
	upgraded bool   // the WebSocket upgrade request has been read
	bearer   string
	msgs     []wireMessage
	ended    bool
}

func (c *wireConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.w.mu.Lock()
		c.buf = append(c.buf, p[:n]...)
		c.split()
		c.w.changedLocked()
		c.w.mu.Unlock()
	}
	return n, err
}

func (c *wireConn) Close() error {
	c.w.mu.Lock()
	c.ended = true
	c.w.changedLocked()
	c.w.mu.Unlock()
	return c.Conn.Close()
}

// split takes whole messages off buf.
func (c *wireConn) split() {
	for {
		var msg []byte
		switch {
		case !c.ws:
			i := bytes.IndexByte(c.buf, '\n')
			if i < 0 {
				return
			}
			msg, c.buf = c.buf[:i], c.buf[i+1:]
		case !c.upgraded:
			i := bytes.Index(c.buf, []byte("\r\n\r\n"))
			if i < 0 {
				return
			}
			if r, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(c.buf[:i+4]))); err == nil {
				c.bearer = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
			}
			c.buf, c.upgraded = c.buf[i+4:], true
			continue
		default:
			op, payload, n := clientFrame(c.buf)
			if n == 0 {
				return
			}
			c.buf = c.buf[n:]
			if op != 1 { // not a text frame: close, ping, pong
				continue
			}
			msg = payload
		}
		var m wireMessage
		json.Unmarshal(msg, &m) // a message that is not JSON counts, unnamed
		c.msgs = append(c.msgs, m)
	}
}

// clientFrame decodes the WebSocket frame (RFC 6455 §5.2) at the start of
// b, as a client sends it: masked, and whole, since this client sends each
// message in one frame. n is 0 until the frame is complete.
func clientFrame(b []byte) (opcode byte, payload []byte, n int) {
	if len(b) < 2 {
		return 0, nil, 0
	}
	size, i := uint64(b[1]&0x7f), 2
	switch size {
	case 126:
		if len(b) < 4 {
			return 0, nil, 0
		}
		size, i = uint64(binary.BigEndian.Uint16(b[2:])), 4
	case 127:
		if len(b) < 10 {
			return 0, nil, 0
		}
		size, i = binary.BigEndian.Uint64(b[2:]), 10
	}
	var mask []byte
	if b[1]&0x80 != 0 {
		if len(b) < i+4 {
			return 0, nil, 0
		}
		mask, i = b[i:i+4], i+4
	}
	if uint64(len(b)-i) < size {
		return 0, nil, 0
	}
	payload = append([]byte(nil), b[i:i+int(size)]...)
	for j := range payload {
		if mask != nil {
			payload[j] ^= mask[j%4]
		}
	}
	return b[0] & 0x0f, payload, i + int(size)
}
