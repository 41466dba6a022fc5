package homeassistant

import (
	"slices"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

// lookupBench finds the sim bench's devices.
func lookupBench(id string) (device.Descriptor, bool) {
	for _, d := range simBench() {
		if d.ID == id {
			return d, true
		}
	}
	return device.Descriptor{}, false
}

var t0 = time.Date(2026, 12, 6, 17, 0, 0, 123456789, time.UTC)

func pendingReq(id, dev string, value any, by string, created time.Time) openhal.Confirmation {
	return openhal.Confirmation{ID: id, Device: dev, Value: value, Status: openhal.ConfirmPending,
		RequestedBy: openhal.Principal{Kind: "agent", Name: by}, Reason: "preheat",
		CreatedAt: created, ExpiresAt: created.Add(2 * time.Minute)}
}

// The sensor's payload: the count and the newest request, as people
// read it (label without hints, unit symbol, times to the second); {}
// when none, which clears Home Assistant's attributes.
func TestApprovalsStatePayload(t *testing.T) {
	tests := []struct {
		name    string
		pending []openhal.Confirmation
		want    string
	}{
		{"none", nil, `{"pending":0,"newest":{}}`},
		{"one", []openhal.Confirmation{pendingReq("c-7", "sim.heater", true, "bench-agent", t0)},
			`{"pending":1,"newest":{"id":"c-7","device":"sim.heater","label":"Heater relay","value":true,` +
				`"requester":"bench-agent","requesterKind":"agent","reason":"preheat",` +
				`"createdAt":"2026-12-06T17:00:00Z","expiresAt":"2026-12-06T17:02:00Z"}}`},
		{"newest of two, with its unit", []openhal.Confirmation{
			pendingReq("c-7", "sim.heater", true, "bench-agent", t0),
			pendingReq("c-8", "sim.fan", 40.0, "alice", t0.Add(time.Second))},
			`{"pending":2,"newest":{"id":"c-8","device":"sim.fan","label":"Fan","value":40,"unit":"%",` +
				`"requester":"alice","requesterKind":"agent","reason":"preheat",` +
				`"createdAt":"2026-12-06T17:00:01Z","expiresAt":"2026-12-06T17:02:01Z"}}`},
		{"same time: the higher id", []openhal.Confirmation{
			pendingReq("c-10", "sim.led", false, "a", t0), pendingReq("c-9", "sim.heater", true, "b", t0)},
			`{"pending":2,"newest":{"id":"c-10","device":"sim.led","label":"LED","value":false,` +
				`"requester":"a","requesterKind":"agent","reason":"preheat",` +
				`"createdAt":"2026-12-06T17:00:00Z","expiresAt":"2026-12-06T17:02:00Z"}}`},
		{"unknown device", []openhal.Confirmation{pendingReq("c-1", "x.gone", 3.0, "a", t0)},
			`{"pending":1,"newest":{"id":"c-1","device":"x.gone","value":3,` +
				`"requester":"a","requesterKind":"agent","reason":"preheat",` +
				`"createdAt":"2026-12-06T17:00:00Z","expiresAt":"2026-12-06T17:02:00Z"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(ApprovalsStatePayload(tt.pending, lookupBench)); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// A device's attributes say "waiting for approval" with the newest
// request for it, and are {} once none waits.
func TestApprovalPayload(t *testing.T) {
	if got := string(ApprovalPayload(nil, lookupBench)); got != "{}" {
		t.Errorf("none: %s, want {}", got)
	}
	got := string(ApprovalPayload([]openhal.Confirmation{
		pendingReq("c-3", "sim.heater", false, "b", t0),
		pendingReq("c-4", "sim.heater", true, "mqtt", t0.Add(time.Second)),
	}, lookupBench))
	want := `{"approval":"waiting for approval","id":"c-4","requested":true,"requester":"mqtt","requesterKind":"agent",` +
		`"expiresAt":"2026-12-06T17:02:01Z","pending":2}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// An event per request and per resolution: its type is one of
// EventTypes, with who ended it and why.
func TestEventPayload(t *testing.T) {
	admin := &openhal.Principal{Kind: "operator", Name: "admin"}
	base := pendingReq("c-7", "sim.heater", true, "mqtt", t0)
	with := func(f func(*openhal.Confirmation)) openhal.Confirmation {
		c := base
		f(&c)
		return c
	}
	const req = `"id":"c-7","device":"sim.heater","label":"Heater relay","value":true,"requester":"mqtt","requesterKind":"agent",` +
		`"reason":"preheat","createdAt":"2026-12-06T17:00:00Z","expiresAt":"2026-12-06T17:02:00Z"`
	tests := []struct {
		name string
		c    openhal.Confirmation
		want string
	}{
		{"requested", base, `{"event_type":"requested",` + req + `}`},
		{"approved", with(func(c *openhal.Confirmation) { c.Status, c.ApprovedBy = "approved", admin }),
			`{"event_type":"approved",` + req + `,"by":"admin","byKind":"operator"}`},
		{"rejected", with(func(c *openhal.Confirmation) {
			c.Status, c.RejectedBy, c.ResolveReason = "rejected", admin, "not now"
		}), `{"event_type":"rejected",` + req + `,"by":"admin","byKind":"operator","why":"not now"}`},
		{"expired", with(func(c *openhal.Confirmation) { c.Status = "expired" }), `{"event_type":"expired",` + req + `}`},
		{"failed", with(func(c *openhal.Confirmation) {
			c.Status, c.ApprovedBy, c.Error = "failed", admin, &openhal.ErrorObject{Code: -32006, Message: "the emergency stop is engaged"}
		}), `{"event_type":"failed",` + req + `,"by":"admin","byKind":"operator","why":"the emergency stop is engaged"}`},
		{"superseded by a write", with(func(c *openhal.Confirmation) {
			c.Status, c.SupersededBy = "superseded", &openhal.SupersededBy{Principal: *admin, Value: false}
		}), `{"event_type":"superseded",` + req + `,"by":"admin","byKind":"operator","why":"a write of false was applied since"}`},
		{"superseded by a request", with(func(c *openhal.Confirmation) {
			c.Status, c.SupersededBy = "superseded", &openhal.SupersededBy{Principal: base.RequestedBy, Request: "c-9"}
		}), `{"event_type":"superseded",` + req + `,"by":"mqtt","byKind":"agent","why":"replaced by request c-9"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(EventPayload(tt.c, lookupBench)); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	for _, typ := range EventTypes {
		if typ != "requested" && !slices.Contains(openhal.ConfirmStatuses, typ) {
			t.Errorf("event type %q is not a confirmation status", typ)
		}
	}
	for _, s := range openhal.ConfirmStatuses {
		if s != openhal.ConfirmPending && !slices.Contains(EventTypes, s) {
			t.Errorf("status %q has no event type: Home Assistant would drop its event", s)
		}
	}
}
