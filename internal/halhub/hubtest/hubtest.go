// Package hubtest runs the gateway's real Hub (package halhub) for the
// tests of its clients, as net/http/httptest runs a real server: over
// real loopback TCP, WebSocket and Unix sockets, with a real token store,
// serving a small bench of devices from a real device.Registry. It is for
// tests only; a client's test fakes nothing that this Hub can do.
//
// The bench is four devices of source "sim", whose initial values take
// seq 1 to 4: sim.led (output, low risk, false), sim.door (input, false),
// sim.heater (output, high risk, false) and sim.temperature (sensor,
// {"temperature": 20.5}). Their values are stamped with Time.
package hubtest

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock/clocktest"
	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/internal/halhub/token"
	"github.com/openhal/gateway/openhal"
)

// Time is the bench's clock, which never moves: values are stamped with
// it and never age, so that what a test reads does not depend on how fast
// it runs.
var Time = time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)

// Bench is a real Hub with its token store, the bench of devices, and the
// listeners it serves. Restart replaces the Hub with a new one (a new
// bootId) on the same addresses, as a restarted gateway would be; Down
// and Up take the same Hub off the network and back.
type Bench struct {
	// Admin and Agent are tokens of the store: operator "admin" with scope
	// admin, agent "bench-agent" with scope control.low.
	Admin, Agent string

	t     testing.TB
	opt   halhub.Options
	wrap  func(transport string, ln net.Listener) net.Listener
	store *token.Store

	hub     *halhub.Hub
	reg     *device.Registry
	devices map[string]*benchDevice
	addrs   map[string]string // transport → the address it listens on
	lns     []net.Listener
}

// An Option changes how New sets up the Bench.
type Option func(*Bench)

// Configure lets f change the Hub's options (limits, audit, state
// directory...) before the first Hub starts; every restart uses them too.
// When f sets a StateDir, the token store is kept there, as the gateway
// keeps it.
func Configure(f func(*halhub.Options)) Option {
	return func(b *Bench) { f(&b.opt) }
}

// WrapListener has the Hub accept its connections through wrap's listener,
// each time it listens on transport ("ws", "tcp" or "unix"): a test can so
// see, hold or cut what goes over the wire.
func WrapListener(wrap func(transport string, ln net.Listener) net.Listener) Option {
	return func(b *Bench) { b.wrap = wrap }
}

// New starts a Hub over the bench, listening nowhere yet (see Listen). The
// Hub and its listeners are closed when the test ends.
func New(t testing.TB, opts ...Option) *Bench {
	t.Helper()
	b := &Bench{
		t:     t,
		opt:   halhub.Options{Version: "test", Limits: halhub.DefaultLimits(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		addrs: map[string]string{},
	}
	for _, o := range opts {
		o(b)
	}
	dir := b.opt.StateDir
	if dir == "" {
		dir = t.TempDir()
	}
	b.store = token.Open(dir)
	b.Admin = b.Token("admin", openhal.KindOperator, openhal.ScopeAdmin)
	b.Agent = b.Token("bench-agent", openhal.KindAgent, openhal.ScopeControlLow)
	b.start()
	t.Cleanup(func() { b.Down(); b.hub.Close() })
	return b
}

// Hub is the Hub of the current run.
func (b *Bench) Hub() *halhub.Hub { return b.hub }

// Registry is the device registry of the current run, for a test that
// follows its events as a part of the gateway does (the history).
func (b *Bench) Registry() *device.Registry { return b.reg }

// Token adds a token to the store and hands the store to the Hub, as the
// gateway does when the token file changes.
func (b *Bench) Token(name, kind string, scope openhal.Scope, devices ...string) string {
	b.t.Helper()
	tok, err := b.store.Add(name, kind, scope, devices)
	if err != nil {
		b.t.Fatal(err)
	}
	if b.hub != nil {
		b.loadTokens()
	}
	return tok
}

// Revoke removes the token named name from the store and hands the store
// to the Hub.
func (b *Bench) Revoke(name string) {
	b.t.Helper()
	if err := b.store.Revoke(name); err != nil {
		b.t.Fatal(err)
	}
	b.loadTokens()
}

func (b *Bench) loadTokens() {
	b.t.Helper()
	tab, err := b.store.Load()
	if err != nil {
		b.t.Fatal(err)
	}
	b.hub.SetTokens(tab)
}

// start makes a new run: a registry with a fresh bench, whose values take
// seq 1 to 4, and a Hub over it.
func (b *Bench) start() {
	clk := clocktest.NewFake(Time)
	b.reg = device.NewRegistry(clk.Now)
	b.devices = newDevices(b.t, b.reg, clk.Now)
	b.hub = halhub.New(b.reg, b.opt)
	b.loadTokens()
}

// Listen serves transport ("ws", "tcp" or "unix") and returns its URL.
func (b *Bench) Listen(transport string) string {
	b.t.Helper()
	addr := "127.0.0.1:0"
	if transport == "unix" {
		addr = filepath.Join(b.t.TempDir(), "hal.sock")
	}
	b.addrs[transport] = b.serve(transport, addr)
	switch transport {
	case "ws":
		return "ws://" + b.addrs[transport] + "/hal"
	case "tcp":
		return "tcp://" + b.addrs[transport]
	}
	return "unix://" + b.addrs[transport]
}

// serve listens at addr with the current Hub and returns the address.
func (b *Bench) serve(transport, addr string) string {
	b.t.Helper()
	network := "tcp"
	if transport == "unix" {
		network = "unix"
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		b.t.Fatalf("listen on %s (again): %v", addr, err)
	}
	b.lns = append(b.lns, ln)
	served := ln
	if b.wrap != nil {
		served = b.wrap(transport, ln)
	}
	if transport == "ws" {
		srv := &http.Server{Handler: b.hub.Handler(halhub.HTTPOptions{})}
		go srv.Serve(served)
	} else {
		go b.hub.ServeLines(served)
	}
	return ln.Addr().String()
}

// Down takes the Hub off the network: its listeners close. The Hub itself
// runs on, and so do the connections it has (a WrapListener hook may cut
// them).
func (b *Bench) Down() {
	for _, ln := range b.lns {
		ln.Close()
	}
	b.lns = nil
}

// Up listens again where the Hub listened before Down.
func (b *Bench) Up() {
	b.t.Helper()
	for tr, addr := range b.addrs {
		b.serve(tr, addr)
	}
}

// Restart stops the Hub and starts a new one, with a new bootId and a new
// bench, on the same addresses and with the same tokens.
func (b *Bench) Restart() {
	b.t.Helper()
	b.Down()
	b.hub.Close()
	b.start()
	b.Up()
}
