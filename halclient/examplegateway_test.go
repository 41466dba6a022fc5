package halclient_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/openhal/gateway/internal/halhub/hubtest"
)

// exampleGateway is a gateway for the examples to talk to: the gateway's
// real Hub, in this process, on loopback TCP, serving hubtest's bench of
// four sim devices (sim.door, sim.heater, sim.led, sim.temperature),
// whose clock stands still so that what the examples print does not
// depend on when they run. A program of yours dials a gateway on the LAN
// instead: "wss://NAME:7752/hal", with Options.Fingerprint or
// Options.KnownGateways to trust its certificate.
type exampleGateway struct {
	URL   string // the Hub's tcp:// URL
	Token string // an agent's token, scope control.low
	bench *hubtest.Bench
	t     *exampleT
}

func startExampleGateway() *exampleGateway {
	t := &exampleT{}
	b := hubtest.New(t)
	return &exampleGateway{URL: b.Listen("tcp"), Token: b.Agent, bench: b, t: t}
}

// OpenDoor is what the gateway sees when someone opens the door: its
// input sim.door changes to true.
func (g *exampleGateway) OpenDoor() { g.bench.Set("sim.door", true) }

// Stop closes the Hub and removes its state directory.
func (g *exampleGateway) Stop() { g.t.cleanup() }

// exampleT is the part of testing.TB that hubtest uses, for an Example,
// which has no test to hand it. A failure panics, which fails the
// example; so does a method it lacks (the embedded TB is nil), should
// hubtest come to need one.
type exampleT struct {
	testing.TB
	cleanups []func()
}

func (*exampleT) Helper()                      {}
func (*exampleT) Fatal(args ...any)            { panic(fmt.Sprint(args...)) }
func (*exampleT) Fatalf(f string, args ...any) { panic(fmt.Sprintf(f, args...)) }
func (t *exampleT) Cleanup(f func())           { t.cleanups = append(t.cleanups, f) }

func (t *exampleT) TempDir() string {
	dir, err := os.MkdirTemp("", "halclient-example")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// cleanup runs what Cleanup was given, last first, as a test does.
func (t *exampleT) cleanup() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
	t.cleanups = nil
}
