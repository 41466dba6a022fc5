package halhub

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/halhub/token"
	"github.com/openhal/gateway/openhal"
)

// testHub is a Hub over a registry of test devices, serving real loopback
// TCP and WebSocket listeners, with a token store in a temporary state
// directory.
type testHub struct {
	hub     *Hub
	reg     *device.Registry
	store   *token.Store
	tcpAddr string
	wsURL   string
	httpURL string
	admin   string
}

func newTestHub(t testing.TB, configure ...func(*Options)) *testHub {
	t.Helper()
	opt := Options{Version: "test", Limits: DefaultLimits(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, c := range configure {
		c(&opt)
	}
	var now func() time.Time
	if opt.Clock != nil {
		now = opt.Clock.Now
	}
	reg := device.NewRegistry(now)
	h := New(reg, opt)
	th := &testHub{hub: h, reg: reg, store: token.Open(t.TempDir())}
	th.admin = th.token(t, "root", openhal.ScopeAdmin)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go h.ServeLines(ln)
	srv := httptest.NewUnstartedServer(nil)
	srv.Config = h.HTTPServer(HTTPOptions{})
	srv.Listener = h.Guard("http", srv.Listener, nil)
	srv.Start()
	th.tcpAddr = ln.Addr().String()
	th.httpURL = srv.URL
	th.wsURL = "ws" + strings.TrimPrefix(srv.URL, "http") + "/hal"
	t.Cleanup(func() { ln.Close(); h.Close(); srv.Close() })
	return th
}

// token adds a token and applies the store to the hub, as the gateway's
// watcher does.
func (th *testHub) token(t testing.TB, name string, scope openhal.Scope, devices ...string) string {
	t.Helper()
	tok, err := th.store.Add(name, openhal.KindAgent, scope, devices)
	if err != nil {
		t.Fatal(err)
	}
	th.reload(t)
	return tok
}

func (th *testHub) reload(t testing.TB) {
	t.Helper()
	tab, err := th.store.Load()
	if err != nil {
		t.Fatal(err)
	}
	th.hub.SetTokens(tab)
}

// addDevice registers a test device.
func (th *testHub) addDevice(t *testing.T, d device.Device) device.Reporter {
	t.Helper()
	rep, err := th.reg.Add(d)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// msg is one message as a client receives it.
type msg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64          `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data"`
	} `json:"error"`
	raw string
}

func (m msg) reason() string {
	if m.Error == nil {
		return ""
	}
	r, _ := m.Error.Data["reason"].(string)
	return r
}

// client is a raw test client over TCP lines or WebSocket frames.
type client struct {
	t      *testing.T
	send   func(string) error
	in     chan msg
	closed chan struct{}
	nextID atomic.Int64
	close  func()
	// pending keeps what arrived while call waited for its answer, so
	// that a later notification or next still sees it.
	pending []msg
	// waiters are callAsync's callers, by id.
	waitMu  sync.Mutex
	waiters map[string]chan msg
}

func (th *testHub) dialTCP(t *testing.T) *client {
	t.Helper()
	c, err := net.Dial("tcp", th.tcpAddr)
	if err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, func(s string) error { _, err := io.WriteString(c, s+"\n"); return err }, func() { c.Close() })
	go func() {
		defer close(cl.closed)
		sc := bufio.NewScanner(c)
		sc.Buffer(make([]byte, 1<<20), 4<<20)
		for sc.Scan() {
			cl.deliver(sc.Text())
		}
	}()
	return cl
}

