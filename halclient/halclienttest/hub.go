// Package halclienttest provides a small OpenHAL Hub for the tests of
// OpenHAL clients (package halclient, the CLI), as net/http/httptest does
// for HTTP. It speaks just enough of the protocol (initialize,
// devices/list, read, write, ping, value notifications) over real loopback
// sockets, and lets a test restart it, take it down, skip seq numbers and
// see what the client sent. It is not the gateway's Hub (package halhub)
// and shares no code with it, so that a client test cannot pass by
// sharing a bug with the Hub.
package halclienttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"gateway/device"
	"gateway/jsonrpc"
	"gateway/openhal"
)

// Tokens the Hub knows.
const (
	AdminToken = "admin-token"
	AgentToken = "agent-token"
)

// Init is one hal/initialize the Hub received.
type Init struct {
	Bearer string // the WebSocket Authorization header's token
	Params openhal.InitializeParams
}

// Seen is what the Hub saw of its clients, for tests to check.
type Seen struct {
	Inits       []Init
	Initialized int // hal/initialized notifications
	Shutdowns   int // hal/shutdown notifications
	Ended       int // connections that ended
	Open        int // connections open now
}

// Hub is the test hub. Its methods may be called from any goroutine.
type Hub struct {
	t       testing.TB
	pub     sync.Mutex // orders seq and the notifications that carry it
	mu      sync.Mutex
	bootID  string
	version string // answered protocolVersion; "" answers the client's
	seq     uint64
	devices []device.Descriptor
	values  map[string]openhal.ValueResult
	conns   map[*conn]struct{}
	down    bool
	seen    Seen
	hold    int     // hal/ping requests to hold before answering them all
	held    []*held // in arrival order
	changed chan struct{}
}

type held struct {
	c      *conn
	id     json.RawMessage
	params json.RawMessage
}

// New returns a Hub with a small sim bench, in the run bootID.
func New(t testing.TB, bootID string) *Hub {
	h := &Hub{t: t, conns: map[*conn]struct{}{}, changed: make(chan struct{})}
	h.reset(bootID)
	return h
}

func schema(typ string) device.Schema { return device.Schema{Type: typ} }

// reset starts a new run: a new bootId and seq counting from the start.
func (h *Hub) reset(bootID string) {
	temp := device.Schema{Type: device.TypeObject, Properties: map[string]device.Schema{
		"temperature": {Type: device.TypeNumber, Unit: "Cel"},
	}}
	h.bootID = bootID
	h.devices = []device.Descriptor{
		{ID: "sim.led", Kind: device.KindGPIOOutput, Source: "sim", Access: device.AccessReadWrite, Risk: device.RiskLow, Schema: schema(device.TypeBoolean), State: device.StateOK},
		{ID: "sim.door", Kind: device.KindGPIOInput, Source: "sim", Access: device.AccessRead, Risk: device.RiskLow, Schema: schema(device.TypeBoolean), State: device.StateOK},
		{ID: "sim.heater", Kind: device.KindGPIOOutput, Source: "sim", Access: device.AccessReadWrite, Risk: device.RiskHigh, Schema: schema(device.TypeBoolean), Safe: false, State: device.StateOK},
		{ID: "sim.temperature", Kind: device.KindSensor, Source: "sim", Access: device.AccessRead, Risk: device.RiskLow, Schema: temp, State: device.StateOK},
	}
	ts := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	h.values = map[string]openhal.ValueResult{}
	h.seq = 0
	for _, v := range []struct {
		id string
		v  any
	}{{"sim.led", false}, {"sim.door", false}, {"sim.heater", false}, {"sim.temperature", map[string]any{"temperature": 20.5}}} {
		h.seq++
		h.values[v.id] = openhal.ValueResult{Device: v.id, Value: v.v, TS: ts, Seq: h.seq}
	}
}

// changedLocked wakes WaitFor; h.mu is held.
func (h *Hub) changedLocked() {
	close(h.changed)
	h.changed = make(chan struct{})
}

// WaitFor waits until ok holds for what the Hub has seen, or fails the test
// after 10 s.
func (h *Hub) WaitFor(what string, ok func(Seen) bool) Seen {
	h.t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for {
		h.mu.Lock()
		s, ch := h.seen, h.changed
		s.Inits = append([]Init(nil), s.Inits...)
		h.mu.Unlock()
		if ok(s) {
			return s
		}
		select {
		case <-ch:
		case <-deadline.C:
			h.t.Fatalf("halclienttest: waited 10 s for %s; seen %+v", what, s)
		}
	}
}

