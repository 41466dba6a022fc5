package conn

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/adapterproto"
	"github.com/openhal/gateway/internal/clock/clocktest"
	"github.com/openhal/gateway/internal/supervisor/eventq"
	"github.com/openhal/gateway/internal/supervisor/strikes"
	"github.com/openhal/gateway/jsonrpc"
)

// wait bounds every wait of these tests on a real event.
const wait = 5 * time.Second

// peer plays the adapter at the other end of the pipes.
type peer struct {
	t     *testing.T
	lines chan string
	out   *os.File // adapter's standard output
	in    *os.File // adapter's standard input
}

func (p *peer) next() string {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.t.Fatal("the daemon closed the adapter's standard input")
		}
		return l
	case <-time.After(wait):
		p.t.Fatal("no frame from the daemon")
	}
	return ""
}

// nothing checks that no frame is waiting now.
func (p *peer) nothing() {
	p.t.Helper()
	select {
	case l := <-p.lines:
		p.t.Fatalf("unexpected frame %s", l)
	default:
	}
}

func (p *peer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.out, line+"\n"); err != nil {
		p.t.Fatalf("adapter write: %v", err)
	}
}

// msg decodes a daemon frame.
func (p *peer) msg() jsonrpc.Message {
	p.t.Helper()
	l := p.next()
	m, err := jsonrpc.DecodeAdapter([]byte(l))
	if err != nil {
		p.t.Fatalf("daemon frame %s: %v", l, err)
	}
	return m
}

// answer replies to a daemon request with a result.
func (p *peer) answer(m jsonrpc.Message, result string) {
	p.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + `}`)
}

type fixture struct {
	t     *testing.T
	clk   *clocktest.Fake
	cfg   Config
	peer  *peer
	stdin *os.File
	out   *os.File
}

// seedConfig is the seed's initialize, as a Config.
func seedConfig() Config {
	return Config{
		Record: adapterproto.Info{Name: "notifier", Version: "0.1.0"},
		Kind:   adapterproto.KindService,
		Grant:  adapterproto.Grant{Level: "read", Scope: adapterproto.ScopeList{All: true}},
		State:  "/home/u/.oxidepm/adapters/state/notifier",
		Host:   adapterproto.Host{Name: "oxidepmd", Version: "0.4.0"},
		Limits: adapterproto.DefaultLimits(),
		Timing: DefaultTiming(),
	}
}

func newFixture(t *testing.T, cfg Config) *fixture {
	t.Helper()
	clk := clocktest.NewFake(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	cfg.Clock = clk
	if cfg.Strikes == nil {
		cfg.Strikes = &strikes.Strikes{Clock: clk}
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	// Kernel pipes, as the adapter's are: a frame the daemon no longer
	// reads waits in the pipe's buffer rather than blocking the test.
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &peer{t: t, lines: make(chan string, 4096), out: outW, in: inR}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(inR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() { inR.Close(); inW.Close(); outW.Close(); outR.Close() })
	return &fixture{t: t, clk: clk, cfg: cfg, peer: p, stdin: inW, out: outR}
}

type opened struct {
	c   *Conn
	err error
}

// open starts Open on its own goroutine; the test plays the handshake.
func (f *fixture) open() <-chan opened {
	ch := make(chan opened, 1)
	go func() {
		c, err := Open(context.Background(), f.out, f.stdin, f.cfg)
		ch <- opened{c, err}
	}()
	return ch
}

func (f *fixture) result(ch <-chan opened) opened {
	f.t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(wait):
		f.t.Fatal("Open did not return")
	}
	return opened{}
}

// ready runs a good handshake and returns the connection.
func (f *fixture) ready() *Conn {
	f.t.Helper()
	ch := f.open()
	init := f.peer.msg()
	f.peer.send(`{"jsonrpc":"2.0","id":` + string(init.ID) + `,"result":{"protocol":1,"name":"` +
		f.cfg.Record.Name + `","version":"` + f.cfg.Record.Version + `"}}`)
	r := f.result(ch)
	if r.err != nil {
		f.t.Fatalf("Open: %v", r.err)
	}
	if m := f.peer.msg(); m.Method != adapterproto.MethodInitialized {
		f.t.Fatalf("after the reply: %s, want initialized", m.Method)
	}
	f.t.Cleanup(r.c.Close)
	return r.c
}

// ended waits for the connection's end.
func ended(t *testing.T, c *Conn) *EndError {
	t.Helper()
	select {
	case <-c.Done():
	case <-time.After(wait):
		t.Fatal("the connection did not end")
	}
	return c.Err().(*EndError)
}

// handler records the adapter's requests and notifications.
type handler struct {
	mu       sync.Mutex
	requests []string
	notes    []string
	noted    chan struct{}
	answer   func(method string, params json.RawMessage) (any, *jsonrpc.Error)
}

func newHandler() *handler { return &handler{noted: make(chan struct{}, 100)} }

func (h *handler) Request(_ context.Context, method string, params json.RawMessage) (any, *jsonrpc.Error) {
	h.mu.Lock()
	h.requests = append(h.requests, method+" "+string(params))
	h.mu.Unlock()
	if h.answer != nil {
		return h.answer(method, params)
	}
	return map[string]any{"echo": method}, nil
}

func (h *handler) Notify(method string, params json.RawMessage) {
	h.mu.Lock()
	h.notes = append(h.notes, method+" "+string(params))
	h.mu.Unlock()
	h.noted <- struct{}{}
}

// call runs Call on its own goroutine.
func callAsync(c *Conn, ctx context.Context, method string, timeout time.Duration) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		res, err := c.Call(ctx, method, map[string]any{"device": "x"}, timeout)
		ch <- callResult{res, err}
	}()
	return ch
}

type callResult struct {
	res json.RawMessage
	err error
}

func got(t *testing.T, ch <-chan callResult) callResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(wait):
		t.Fatal("Call did not return")
	}
	return callResult{}
}

// waitTimers waits until n timers are pending on the fake clock, so that
// an Advance covers them.
func (f *fixture) waitTimers(n int) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := f.clk.WaitPending(ctx, n); err != nil {
		f.t.Fatalf("waiting for %d timers: %v", n, err)
	}
}

func queue(n int) *eventq.Queue { return eventq.New(n) }

func contains(s, sub string) bool { return strings.Contains(s, sub) }