func (th *testHub) dialWS(t *testing.T, bearer string) *client {
	t.Helper()
	h := http.Header{}
	if bearer != "" {
		h.Set("Authorization", "Bearer "+bearer)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, th.wsURL, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(8 << 20)
	cl := newClient(t, func(s string) error { return c.Write(context.Background(), websocket.MessageText, []byte(s)) }, func() { c.CloseNow() })
	go func() {
		defer close(cl.closed)
		for {
			_, b, err := c.Read(context.Background())
			if err != nil {
				return
			}
			cl.deliver(string(b))
		}
	}()
	return cl
}

func newClient(t *testing.T, send func(string) error, closeFn func()) *client {
	cl := &client{t: t, send: send, in: make(chan msg, 100000), closed: make(chan struct{}), close: closeFn}
	t.Cleanup(closeFn)
	return cl
}

func (c *client) deliver(raw string) {
	var m msg
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		c.t.Errorf("hub sent bad JSON %q: %v", raw, err)
		return
	}
	m.raw = raw
	if m.Method == "" && m.ID != nil {
		c.waitMu.Lock()
		ch := c.waiters[string(m.ID)]
		delete(c.waiters, string(m.ID))
		c.waitMu.Unlock()
		if ch != nil {
			ch <- m
			return
		}
	}
	c.in <- m
}

// sendRaw sends one message as is.
func (c *client) sendRaw(s string) {
	c.t.Helper()
	if err := c.send(s); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

// call sends a request and returns its answer, skipping notifications.
func (c *client) call(method string, params any) msg {
	c.t.Helper()
	id := c.nextID.Add(1)
	req := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		req["params"] = params
	}
	b, _ := json.Marshal(req)
	c.sendRaw(string(b))
	return c.answer(json.RawMessage(strings.TrimSpace(string(mustJSON(id)))))
}

// answer waits for the answer with that id.
func (c *client) answer(id json.RawMessage) msg {
	c.t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case m := <-c.in:
			if m.Method == "" && string(m.ID) == string(id) {
				return m
			}
			c.pending = append(c.pending, m)
		case <-c.closed:
			if m, ok := c.drained(); ok {
				c.pending = append(c.pending, m)
				if m.Method == "" && string(m.ID) == string(id) {
					c.pending = c.pending[:len(c.pending)-1]
					return m
				}
				continue
			}
			c.t.Fatalf("connection closed while waiting for the answer to %s", id)
		case <-deadline:
			c.t.Fatalf("no answer to id %s within 5 s", id)
		}
	}
}

// next waits for the next message of any kind.
func (c *client) next() msg {
	c.t.Helper()
	if len(c.pending) > 0 {
		m := c.pending[0]
		c.pending = c.pending[1:]
		return m
	}
	select {
	case m := <-c.in:
		return m
	case <-c.closed:
		if m, ok := c.drained(); ok {
			return m
		}
		c.t.Fatal("connection closed while waiting for a message")
	case <-time.After(5 * time.Second):
		c.t.Fatal("no message within 5 s")
	}
	return msg{}
}

// notification waits for the next notification named method.
func (c *client) notification(method string) msg {
	c.t.Helper()
	for i, m := range c.pending {
		if m.Method == method {
			c.pending = append(c.pending[:i], c.pending[i+1:]...)
			return m
		}
	}
	deadline := time.After(5 * time.Second)
	for {
		select {
		case m := <-c.in:
			if m.Method == method {
				return m
			}
			c.pending = append(c.pending, m) // for a later next or notification
		case <-c.closed:
			if m, ok := c.drained(); ok {
				if m.Method == method {
					return m
				}
				c.pending = append(c.pending, m)
				continue
			}
			c.t.Fatalf("connection closed while waiting for %s", method)
		case <-deadline:
			c.t.Fatalf("no %s within 5 s", method)
		}
	}
}

// quiet checks that nothing arrives within d (used only where the test
// asserts an absence, after a round trip has flushed what would come).
func (c *client) quiet(d time.Duration) {
	c.t.Helper()
	if len(c.pending) > 0 {
		c.t.Fatalf("unexpected message %s", c.pending[0].raw)
	}
	select {
	case m := <-c.in:
		c.t.Fatalf("unexpected message %s", m.raw)
	case <-time.After(d):
	}
}

// waitClosed waits for the hub to close the connection.
func (c *client) waitClosed() {
	c.t.Helper()
	select {
	case <-c.closed:
	case <-time.After(5 * time.Second):
		c.t.Fatal("the hub did not close the connection within 5 s")
	}
}