// Seen returns what the Hub has seen so far.
func (h *Hub) Seen() Seen {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.seen
	s.Inits = append([]Init(nil), s.Inits...)
	return s
}

// SetVersion makes the Hub answer hal/initialize with version v.
func (h *Hub) SetVersion(v string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.version = v
}

// HoldPings holds the next n hal/ping requests and answers them all, last
// first, once the n-th has arrived: a client must match answers by id.
func (h *Hub) HoldPings(n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.hold = n
}

// Seq returns the Hub's seq counter.
func (h *Hub) Seq() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seq
}

// SetDown takes the Hub down (every connection is closed, new ones are
// refused) or brings it back up.
func (h *Hub) SetDown(down bool) {
	h.mu.Lock()
	h.down = down
	conns := h.connsLocked()
	h.mu.Unlock()
	if down {
		for _, c := range conns {
			c.close()
		}
	}
}

// Restart closes every connection and starts a new run with bootID: seq
// and values start again.
func (h *Hub) Restart(bootID string) {
	h.pub.Lock()
	h.mu.Lock()
	h.reset(bootID)
	conns := h.connsLocked()
	h.mu.Unlock()
	h.pub.Unlock()
	for _, c := range conns {
		c.close()
	}
}

// Drop closes every connection; the Hub stays up.
func (h *Hub) Drop() {
	h.mu.Lock()
	conns := h.connsLocked()
	h.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
}

// SkipSeq moves seq on by n without telling anyone, as when the Hub
// coalesces values for a slow client.
func (h *Hub) SkipSeq(n uint64) {
	h.pub.Lock()
	defer h.pub.Unlock()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq += n
}

// Publish sets a device's value and sends hal/value to every ready
// connection. It returns the value's seq.
func (h *Hub) Publish(id string, v any) uint64 {
	h.pub.Lock()
	defer h.pub.Unlock()
	h.mu.Lock()
	h.seq++
	val := openhal.ValueResult{Device: id, Value: v, TS: time.Now().UTC(), Seq: h.seq}
	h.values[id] = val
	conns := h.connsLocked()
	h.mu.Unlock()
	msg, err := jsonrpc.AppendNotification(nil, openhal.NotifyValue, val)
	if err != nil {
		panic(err)
	}
	for _, c := range conns {
		if c.isReady() {
			c.send(msg)
		}
	}
	return val.Seq
}

// Notify sends any notification to every ready connection.
func (h *Hub) Notify(method string, params any) {
	msg, err := jsonrpc.AppendNotification(nil, method, params)
	if err != nil {
		panic(err)
	}
	h.mu.Lock()
	conns := h.connsLocked()
	h.mu.Unlock()
	for _, c := range conns {
		if c.isReady() {
			c.send(msg)
		}
	}
}

func (h *Hub) connsLocked() []*conn {
	out := make([]*conn, 0, len(h.conns))
	for c := range h.conns {
		out = append(out, c)
	}
	return out
}

// ListenTCP serves the line transport on a loopback TCP port and returns
// its tcp:// URL.
func (h *Hub) ListenTCP() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		h.t.Fatal(err)
	}
	h.serveLines(l)
	return "tcp://" + l.Addr().String()
}

// ListenUnix serves the line transport on a Unix socket in a temporary
// directory and returns its unix:// URL.
func (h *Hub) ListenUnix() string {
	path := filepath.Join(h.t.TempDir(), "hal.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		h.t.Fatal(err)
	}
	h.serveLines(l)
	return "unix://" + path
}

func (h *Hub) serveLines(l net.Listener) {
	h.t.Cleanup(func() { l.Close(); h.Drop() })
	go func() {
		for {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			h.mu.Lock()
			down := h.down
			h.mu.Unlock()
			if down {
				nc.Close()
				continue
			}
			lr := jsonrpc.NewLineReader(nc, 1<<20)
			c := &conn{
				read:  func() ([]byte, error) { return lr.Next() },
				write: func(b []byte) error { _, err := nc.Write(append(b, '\n')); return err },
				end:   func() { nc.Close() },
			}
			go h.serve(c)
		}
	}()
}

// ServeWebSocket serves GET /hal on an HTTP test server and returns its
// ws:// URL. A Hub that is down answers 503.
func (h *Hub) ServeWebSocket() string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/hal" {
			http.NotFound(w, r)
			return
		}
		h.mu.Lock()
		down := h.down
		h.mu.Unlock()
		if down {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		ws.SetReadLimit(1 << 20)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		c := &conn{
			bearer: strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "),
			read: func() ([]byte, error) {
				typ, b, err := ws.Read(ctx)
				if err == nil && typ != websocket.MessageText {
					return nil, errors.New("a binary frame: messages go in text frames")
				}
				return b, err
			},
			write: func(b []byte) error { return ws.Write(ctx, websocket.MessageText, b) },
			end:   func() { ws.CloseNow() },
		}
		h.serve(c)
	}))
	h.t.Cleanup(func() { h.Drop(); srv.Close() })
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/hal"
}

