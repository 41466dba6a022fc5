package halhub

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/halhub/token"
	"github.com/openhal/gateway/openhal"
)

// memTransport records what the Hub writes; read is never called (the
// fuzz target hands messages to the session itself).
type memTransport struct {
	mu  sync.Mutex
	out [][]byte
}

func (m *memTransport) read(ctx context.Context) ([]byte, error) { <-ctx.Done(); return nil, io.EOF }
func (m *memTransport) write(_ context.Context, msgs [][]byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, b := range msgs {
		m.out = append(m.out, append([]byte(nil), b...))
	}
	return nil
}
func (m *memTransport) close() error    { return nil }
func (m *memTransport) shutdown() error { return nil }
func (m *memTransport) remote() string  { return "fuzz" }

// FuzzHandle feeds arbitrary lines to an initialized session: the Hub must
// never panic, and everything it writes must be a JSON-RPC 2.0 object.
func FuzzHandle(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"hal/read","params":{"device":"fz.temp"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"hal/write","params":{"device":"fz.led","value":true}}`,
		`{"jsonrpc":"2.0","id":"x","method":"hal/devices/list","params":{"kind":"sensor"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"hal/devices/get","params":{"device":"fz.led"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"hal/initialize","params":{"protocolVersion":"0.1","clientInfo":{"name":"a","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"hal/initialized"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"hal/ping"}]`,
		`{"jsonrpc":"2.0","id":12345678901234567890,"method":"hal/ping"}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"hal/read\",\"params\":{\"device\":\"\xff\"}}",
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	store := token.Open(dir)
	tok, err := store.Add("fuzz", openhal.KindAgent, openhal.ScopeAdmin, nil)
	if err != nil {
		f.Fatal(err)
	}
	tab, err := store.Load()
	if err != nil {
		f.Fatal(err)
	}
	reg := device.NewRegistry(nil)
	h := New(reg, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Limits: DefaultLimits()})
	h.SetTokens(tab)
	if _, err := reg.Add(output("fz.led", device.RiskLow)); err != nil {
		f.Fatal(err)
	}
	if _, err := reg.Add(sensor("fz.temp")); err != nil {
		f.Fatal(err)
	}
	initMsg := []byte(`{"jsonrpc":"2.0","id":0,"method":"hal/initialize","params":{"protocolVersion":"0.1","clientInfo":{"name":"fuzz","version":"1"},"token":"` + tok + `"}}`)

	f.Fuzz(func(t *testing.T, data []byte) {
		tr := &memTransport{}
		s := newSession(h, tr, "")
		h.register(s)
		done := make(chan struct{})
		go func() { defer close(done); s.writeLoop() }()
		s.handle(initMsg)
		for _, line := range bytes.Split(data, []byte("\n")) {
			s.handle(line)
		}
		deadline := time.Now().Add(5 * time.Second)
		for s.inflight.Load() > 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond) // answers are written on other goroutines
		}
		s.close("fuzz done")
		<-done
		h.forget(s)
		tr.mu.Lock()
		defer tr.mu.Unlock()
		for _, out := range tr.out {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(out, &m); err != nil || string(m["jsonrpc"]) != `"2.0"` {
				t.Fatalf("hub wrote %q", out)
			}
		}
	})
}