// init sends hal/initialize with the token in params and hal/initialized.
func (c *client) init(tok string) openhal.InitializeResult {
	c.t.Helper()
	m := c.call("hal/initialize", map[string]any{"protocolVersion": "0.1", "clientInfo": map[string]string{"name": "test", "version": "1"}, "token": tok})
	if m.Error != nil {
		c.t.Fatalf("initialize: %s", m.raw)
	}
	var res openhal.InitializeResult
	if err := json.Unmarshal(m.Result, &res); err != nil {
		c.t.Fatal(err)
	}
	c.sendRaw(`{"jsonrpc":"2.0","method":"hal/initialized"}`)
	c.call("hal/ping", nil) // the hub has seen hal/initialized once this answers
	return res
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// testDevice is a device whose behaviour a test sets.
type testDevice struct {
	desc    device.Descriptor
	reads   atomic.Int64
	readFn  func(ctx context.Context) (device.Reading, error)
	writeFn func(ctx context.Context, req device.WriteRequest) (device.WriteResult, error)

	mu     sync.Mutex
	writes []any
}

func (d *testDevice) Descriptor() device.Descriptor { return d.desc }

func (d *testDevice) written() []any {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]any(nil), d.writes...)
}

// readerDevice and writerDevice give a testDevice the optional interfaces.
type readerDevice struct{ *testDevice }

func (d readerDevice) Read(ctx context.Context) (device.Reading, error) {
	d.reads.Add(1)
	if d.readFn != nil {
		return d.readFn(ctx)
	}
	return device.Reading{}, errors.New("no reader set")
}

type writerDevice struct{ *testDevice }

func (d writerDevice) Write(ctx context.Context, req device.WriteRequest) (device.WriteResult, error) {
	var res device.WriteResult
	if d.writeFn != nil {
		var err error
		if res, err = d.writeFn(ctx, req); err != nil {
			return res, err
		}
	}
	d.mu.Lock()
	d.writes = append(d.writes, req.Value)
	d.mu.Unlock()
	return res, nil
}

// output returns a boolean output device.
func output(id string, risk device.Risk) writerDevice {
	return writerDevice{&testDevice{desc: device.Descriptor{ID: id, Kind: device.KindGPIOOutput, Source: "board", Access: device.AccessReadWrite, Risk: risk, Schema: device.Schema{Type: device.TypeBoolean}}}}
}

// sensor returns a read-only sensor whose reading is a counter.
func sensor(id string) readerDevice {
	d := readerDevice{&testDevice{desc: device.Descriptor{ID: id, Kind: device.KindSensor, Source: "board", Access: device.AccessRead, Risk: device.RiskLow, Schema: device.Schema{Type: device.TypeNumber}}}}
	d.readFn = func(context.Context) (device.Reading, error) {
		return device.Reading{Value: float64(d.reads.Load())}, nil
	}
	return d
}

func contextWithCancel(t *testing.T) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx, cancel
}

// drained returns a message that arrived before the connection closed: the
// reader delivers everything before it closes c.closed, so once closed is
// seen, whatever is left waits in c.in.
func (c *client) drained() (msg, bool) {
	select {
	case m := <-c.in:
		return m, true
	default:
		return msg{}, false
	}
}

// callAsync is call for use from several goroutines at once: it keeps no
// pending list and matches its own answer.
func (c *client) callAsync(method string, params any) msg {
	id := c.nextID.Add(1)
	req := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		req["params"] = params
	}
	c.waitMu.Lock()
	if c.waiters == nil {
		c.waiters = map[string]chan msg{}
	}
	ch := make(chan msg, 1)
	c.waiters[fmt.Sprint(id)] = ch
	c.waitMu.Unlock()
	if err := c.send(string(mustJSON(req))); err != nil {
		return msg{raw: err.Error()}
	}
	select {
	case m := <-ch:
		return m
	case <-time.After(5 * time.Second):
		return msg{raw: "no answer within 5 s"}
	}
}