// conn is one client connection.
type conn struct {
	bearer string
	read   func() ([]byte, error)
	write  func([]byte) error
	end    func()

	wmu       sync.Mutex
	mu        sync.Mutex
	init      bool
	ready     bool
	principal openhal.Principal
	closeOnce sync.Once
}

func (c *conn) send(msg []byte) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.write(msg) != nil {
		c.close()
	}
}

func (c *conn) close() { c.closeOnce.Do(c.end) }

func (c *conn) isReady() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ready
}

func (h *Hub) serve(c *conn) {
	h.mu.Lock()
	h.conns[c] = struct{}{}
	h.seen.Open++
	h.changedLocked()
	h.mu.Unlock()
	defer func() {
		c.close()
		h.mu.Lock()
		delete(h.conns, c)
		h.seen.Open--
		h.seen.Ended++
		h.changedLocked()
		h.mu.Unlock()
	}()
	for {
		b, err := c.read()
		if err != nil {
			return
		}
		h.handle(c, b)
	}
}

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

func (h *Hub) handle(c *conn, b []byte) {
	var m request
	if err := json.Unmarshal(b, &m); err != nil || m.JSONRPC != "2.0" {
		c.send(jsonrpc.AppendError(nil, nil, fail(jsonrpc.CodeInvalidRequest, "bad_jsonrpc", "not a JSON-RPC 2.0 message: %s", b)))
		return
	}
	if m.ID == nil {
		h.notification(c, m.Method)
		return
	}
	res, e := h.request(c, m)
	if e == nil && res == nil {
		return // held
	}
	if e != nil {
		c.send(jsonrpc.AppendError(nil, m.ID, e))
		return
	}
	out, err := jsonrpc.AppendResult(nil, m.ID, res)
	if err != nil {
		panic(err)
	}
	c.send(out)
}

func (h *Hub) notification(c *conn, method string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch method {
	case openhal.NotifyInitialized:
		h.seen.Initialized++
		c.mu.Lock()
		c.ready = c.init
		c.mu.Unlock()
	case openhal.NotifyShutdown:
		h.seen.Shutdowns++
	}
	h.changedLocked()
}

func fail(code int64, reason, format string, args ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: code, Message: fmt.Sprintf(format, args...), Data: map[string]any{"reason": reason}}
}

func (h *Hub) request(c *conn, m request) (any, *jsonrpc.Error) {
	if m.Method == openhal.MethodInitialize {
		return h.initialize(c, m.Params)
	}
	c.mu.Lock()
	ok, p := c.init, c.principal
	c.mu.Unlock()
	if !ok {
		return nil, fail(openhal.CodeNotInitialized, "not_initialized", "send hal/initialize first")
	}
	switch m.Method {
	case openhal.MethodPing:
		return h.ping(c, m.ID, m.Params)
	case openhal.MethodDevicesList:
		h.mu.Lock()
		defer h.mu.Unlock()
		return openhal.DevicesListResult{Devices: append([]device.Descriptor(nil), h.devices...)}, nil
	case openhal.MethodRead:
		return h.read(m.Params)
	case openhal.MethodWrite:
		return h.write(p, m.Params)
	}
	return nil, fail(openhal.CodeMethodNotFound, "method_not_found", "method %q not found", m.Method)
}

func (h *Hub) initialize(c *conn, raw json.RawMessage) (any, *jsonrpc.Error) {
	var p openhal.InitializeParams
	if err := json.Unmarshal(raw, &p); err != nil || p.ProtocolVersion == nil || p.ClientInfo == nil {
		return nil, fail(openhal.CodeInvalidParams, "bad_params", "protocolVersion and clientInfo are required")
	}
	h.mu.Lock()
	h.seen.Inits = append(h.seen.Inits, Init{Bearer: c.bearer, Params: p})
	h.changedLocked()
	version, boot := h.version, h.bootID
	h.mu.Unlock()
	tok := c.bearer
	if p.Token != nil {
		if tok != "" && tok != *p.Token {
			return nil, fail(openhal.CodeUnauthorized, "token_conflict", "the bearer token and params.token differ")
		}
		tok = *p.Token
	}
	var pr openhal.Principal
	switch tok {
	case "":
		return nil, fail(openhal.CodeUnauthorized, "token_missing", "a token is required")
	case AdminToken:
		pr = openhal.Principal{Kind: openhal.KindOperator, Name: "admin", Scope: openhal.ScopeAdmin}
	case AgentToken:
		pr = openhal.Principal{Kind: openhal.KindAgent, Name: "bench-agent", Scope: openhal.ScopeControlLow}
	default:
		return nil, fail(openhal.CodeUnauthorized, "token_unknown", "unknown or revoked token")
	}
	if version == "" {
		version = *p.ProtocolVersion
	}
	c.mu.Lock()
	c.init, c.principal = true, pr
	c.mu.Unlock()
	return openhal.InitializeResult{
		ProtocolVersion: version,
		HubInfo:         openhal.HubInfo{Name: "testhub", Version: "0.0.1"},
		Conformance:     openhal.LevelFull,
		Principal:       pr,
		Capabilities:    openhal.Capabilities{Notifications: openhal.LevelFull.Notifications()},
		BootID:          boot,
	}, nil
}

