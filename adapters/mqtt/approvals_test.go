package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/mqttbridge/mosquittotest"
)

// haView is what Home Assistant makes of the broker's retained messages:
// the newest payload of each topic, as a subscriber to # receives them.
type haView struct {
	s    *subscriber
	last map[string]string
	cmps map[string]map[string]any // the discovery config's components

	events []string // payloads on the event topic, in order
	bad    []string // events retained, or not JSON with an event_type
}

// until reads messages until cond holds, failing after wait.
func (v *haView) until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(wait)
	for !cond() {
		select {
		case l := <-v.s.lines:
			v.take(t, l)
		case <-deadline:
			t.Fatalf("%s: not seen within %v; retained now: %v", what, wait, v.last)
		}
	}
}

// take records one line "<retain> <topic> <payload>".
func (v *haView) take(t *testing.T, l string) {
	parts := strings.SplitN(l, " ", 3)
	if len(parts) < 2 {
		return
	}
	payload := ""
	if len(parts) == 3 {
		payload = parts[2]
	}
	if parts[1] == "openhal/gw/_approvals/event" {
		v.events = append(v.events, payload)
		if parts[0] != "0" {
			v.bad = append(v.bad, l)
		}
	}
	if parts[1] == "homeassistant/device/gw/config" {
		v.cmps = components(t, payload)
	}
	if parts[0] == "1" {
		v.last[parts[1]] = payload
	}
}

// template renders the templates the discovery uses, as Home Assistant's
// Jinja does: {{ value_json.<name> }} and {{ value_json.<name> | tojson }}.
// Any other template fails the test: a template this reading does not
// know is one the test does not check.
var templateForm = regexp.MustCompile(`^\{\{ value_json\.([A-Za-z_]+)( \| tojson)? \}\}$`)

func render(t *testing.T, tmpl, payload string) string {
	t.Helper()
	if tmpl == "" {
		return payload
	}
	m := templateForm.FindStringSubmatch(tmpl)
	if m == nil {
		t.Fatalf("template %q: not one this test renders", tmpl)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(payload), &obj); err != nil {
		t.Fatalf("payload %q for %s: %v", payload, tmpl, err)
	}
	v := obj[m[1]]
	if m[2] != "" {
		return string(v)
	}
	var s any
	_ = json.Unmarshal(v, &s)
	return fmt.Sprint(s)
}

// entity is a component's state and attributes as Home Assistant shows
// them now ("" and nil while its topics have nothing retained).
func (v *haView) entity(t *testing.T, key string) (state string, attrs map[string]any) {
	t.Helper()
	c, ok := v.cmps[key]
	if !ok {
		t.Fatalf("no component %s in %v", key, slices.Sorted(func(yield func(string) bool) {
			for k := range v.cmps {
				if !yield(k) {
					return
				}
			}
		}))
	}
	str := func(k string) string { s, _ := c[k].(string); return s }
	if p, ok := v.last[str("state_topic")]; ok {
		state = render(t, str("value_template"), p)
		if on := str("state_on"); on != "" {
			state = map[bool]string{true: "on", false: "off"}[state == on]
		}
	}
	if p, ok := v.last[str("json_attributes_topic")]; ok && str("json_attributes_topic") != "" {
		if err := json.Unmarshal([]byte(render(t, str("json_attributes_template"), p)), &attrs); err != nil {
			t.Fatalf("%s attributes %q: %v (Home Assistant: JSON result was not a dictionary)", key, p, err)
		}
	}
	return state, attrs
}

