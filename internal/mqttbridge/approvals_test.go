package mqttbridge_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/mqttbridge/mqtttest"
	"github.com/openhal/gateway/openhal"
)

const (
	approvalsState = "openhal/gw/_approvals/state"
	approvalsEvent = "openhal/gw/_approvals/event"
	heaterApproval = "openhal/gw/sim.heater/approval"
	noneWaiting    = `{"pending":0,"newest":{}}`
)

var created = time.Date(2026, 12, 6, 17, 0, 0, 0, time.UTC)

// heaterRequest is an agent's pending request to switch the heater on.
func heaterRequest(id string) openhal.Confirmation {
	return openhal.Confirmation{ID: id, Device: "sim.heater", Value: true, Status: openhal.ConfirmPending,
		RequestedBy: openhal.Principal{Kind: "agent", Name: "bench-agent"}, Reason: "preheat",
		CreatedAt: created, ExpiresAt: created.Add(2 * time.Minute)}
}

// notice is a confirmation event's data.
func notice(id, status, extra string) string {
	return fmt.Sprintf(`{"confirmation":{"id":%q,"device":"sim.heater","value":true,"requestedBy":{"kind":"agent","name":"bench-agent"},`+
		`"reason":"preheat","status":%q,"createdAt":"2026-12-06T17:00:00Z","expiresAt":"2026-12-06T17:02:00Z"%s}}`, id, status, extra)
}

const heaterWaiting = `{"approval":"waiting for approval","id":"c-3","requested":true,"requester":"bench-agent","requesterKind":"agent",` +
	`"expiresAt":"2026-12-06T17:02:00Z","pending":1}`

const pendingOne = `{"pending":1,"newest":{"id":"c-3","device":"sim.heater","value":true,"requester":"bench-agent","requesterKind":"agent",` +
	`"reason":"preheat","createdAt":"2026-12-06T17:00:00Z","expiresAt":"2026-12-06T17:02:00Z"}}`

// Requests that wait when the bridge starts are learnt from the Hub: the
// count, the newest and the heater's attributes are retained at once; a
// low-risk device has no approval topic.
func TestApprovalsAtStart(t *testing.T) {
	h := bench()
	h.pending = []openhal.Confirmation{heaterRequest("c-3")}
	_, c := run(t, h)
	c.Up()
	c.Wait(t, 0, approvalsState, pendingOne)
	c.Wait(t, 0, heaterApproval, heaterWaiting)
	settled(t, c)
	for _, p := range c.Published(0) {
		if strings.HasSuffix(p.Topic, "/approval") && p.Topic != heaterApproval {
			t.Errorf("%s published: only a device a write may make wait has approval attributes", p.Topic)
		}
		if p.Topic == approvalsEvent {
			t.Errorf("an event at start (%s): events tell of now, the state of then", p.Payload)
		}
	}
}

// A request and its resolution: each changes the retained count and
// attributes, then is an event, not retained, published after them.
func TestApprovalsFollowEvents(t *testing.T) {
	for _, tc := range []struct {
		status, extra, eventTail string
	}{
		{"approved", `,"approvedBy":{"kind":"operator","name":"admin"}`, `,"by":"admin","byKind":"operator"}`},
		{"rejected", `,"rejectedBy":{"kind":"operator","name":"admin"},"resolveReason":"not now"`, `,"by":"admin","byKind":"operator","why":"not now"}`},
		{"expired", ``, `}`},
		{"superseded", `,"supersededBy":{"principal":{"kind":"operator","name":"admin"},"value":false,"ts":"2026-12-06T17:00:30Z"}`,
			`,"by":"admin","byKind":"operator","why":"a write of false was applied since"}`},
	} {
		t.Run(tc.status, func(t *testing.T) {
			b, c := run(t, bench())
			c.Up()
			c.Wait(t, 0, approvalsState, noneWaiting)
			c.Wait(t, 0, heaterApproval, "{}")
			settled(t, c)
			req := `"id":"c-3","device":"sim.heater","value":true,"requester":"bench-agent","requesterKind":"agent",` +
				`"reason":"preheat","createdAt":"2026-12-06T17:00:00Z","expiresAt":"2026-12-06T17:02:00Z"`

			mark := c.Mark()
			event(b, "confirmationRequested", notice("c-3", "pending", ""))
			ev := c.Wait(t, mark, approvalsEvent, `{"event_type":"requested",`+req+`}`)
			wantBefore(t, c, mark, ev, pub{approvalsState, pendingOne}, pub{heaterApproval, heaterWaiting})

			mark = c.Mark()
			event(b, "confirmationResolved", notice("c-3", tc.status, tc.extra))
			ev = c.Wait(t, mark, approvalsEvent, `{"event_type":"`+tc.status+`",`+req+tc.eventTail)
			wantBefore(t, c, mark, ev, pub{approvalsState, noneWaiting}, pub{heaterApproval, "{}"})
		})
	}
}

