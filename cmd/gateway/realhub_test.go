package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"gateway/clock/clocktest"
	"gateway/device"
	"gateway/halhub"
	"gateway/halhub/token"
	"gateway/openhal"
)

// The client commands' tests run against the gateway's real Hub (package
// halhub) over real loopback TCP and WebSocket, serving a small bench of
// devices from a real device.Registry, as package halclient's tests do
// (this is their setup, without their wire tap).

// benchTime is the bench's clock, which never moves: values are stamped
// with it and never age.
var benchTime = time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)

// testHub is a real Hub with its token store and bench. restart replaces
// the Hub with a new one (a new bootId) on the same addresses.
type testHub struct {
	t            *testing.T
	store        *token.Store
	admin, agent string // tokens: operator "admin" (admin), agent "bench-agent" (control.low)

	hub   *halhub.Hub
	reg   *device.Registry
	bench map[string]*benchDevice
	addrs map[string]string // "ws" or "tcp" → the address it listens on
	lns   []net.Listener
}

func newTestHub(t *testing.T) *testHub {
	t.Helper()
	h := &testHub{t: t, store: token.Open(t.TempDir()), addrs: map[string]string{}}
	h.admin = h.token("admin", openhal.KindOperator, openhal.ScopeAdmin)
	h.agent = h.token("bench-agent", openhal.KindAgent, openhal.ScopeControlLow)
	h.start()
	t.Cleanup(func() { h.stop() })
	return h
}

// token adds a token to the store and hands the store to the Hub.
func (h *testHub) token(name, kind string, scope openhal.Scope, devices ...string) string {
	h.t.Helper()
	tok, err := h.store.Add(name, kind, scope, devices)
	if err != nil {
		h.t.Fatal(err)
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

// start makes a new run: a fresh bench, whose values take seq 1 to 4, and
// a Hub over it.
func (h *testHub) start() {
	clk := clocktest.NewFake(benchTime)
	h.reg = device.NewRegistry(clk.Now)
	h.bench = newBench(h.t, h.reg, clk.Now)
	h.hub = halhub.New(h.reg, halhub.Options{Version: "test", Limits: halhub.DefaultLimits(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	h.loadTokens()
}

func (h *testHub) stop() {
	for _, ln := range h.lns {
		ln.Close()
	}
	h.lns = nil
	h.hub.Close()
}

// listen serves transport ("ws" or "tcp") and returns its URL.
func (h *testHub) listen(transport string) string {
	h.t.Helper()
	h.addrs[transport] = h.serve(transport, "127.0.0.1:0")
	if transport == "ws" {
		return "ws://" + h.addrs[transport] + "/hal"
	}
	return "tcp://" + h.addrs[transport]
}

func (h *testHub) serve(transport, addr string) string {
	h.t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		h.t.Fatalf("listen on %s (again): %v", addr, err)
	}
	h.lns = append(h.lns, ln)
	if transport == "ws" {
		srv := &http.Server{Handler: h.hub.Handler(halhub.HTTPOptions{})}
		go srv.Serve(ln)
	} else {
		go h.hub.ServeLines(ln)
	}
	return ln.Addr().String()
}

// restart stops the Hub and starts a new one, with a new bootId and a new
// bench, on the same addresses and with the same tokens.
func (h *testHub) restart() {
	h.stop()
	h.start()
	for tr, addr := range h.addrs {
		h.serve(tr, addr)
	}
}

// set gives a bench device a new value, which it reports.
func (h *testHub) set(id string, v any) {
	h.t.Helper()
	d, ok := h.bench[id]
	if !ok {
		h.t.Fatalf("no bench device %s", id)
	}
	d.set(v)
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

// sensor is a bench device that measures on demand.
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