// ping answers at once, or holds the request (see HoldPings). A held
// ping is answered with its own params, so that a client can check that
// each answer reached the call that asked.
func (h *Hub) ping(c *conn, id, params json.RawMessage) (any, *jsonrpc.Error) {
	h.mu.Lock()
	if h.hold == 0 {
		h.mu.Unlock()
		return struct{}{}, nil
	}
	h.held = append(h.held, &held{c: c, id: id, params: params})
	if len(h.held) < h.hold {
		h.mu.Unlock()
		return nil, nil
	}
	all := h.held
	h.held, h.hold = nil, 0
	h.mu.Unlock()
	for i := len(all) - 1; i >= 0; i-- {
		out, _ := jsonrpc.AppendResult(nil, all[i].id, all[i].params)
		all[i].c.send(out)
	}
	return nil, nil
}

func (h *Hub) find(id string) (device.Descriptor, bool) {
	for _, d := range h.devices {
		if d.ID == id {
			return d, true
		}
	}
	return device.Descriptor{}, false
}

func notFound(id string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: openhal.CodeDeviceNotFound, Message: fmt.Sprintf("no device %q", id),
		Data: map[string]any{"reason": "device_not_found", "device": id}}
}

func (h *Hub) read(raw json.RawMessage) (any, *jsonrpc.Error) {
	var p openhal.ReadParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fail(openhal.CodeInvalidParams, "bad_params", "params: %v", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	d, ok := h.find(p.Device)
	if !ok {
		return nil, notFound(p.Device)
	}
	if !d.Access.CanRead() {
		return nil, fail(openhal.CodeNotSupported, "not_readable", "%s is write-only", d.ID)
	}
	return h.values[d.ID], nil
}

func (h *Hub) write(p openhal.Principal, raw json.RawMessage) (any, *jsonrpc.Error) {
	var wp openhal.WriteParams
	if err := json.Unmarshal(raw, &wp); err != nil {
		return nil, fail(openhal.CodeInvalidParams, "bad_params", "params: %v", err)
	}
	h.mu.Lock()
	d, ok := h.find(wp.Device)
	h.mu.Unlock()
	if !ok {
		return nil, notFound(wp.Device)
	}
	if !d.Access.CanWrite() {
		return nil, fail(openhal.CodeNotSupported, "not_writable", "%s is read-only", d.ID)
	}
	var v any
	if err := json.Unmarshal(wp.Value, &v); err != nil {
		return nil, fail(openhal.CodeInvalidParams, "bad_params", "value: %v", err)
	}
	if err := d.Schema.Validate(v); err != nil {
		var ve *device.ValueError
		reason := "bad_value"
		if errors.As(err, &ve) {
			reason = ve.Reason
		}
		return nil, &jsonrpc.Error{Code: openhal.CodeInvalidParams, Message: "value for " + d.ID + ": " + err.Error(),
			Data: map[string]any{"reason": reason, "device": d.ID}}
	}
	if d.Risk == device.RiskHigh && !p.Scope.AtLeast(openhal.ScopeControlHigh) {
		now := time.Now().UTC()
		return map[string]any{"status": openhal.StatusPending, "confirmation": map[string]any{
			"id": "c-1", "device": d.ID, "value": v, "requestedBy": p, "reason": wp.Reason,
			"status": "pending", "createdAt": now, "expiresAt": now.Add(2 * time.Minute),
		}}, nil
	}
	seq := h.Publish(d.ID, v)
	h.mu.Lock()
	val := h.values[d.ID]
	h.mu.Unlock()
	return openhal.WriteResult{Status: openhal.StatusApplied, Device: d.ID, Value: v, TS: val.TS, Seq: seq}, nil
}
