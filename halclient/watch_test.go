package halclient_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/internal/halhub/hubtest"
	"github.com/openhal/gateway/openhal"
)

// watchEvents runs Watch and returns its events and its result.
func watchEvents(t *testing.T, url, token string) (<-chan halclient.WatchEvent, <-chan error, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	events := make(chan halclient.WatchEvent, 1000)
	done := make(chan error, 1)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		done <- halclient.Watch(ctx, url, halclient.Options{Token: token}, func(e halclient.WatchEvent) { events <- e })
	}()
	t.Cleanup(func() {
		cancel()
		<-finished
	})
	return events, done, cancel
}

// next returns the next event other than EventDisconnected (which comes
// as often as the reconnection attempts do).
func next(t *testing.T, events <-chan halclient.WatchEvent) halclient.WatchEvent {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case e := <-events:
			if e.Kind == halclient.EventDisconnected {
				if e.Err == nil || e.Retry <= 0 {
					t.Errorf("disconnected event without error or retry: %+v", e)
				}
				continue
			}
			return e
		case <-deadline:
			t.Fatal("no event in 10 s")
		}
	}
}

// expectDisconnected waits for an EventDisconnected.
func expectDisconnected(t *testing.T, events <-chan halclient.WatchEvent) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case e := <-events:
			if e.Kind == halclient.EventDisconnected {
				return
			}
			t.Fatalf("want disconnected, got %+v", e)
		case <-deadline:
			t.Fatal("no disconnected event in 10 s")
		}
	}
}

func expectKind(t *testing.T, events <-chan halclient.WatchEvent, kind halclient.EventKind) halclient.WatchEvent {
	t.Helper()
	e := next(t, events)
	if e.Kind != kind {
		t.Fatalf("event %+v; want %s", e, kind)
	}
	return e
}

// expectResync checks a full resync: the device list, then each device's
// value with its devSeq, in the list's order. The watch's token is
// limited to sim.*, so it is told no Hub-wide seq.
func expectResync(t *testing.T, events <-chan halclient.WatchEvent, devSeqs map[string]uint64) {
	t.Helper()
	if e := expectKind(t, events, halclient.EventDevices); len(e.Devices) != 4 {
		t.Fatalf("devices %v", e.Devices)
	}
	for _, id := range []string{"sim.door", "sim.heater", "sim.led", "sim.temperature"} {
		e := expectKind(t, events, halclient.EventValue)
		if !e.Resync || e.Device != id || e.Value.DevSeq != devSeqs[id] || e.Value.Seq != 0 {
			t.Fatalf("resync value %s %+v; want %s devSeq %d and no seq", e.Device, e.Value, id, devSeqs[id])
		}
	}
}

func expectValue(t *testing.T, events <-chan halclient.WatchEvent, id string, devSeq uint64) {
	t.Helper()
	e := expectKind(t, events, halclient.EventValue)
	if e.Resync || e.Device != id || e.Value.DevSeq != devSeq || e.Value.Seq != 0 || e.Notification == nil {
		t.Fatalf("value %s %+v; want a notification of %s devSeq %d and no seq", e.Device, e.Value, id, devSeq)
	}
}

func TestWatch(t *testing.T) {
	for _, tr := range []string{"ws", "tcp"} {
		t.Run(tr, func(t *testing.T) { testWatch(t, tr) })
	}
}

func testWatch(t *testing.T, transport string) {
	hub := newTestHub(t)
	// The watch's token sees the bench (sim.*) but not lab.other, whose
	// values are no gap of its own (spec §8).
	other := hub.Add(otherDevice{})
	tok := hub.Token("watcher", openhal.KindAgent, openhal.ScopeRead, "sim.*")
	events, done, cancel := watchEvents(t, hub.Listen(transport), tok)

	e := expectKind(t, events, halclient.EventConnected)
	if e.Reconnected || e.Init.BootID != hub.Hub().BootID() {
		t.Fatalf("first connection %+v", e)
	}
	first := map[string]uint64{"sim.led": 1, "sim.door": 1, "sim.heater": 1, "sim.temperature": 1}
	expectResync(t, events, first)

	// Values as they come; a hidden device's values are no gap.
	hub.Set("sim.led", true)
	expectValue(t, events, "sim.led", 2)
	for i := range 3 {
		other.Value(float64(i), hubtest.Time)
	}
	hub.Set("sim.led", false)
	expectValue(t, events, "sim.led", 3)

	// A lost connection to the same run: values in between are a gap.
	boot := hub.Hub().BootID()
	hub.down()
	expectDisconnected(t, events)
	hub.Set("sim.door", true)
	hub.Set("sim.door", false)
	other.Value(9.0, hubtest.Time)
	hub.Up()
	e = expectKind(t, events, halclient.EventConnected)
	if !e.Reconnected || e.Init.BootID != boot {
		t.Fatalf("reconnection %+v", e)
	}
	expectResync(t, events, map[string]uint64{"sim.led": 3, "sim.door": 3, "sim.heater": 1, "sim.temperature": 1})
	// sim.door's first change was never passed on; its second was read.
	if e := expectKind(t, events, halclient.EventMissed); e.Missed != 1 || e.Device != "sim.door" || !e.Reconnected {
		t.Fatalf("gap over the reconnection %+v; want 1 of sim.door missed", e)
	}

	// A restart: new bootId, devSeq starts again, and that is no gap.
	hub.restart()
	if e := expectKind(t, events, halclient.EventRestarted); e.Init.BootID == boot || e.Init.BootID != hub.Hub().BootID() {
		t.Fatalf("restart %+v; want the new Hub's bootId", e)
	}
	expectResync(t, events, first)
	hub.Set("sim.led", true)
	expectValue(t, events, "sim.led", 2)

	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Watch returned %v after cancel", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Watch did not return after cancel")
	}
	hub.wire.waitFor(t, "the watch's connections to end", allEnded)
}

// otherDevice is a device outside the bench's sim.* ids.
type otherDevice struct{}

func (otherDevice) Descriptor() device.Descriptor {
	return device.Descriptor{ID: "lab.other", Kind: device.KindSensor, Source: "test", Access: device.AccessRead,
		Risk: device.RiskLow, Schema: device.Schema{Type: device.TypeNumber}, State: device.StateOK}
}

func TestWatchRefusedToken(t *testing.T) {
	hub := newTestHub(t)
	tok := hub.Token("revoked", openhal.KindAgent, openhal.ScopeRead)
	hub.Revoke("revoked")
	_, done, _ := watchEvents(t, hub.Listen("tcp"), tok)
	select {
	case err := <-done:
		if err == nil || err.Error() != "the hub refused the token (UNAUTHORIZED): token_unknown" {
			t.Errorf("Watch = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Watch kept retrying a refused token")
	}
}

// TestWatchVersionMismatch: the Hub speaks only 0.1, so a scripted hub
// plays one that answers 1.0.
func TestWatchVersionMismatch(t *testing.T) {
	url, _ := scriptedHub(t, "ws", func(string) any {
		return map[string]any{"protocolVersion": "1.0", "bootId": "b"}
	})
	_, done, _ := watchEvents(t, url, "t")
	select {
	case err := <-done:
		var ve *halclient.VersionError
		if !errors.As(err, &ve) {
			t.Errorf("Watch = %v; want a VersionError", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Watch kept retrying a hub of another version")
	}
}
