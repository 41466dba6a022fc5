package halhub

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/halhub/token"
	"github.com/openhal/gateway/openhal"
)

// countingTransport counts what the Hub writes and signals when a target
// count is reached.
type countingTransport struct {
	mu     sync.Mutex
	n      int
	target int
	done   chan struct{}
}

func (c *countingTransport) read(ctx context.Context) ([]byte, error) {
	<-ctx.Done()
	return nil, io.EOF
}

func (c *countingTransport) write(_ context.Context, msgs [][]byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n += len(msgs)
	if c.target > 0 && c.n >= c.target && c.done != nil {
		close(c.done)
		c.done = nil
	}
	return nil
}

func (c *countingTransport) close() error    { return nil }
func (c *countingTransport) shutdown() error { return nil }
func (c *countingTransport) remote() string  { return "bench" }

// expect arms the transport to signal after n more messages.
func (c *countingTransport) expect(n int) chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan struct{})
	c.target, c.done = c.n+n, ch
	return ch
}

// benchHub is a Hub over one output, with an admin token.
func benchHub(b *testing.B, configure ...func(*Options)) (*Hub, *device.Registry, string) {
	b.Helper()
	store := token.Open(b.TempDir())
	tok, err := store.Add("bench", openhal.KindAgent, openhal.ScopeAdmin, nil)
	if err != nil {
		b.Fatal(err)
	}
	tab, _ := store.Load()
	reg := device.NewRegistry(nil)
	lim := DefaultLimits()
	lim.MaxConnections = 200
	opt := Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Limits: lim}
	for _, c := range configure {
		c(&opt)
	}
	h := New(reg, opt)
	b.Cleanup(h.Close)
	h.SetTokens(tab)
	if _, err := reg.Add(output("sim.led", device.RiskLow)); err != nil {
		b.Fatal(err)
	}
	reg.Publish("sim.led", false, time.Time{})
	return h, reg, tok
}

// readySession opens an initialized session on a counting transport.
func readySession(b *testing.B, h *Hub, tok string) (*session, *countingTransport) {
	b.Helper()
	tr := &countingTransport{}
	s := newSession(h, tr, "")
	h.register(s)
	go s.writeLoop()
	b.Cleanup(func() { s.close("bench done"); h.forget(s) })
	done := tr.expect(1)
	s.handle([]byte(`{"jsonrpc":"2.0","id":0,"method":"hal/initialize","params":{"protocolVersion":"0.1","clientInfo":{"name":"b","version":"1"},"token":"` + tok + `"}}`))
	s.handle([]byte(`{"jsonrpc":"2.0","method":"hal/initialized"}`))
	<-done
	return s, tr
}

// BenchmarkDispatchRead is one hal/read of an output from a received
// message to its answer written: decode, checks, cache, encode, queue.
func BenchmarkDispatchRead(b *testing.B) {
	h, _, tok := benchHub(b)
	s, tr := readySession(b, h, tok)
	req := []byte(`{"jsonrpc":"2.0","id":7,"method":"hal/read","params":{"device":"sim.led"}}`)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		done := tr.expect(1)
		s.handle(req)
		<-done
	}
}

// BenchmarkFanOut is one value published to 100 ready connections: the
// notification is encoded once and queued on each.
func BenchmarkFanOut(b *testing.B) {
	h, reg, tok := benchHub(b)
	var trs []*countingTransport
	for i := 0; i < 100; i++ {
		_, tr := readySession(b, h, tok)
		trs = append(trs, tr)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		reg.Publish("sim.led", i%2 == 0, time.Time{})
	}
	b.StopTimer()
	_ = trs
}
