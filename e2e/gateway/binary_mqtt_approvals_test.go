package gateway_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"testing"

	"github.com/openhal/gateway/internal/mqttbridge/mosquittotest"
)

// TestBinaryMQTTApprovals is issue 32's Home Assistant story on the real
// binary: a high-risk write from MQTT (Home Assistant's switch) is a
// request that Home Assistant sees — the Pending approvals sensor's count
// 1 with the request as attributes, a "requested" event, the switch's
// real state with "waiting for approval" — and `gateway confirm approve`
// (then, for a second request, reject) ends it: the count 0, the
// resolution's event, the switch's attributes cleared and its real new
// state. Entity names have no label hints.
func TestBinaryMQTTApprovals(t *testing.T) {
	t.Parallel()
	_, port := startBroker(t, mosquittotest.Options{})
	g, _, _ := mqttGateway(t, mqttAdapter(t), mqttSettings(port, "bench"))
	b := &mqttBench{g: g, id: "bench", port: port, s: subscribe(t, port)}
	// Events as published (retain-as-published): a retained event would
	// be replayed by the broker, and Home Assistant ignores those.
	ev := subscribeAsPublished(t, port, b.tp.ApprovalsEvent(b.id))

	// The config alone (TestBinaryMQTT checks every state; sim.meter's
	// first comes 5 s in).
	_, cfg := b.s.msg(t, 0, q(b.tp.DeviceConfig(b.id)), `\{.*\}`)
	d := parseDiscovery(t, cfg)
	for key, want := range map[string]map[string]any{
		"sensor__approvals": {"p": "sensor", "name": "Pending approvals", "state_topic": b.tp.ApprovalsState(b.id),
			"json_attributes_topic": b.tp.ApprovalsState(b.id)},
		"event__approval_events":   {"p": "event", "state_topic": b.tp.ApprovalsEvent(b.id)},
		"switch_sim_heater":        {"p": "switch", "json_attributes_topic": b.tp.Approval(b.id, "sim.heater")},
		"binary_sensor_sim_door":   {"name": "Door contact", "device_class": "door"},
		"binary_sensor_sim_button": {"name": "Button"},
	} {
		for f, v := range want {
			if got := d.Cmps[key][f]; got != v {
				t.Errorf("%s.%s = %v, want %v", key, f, got, v)
			}
		}
	}
	b.s.msg(t, 0, q(b.tp.ApprovalsState(b.id)), q(`{"pending":0,"newest":{}}`))
	b.s.msg(t, 0, q(b.tp.Approval(b.id, "sim.heater")), q(`{}`))

	t.Log("approved")
	req := b.heaterRequest(t, ev, "true")
	gwOK(t, g.admin("confirm", "approve", req.id)...)
	b.resolved(t, ev, req, "approved", "true")

	t.Log("rejected") // from off: writing the safe value (false) never waits
	mark := b.s.out.len()
	gwOK(t, g.admin("write", "sim.heater", "false")...)
	b.s.msg(t, mark, q(b.tp.State(b.id, "sim.heater")), "false")
	req = b.heaterRequest(t, ev, "true")
	gwOK(t, g.admin("confirm", "reject", req.id)...)
	b.resolved(t, ev, req, "rejected", "false")
}

// waiting is a request as heaterRequest saw it: its id, and the lines of
// the subscribers from which to look for its end.
type waiting struct {
	id          string
	count, attr int // the lines of its count 1 and its "waiting for approval"
	mark, ev    int // the lines when it was sent
}

