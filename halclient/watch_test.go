package halclient_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"gateway/halclient"
	"gateway/halclient/halclienttest"
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
// value with its seq.
func expectResync(t *testing.T, events <-chan halclient.WatchEvent, seqs map[string]uint64) {
	t.Helper()
	if e := expectKind(t, events, halclient.EventDevices); len(e.Devices) != 4 {
		t.Fatalf("devices %v", e.Devices)
	}
	for _, id := range []string{"sim.led", "sim.door", "sim.heater", "sim.temperature"} {
		e := expectKind(t, events, halclient.EventValue)
		if !e.Resync || e.Device != id || e.Value.Seq != seqs[id] {
			t.Fatalf("resync value %s %+v; want %s seq %d", e.Device, e.Value, id, seqs[id])
		}
	}
}

func expectValue(t *testing.T, events <-chan halclient.WatchEvent, id string, seq uint64) {
	t.Helper()
	e := expectKind(t, events, halclient.EventValue)
	if e.Resync || e.Device != id || e.Value.Seq != seq || e.Notification == nil {
		t.Fatalf("value %s %+v; want a notification of %s seq %d", e.Device, e.Value, id, seq)
	}
}

func TestWatch(t *testing.T) {
	for _, tr := range []struct {
		name   string
		listen func(*halclienttest.Hub) string
	}{
		{"ws", (*halclienttest.Hub).ServeWebSocket},
		{"tcp", (*halclienttest.Hub).ListenTCP},
	} {
		t.Run(tr.name, func(t *testing.T) { testWatch(t, tr.listen) })
	}
}

func testWatch(t *testing.T, listen func(*halclienttest.Hub) string) {
	hub := halclienttest.New(t, "boot-1")
	events, done, cancel := watchEvents(t, listen(hub), halclienttest.AdminToken)

	e := expectKind(t, events, halclient.EventConnected)
	if e.Reconnected || e.Init.BootID != "boot-1" {
		t.Fatalf("first connection %+v", e)
	}
	expectResync(t, events, map[string]uint64{"sim.led": 1, "sim.door": 2, "sim.heater": 3, "sim.temperature": 4})

	// Values as they come; a jump in seq is a gap.
	hub.Publish("sim.led", true)
	expectValue(t, events, "sim.led", 5)
	hub.SkipSeq(3)
	hub.Publish("sim.led", false)
	if e := expectKind(t, events, halclient.EventMissed); e.Missed != 3 || e.Reconnected {
		t.Fatalf("gap %+v; want 3 missed", e)
	}
	expectValue(t, events, "sim.led", 9)

	// A lost connection to the same run: values in between are a gap.
	hub.SetDown(true)
	expectDisconnected(t, events)
	hub.Publish("sim.door", true)
	hub.Publish("sim.door", false)
	hub.SetDown(false)
	e = expectKind(t, events, halclient.EventConnected)
	if !e.Reconnected || e.Init.BootID != "boot-1" {
		t.Fatalf("reconnection %+v", e)
	}
	expectResync(t, events, map[string]uint64{"sim.led": 9, "sim.door": 11, "sim.heater": 3, "sim.temperature": 4})
	if e := expectKind(t, events, halclient.EventMissed); e.Missed != 2 || !e.Reconnected {
		t.Fatalf("gap over the reconnection %+v; want 2 missed", e)
	}

	// A restart: new bootId, seq starts again, and that is no gap.
	hub.Restart("boot-2")
	if e := expectKind(t, events, halclient.EventRestarted); e.Init.BootID != "boot-2" {
		t.Fatalf("restart %+v", e)
	}
	expectResync(t, events, map[string]uint64{"sim.led": 1, "sim.door": 2, "sim.heater": 3, "sim.temperature": 4})
	hub.Publish("sim.led", true)
	expectValue(t, events, "sim.led", 5)

	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Watch returned %v after cancel", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Watch did not return after cancel")
	}
	hub.WaitFor("the watch's connection to end", func(s halclienttest.Seen) bool { return s.Open == 0 })
}

func TestWatchRefusedToken(t *testing.T) {
	hub := halclienttest.New(t, "boot-1")
	_, done, _ := watchEvents(t, hub.ListenTCP(), "revoked")
	select {
	case err := <-done:
		if err == nil || err.Error() != "the hub refused the token (UNAUTHORIZED): token_unknown" {
			t.Errorf("Watch = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Watch kept retrying a refused token")
	}
}

func TestWatchVersionMismatch(t *testing.T) {
	hub := halclienttest.New(t, "boot-1")
	hub.SetVersion("1.0")
	_, done, _ := watchEvents(t, hub.ServeWebSocket(), halclienttest.AdminToken)
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