// The approvals as Home Assistant reads them from a real mosquitto: the
// discovery's sensor, event and switch; a request waiting when the
// adapter starts is the sensor's 1, with the newest's device, value,
// requester, id and expiry as attributes, and the switch shows its real
// state with "waiting for approval"; its approval is an event, not
// retained, and leaves 0 and no attributes; a request from Home
// Assistant's own switch is counted and shown the same way.
func TestApprovalsAsHomeAssistantReadsThem(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	v := &haView{s: subscribe(t, b.URL, "#"), last: map[string]string{}}
	publish(t, b.URL, "ready", "1", true)
	v.s.wait("1 ready 1") // subscribed
	d := startRaw(t, fmt.Sprintf(`{"broker":%q,"gateway":"gw","name":"Bench"}`, b.URL))
	d.mu.Lock()
	d.pending = `[{"id":"c-3","device":"sim.heater","value":true,"requestedBy":{"kind":"agent","name":"bench-agent"},"reason":"preheat",` +
		`"status":"pending","createdAt":"2026-12-06T17:00:00Z","expiresAt":"2026-12-06T17:02:00Z"}]`
	d.mu.Unlock()
	if e := <-d.initErr; e != nil {
		t.Fatalf("initialize refused: %s", e)
	}
	d.send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)

	v.until(t, "the discovery config", func() bool { return v.cmps != nil })
	ev, ok := v.cmps["event__approval_events"]
	if !ok || ev["p"] != "event" || !slices.Contains(anyStrings(ev["event_types"]), "approved") {
		t.Fatalf("event component %v", ev)
	}
	if v.cmps["switch_sim_heater"]["json_attributes_topic"] != "openhal/gw/sim.heater/approval" {
		t.Fatalf("switch_sim_heater %v: no approval attributes", v.cmps["switch_sim_heater"])
	}

	v.until(t, "a request waiting at start", func() bool {
		n, attrs := v.entity(t, "sensor__approvals")
		sw, swAttrs := v.entity(t, "switch_sim_heater")
		return n == "1" && attrs["device"] == "sim.heater" && attrs["value"] == true && attrs["requester"] == "bench-agent" &&
			attrs["id"] == "c-3" && attrs["expiresAt"] == "2026-12-06T17:02:00Z" &&
			sw == "off" && swAttrs["approval"] == "waiting for approval" && swAttrs["requested"] == true
	})

	d.event("confirmationResolved", `{"confirmation":{"id":"c-3","device":"sim.heater","value":true,"requestedBy":{"kind":"agent","name":"bench-agent"},`+
		`"status":"approved","approvedBy":{"kind":"operator","name":"admin"},"createdAt":"2026-12-06T17:00:00Z","expiresAt":"2026-12-06T17:02:00Z"}}`)
	d.event("value", `{"device":"sim.heater","value":true,"ts":"2026-12-06T17:00:10Z","devSeq":2}`)
	approved := v.waitEvent(t, "approved")
	if approved["id"] != "c-3" || approved["by"] != "admin" {
		t.Errorf("approved event %v", approved)
	}
	v.until(t, "none waiting, the switch on", func() bool {
		n, attrs := v.entity(t, "sensor__approvals")
		sw, swAttrs := v.entity(t, "switch_sim_heater")
		return n == "0" && len(attrs) == 0 && sw == "on" && swAttrs != nil && len(swAttrs) == 0
	})

	publish(t, b.URL, "openhal/gw/sim.heater/set", "false", false) // Home Assistant's switch
	d.nextWrite()
	d.event("confirmationRequested", `{"confirmation":{"id":"c-1","device":"sim.heater","value":false,"requestedBy":{"kind":"adapter","name":"mqtt"},`+
		`"reason":"mqtt: openhal/gw/sim.heater/set","status":"pending","createdAt":"2026-12-06T17:01:00Z","expiresAt":"2026-12-06T17:03:00Z"}}`)
	if r := v.waitEvent(t, "requested"); r["requester"] != "mqtt" || r["value"] != false {
		t.Errorf("requested event %v", r)
	}
	v.until(t, "Home Assistant's own request waiting", func() bool {
		n, attrs := v.entity(t, "sensor__approvals")
		sw, swAttrs := v.entity(t, "switch_sim_heater")
		return n == "1" && attrs["id"] == "c-1" && sw == "on" && swAttrs["approval"] == "waiting for approval" && swAttrs["requested"] == false
	})
}

// waitEvent waits for an event of type typ on the event topic, not
// retained, and returns its attributes; its type must be one the event
// entity declares.
func (v *haView) waitEvent(t *testing.T, typ string) map[string]any {
	t.Helper()
	var got map[string]any
	seen := 0
	v.until(t, "a "+typ+" event", func() bool {
		for ; seen < len(v.events) && got == nil; seen++ {
			var e map[string]any
			if err := json.Unmarshal([]byte(v.events[seen]), &e); err != nil {
				t.Fatalf("event %q: %v", v.events[seen], err)
			}
			et, _ := e["event_type"].(string)
			if !slices.Contains(anyStrings(v.cmps["event__approval_events"]["event_types"]), et) {
				t.Fatalf("event %q: event_type %q is not one the entity declares: Home Assistant drops it", v.events[seen], et)
			}
			if et == typ {
				got = e
			}
		}
		return got != nil
	})
	if len(v.bad) > 0 {
		t.Fatalf("events retained (the broker would replay them; Home Assistant ignores them): %v", v.bad)
	}
	v.events = v.events[seen:]
	return got
}

func anyStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