// heaterRequest sends value to sim.heater as Home Assistant's switch does
// and checks what Home Assistant then sees: the count 1 with the request,
// the "requested" event, the switch's real state (unchanged) with its
// "waiting for approval".
func (b *mqttBench) heaterRequest(t *testing.T, ev *mqttSub, value string) waiting {
	t.Helper()
	before := gwOK(t, b.g.admin("read", "sim.heater")...)
	w := waiting{mark: b.s.out.len(), ev: ev.out.len()}
	publish(t, b.port, b.tp.Set(b.id, "sim.heater"), value, false)
	_, r := b.result(t, w.mark, "sim.heater")
	if r.Status != "pending" || r.Confirmation == nil {
		t.Fatalf("sim.heater result %+v, want pending", r)
	}
	w.id = r.Confirmation.ID

	i, p := b.s.msg(t, w.mark, q(b.tp.ApprovalsState(b.id)), `\{"pending":1,.*\}`)
	w.count = i
	var state struct {
		Pending int            `json:"pending"`
		Newest  map[string]any `json:"newest"`
	}
	mustJSON(t, p, &state)
	n := state.Newest
	if n["id"] != w.id || n["device"] != "sim.heater" || fmt.Sprint(n["value"]) != value || n["requester"] != "mqtt" ||
		n["requesterKind"] != "adapter" || n["label"] != "Heater relay" ||
		!regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`).MatchString(fmt.Sprint(n["expiresAt"])) {
		t.Errorf("pending sensor's attributes %v, want request %s of %s by the adapter mqtt, with its expiry", n, w.id, value)
	}
	i, a := b.s.msg(t, w.mark, q(b.tp.Approval(b.id, "sim.heater")), `\{"approval":"waiting for approval",.*\}`)
	w.attr = i
	var attrs map[string]any
	mustJSON(t, a, &attrs)
	if attrs["id"] != w.id || fmt.Sprint(attrs["requested"]) != value || attrs["requester"] != "mqtt" {
		t.Errorf("switch attributes %v, want request %s for %s", attrs, w.id, value)
	}
	if e := waitEvent(t, ev, w.ev, "requested"); e["id"] != w.id || fmt.Sprint(e["value"]) != value {
		t.Errorf("requested event %v, want %s for %s", e, w.id, value)
	}
	// The switch shows the real state: nothing on its state topic, and
	// the Hub's value unchanged.
	if got := b.s.msgs(w.mark, q(b.tp.State(b.id, "sim.heater"))); len(got) > 0 {
		t.Errorf("sim.heater's state published while its request waits: %q", got)
	}
	if now := gwOK(t, b.g.admin("read", "sim.heater")...); now != before {
		t.Errorf("sim.heater is %q while its request waits, was %q", now, before)
	}
	return w
}

// resolved checks what Home Assistant sees once request w ended with
// status: the event, the count 0, the switch's attributes cleared, and
// its state topic and the Hub at want.
func (b *mqttBench) resolved(t *testing.T, ev *mqttSub, w waiting, status, want string) {
	t.Helper()
	if e := waitEvent(t, ev, w.ev, status); e["id"] != w.id || e["by"] != "admin" {
		t.Errorf("%s event %v, want request %s, by admin", status, e, w.id)
	}
	b.s.msg(t, w.count, q(b.tp.ApprovalsState(b.id)), q(`{"pending":0,"newest":{}}`))
	b.s.msg(t, w.attr, q(b.tp.Approval(b.id, "sim.heater")), q(`{}`))
	b.wantRead(t, "sim.heater", want)
	if status == "approved" {
		b.s.msg(t, w.mark, q(b.tp.State(b.id, "sim.heater")), want)
		return
	}
	b.marker(t) // the bridge has handled what came before
	if got := b.s.msgs(w.mark, q(b.tp.State(b.id, "sim.heater"))); len(got) > 0 {
		t.Errorf("sim.heater's state published after a %s request: %q", status, got)
	}
}

// subscribeAsPublished is a subscriber that sees each message's retain
// flag as it was published (mosquitto_sub --retain-as-published).
func subscribeAsPublished(t *testing.T, port int, topic string) *mqttSub {
	t.Helper()
	c := newChild("mosquitto_sub", exec.Command("stdbuf", "-oL", mqttTool(t, "mosquitto_sub"), "-h", "127.0.0.1", "-p", fmt.Sprint(port),
		"-V", "mqttv5", "-q", "1", "-d", "--retain-as-published", "-F", "%r %t %p", "-t", topic))
	c.start(t)
	c.out.waitFor(t, 0, `received SUBACK`, waitLong)
	return &mqttSub{c}
}

// waitEvent waits for an event of type typ from line from on, published
// without the retain flag, and returns it.
func waitEvent(t *testing.T, ev *mqttSub, from int, typ string) map[string]any {
	t.Helper()
	_, m := ev.out.waitFor(t, from, `^([01]) \S+ (\{"event_type":"`+typ+`".*\})$`, waitLong)
	if m[1] != "0" {
		t.Errorf("event %s published retained: the broker would replay it", m[2])
	}
	var e map[string]any
	mustJSON(t, m[2], &e)
	if !slices.Contains([]string{"requested", "approved", "rejected", "cancelled", "expired", "failed", "superseded"}, e["event_type"].(string)) {
		t.Errorf("event type %v", e["event_type"])
	}
	return e
}

func mustJSON(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
}