// wantBefore checks that ev is not retained and that each of want was
// published, retained, from mark on and before it.
func wantBefore(t *testing.T, c *mqtttest.Client, mark int, ev mqtttest.Published, want ...pub) {
	t.Helper()
	if ev.Retain {
		t.Errorf("event %s retained: the broker would replay it", ev.Payload)
	}
	pubs := c.Published(mark)
	at := slices.Index(pubs, ev)
	for _, w := range want {
		i := slices.Index(pubs, mqtttest.Published{Topic: w.topic, Payload: w.payload, Retain: true})
		if i < 0 || i > at {
			t.Errorf("%s %s: at %d, want retained before the event (at %d); published %v", w.topic, w.payload, i, at, pubs)
		}
	}
}

// Two requests: the count is 2 and the newest is shown; one resolved
// leaves the other.
func TestApprovalsNewest(t *testing.T) {
	b, c := run(t, bench())
	c.Up()
	settled(t, c)
	event(b, "confirmationRequested", notice("c-3", "pending", ""))
	event(b, "confirmationRequested", `{"confirmation":{"id":"c-4","device":"sim.led","value":false,"requestedBy":{"kind":"operator","name":"alice"},`+
		`"status":"pending","createdAt":"2026-12-06T17:00:05Z","expiresAt":"2026-12-06T17:02:05Z"}}`)
	c.Wait(t, 0, approvalsState, `{"pending":2,"newest":{"id":"c-4","device":"sim.led","value":false,"requester":"alice","requesterKind":"operator",`+
		`"createdAt":"2026-12-06T17:00:05Z","expiresAt":"2026-12-06T17:02:05Z"}}`)
	c.Wait(t, 0, "openhal/gw/sim.led/approval", `{"approval":"waiting for approval","id":"c-4","requested":false,"requester":"alice",`+
		`"requesterKind":"operator","expiresAt":"2026-12-06T17:02:05Z","pending":1}`)
	mark := c.Mark()
	event(b, "confirmationResolved", `{"confirmation":{"id":"c-4","device":"sim.led","value":false,"status":"cancelled"}}`)
	c.Wait(t, mark, approvalsState, pendingOne)
	c.Wait(t, mark, "openhal/gw/sim.led/approval", "{}")
}

// A request resolved while the bridge asked the Hub for the pending ones
// is not taken from the (older) list; one made meanwhile is kept.
func TestApprovalsSyncRace(t *testing.T) {
	h := bench()
	b, c := run(t, h)
	c.Up()
	settled(t, c)
	h.mu.Lock()
	h.pending = []openhal.Confirmation{heaterRequest("c-3")} // the list, as the Hub made it
	h.onPending = func() {                                   // the events that came meanwhile
		event(b, "confirmationResolved", notice("c-3", "expired", ""))
		event(b, "confirmationRequested", notice("c-5", "pending", ""))
	}
	h.mu.Unlock()
	mark := c.Mark()
	if err := b.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	// A topic no Sync touches becomes due after it: once it is out, so
	// is the Sync's count (the outbox keeps the order topics became due).
	event(b, "deviceAdded", `{"device":{"id":"pump.flow","kind":"sensor","source":"adapter:pump","access":"r","risk":"low","schema":{"type":"number"},"state":"ok"}}`)
	c.Wait(t, mark, "openhal/gw/pump.flow/availability", "online")
	last := ""
	for _, p := range c.Published(mark) {
		if p.Topic == approvalsState {
			last = p.Payload
		}
	}
	if !strings.HasPrefix(last, `{"pending":1,"newest":{"id":"c-5"`) {
		t.Errorf("after the Sync the count is %s, want c-5 alone pending", last)
	}
}

// While the broker is away events are not kept (they tell of now); the
// count and attributes are, and are published when it is back.
func TestApprovalsBrokerAway(t *testing.T) {
	b, c := run(t, bench())
	c.Up()
	settled(t, c)
	c.Down(errors.New("gone"))
	mark := c.Mark()
	event(b, "confirmationRequested", notice("c-3", "pending", ""))
	c.Up()
	c.Wait(t, mark, approvalsState, pendingOne)
	c.Wait(t, mark, heaterApproval, heaterWaiting)
	settled(t, c)
	event(b, "value", `{"device":"sim.led","value":true}`)
	c.Wait(t, mark, "openhal/gw/sim.led/state", "true")
	for _, p := range c.Published(mark) {
		if p.Topic == approvalsEvent {
			t.Errorf("event kept while the broker was away: %s", p.Payload)
		}
	}
}

// A gateway without hub.confirmations: the bridge says so and follows
// the events.
func TestApprovalsWithoutList(t *testing.T) {
	h := bench()
	h.pendErr = errors.New("method not found: hub.confirmations")
	b, c := run(t, h)
	c.Up()
	settled(t, c)
	event(b, "confirmationRequested", notice("c-3", "pending", ""))
	c.Wait(t, 0, approvalsState, pendingOne)
}

// A removed device's approval attributes are cleared.
func TestApprovalsDeviceRemoved(t *testing.T) {
	b, c := run(t, bench())
	c.Up()
	settled(t, c)
	mark := c.Mark()
	event(b, "deviceRemoved", `{"device":"sim.heater","reason":"unplugged"}`)
	if p := c.Wait(t, mark, heaterApproval, ""); p.Payload != "" || !p.Retain {
		t.Errorf("sim.heater's approval %+v, want cleared (empty, retained)", p)
	}
}
