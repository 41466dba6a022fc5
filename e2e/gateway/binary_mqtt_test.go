package gateway_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/mqttbridge/mosquittotest"
)

// Whole-binary tests of the MQTT bridge (issue 16): the gateway on the
// sim board with the mqtt adapter, installed with `gateway adapter
// install` and enabled in the configuration, against a mosquitto of the
// test's own, seen through mosquitto_sub and driven with mosquitto_pub as
// a user would. Topics are built with package homeassistant's Topics,
// the layout every part shares (docs/mqtt.md).

// TestBinaryMQTT is the user's story: the bench appears in the broker
// (discovery, states, availability); a switch command toggles sim.led; a
// heater command waits for a person and the state follows only after the
// approval; a retained command is never acted on; the stop is engaged
// over MQTT and its state published; the broker killed and restarted gets every state again; a
// gateway killed with SIGKILL is marked offline by its will, and a
// restarted one does not act on the retained command left on the broker.
func TestBinaryMQTT(t *testing.T) {
	t.Parallel()
	broker, port := startBroker(t, mosquittotest.Options{})
	g, pid, cfg := mqttGateway(t, mqttAdapter(t), mqttSettings(port, "bench"))
	b := &mqttBench{g: g, id: "bench", port: port, s: subscribe(t, port)}

	t.Log("discovery, states and availability")
	b.s.msg(t, 0, q(b.tp.Status(b.id)), "online")
	b.discovered(t, 0)
	brokerValue(t, g, `^"connected mqtt://127\.0\.0\.1:\d+"\n$`, waitLong)

	t.Log("a switch command")
	mark := b.s.out.len()
	publish(t, port, b.tp.Set(b.id, "sim.led"), "true", false)
	if _, r := b.result(t, mark, "sim.led"); r.Status != "applied" || string(r.Value) != "true" {
		t.Errorf("sim.led result %+v, want applied true", r)
	}
	b.s.msg(t, mark, q(b.tp.State(b.id, "sim.led")), "true")
	b.wantRead(t, "sim.led", "true")

	t.Log("a high-risk command waits for a person")
	b.heaterPending(t)

	t.Log("a retained command is not acted on")
	b.retainedIgnored(t)

	t.Log("the stop")
	b.stop(t)

	t.Log("the broker killed and restarted")
	broker.Kill()
	brokerValue(t, g, `^"disconnected: `, waitLong)
	gwOK(t, g.admin("write", "sim.fan", "70")...) // while the broker is away
	broker.Restart()
	b.s = subscribe(t, port) // the broker kept nothing: what comes was published again
	b.s.msg(t, 0, q(b.tp.Status(b.id)), "online")
	b.s.msg(t, 0, q(b.tp.State(b.id, "sim.fan")), "70")
	b.discovered(t, 0)
	brokerValue(t, g, `^"connected `, waitLong)

	t.Log("the gateway killed with SIGKILL, and started again")
	publish(t, port, b.tp.Set(b.id, "sim.led"), "true", true) // a ghost left on the broker
	mark = b.s.out.len()
	g.kill(t)
	b.s.msg(t, mark, q(b.tp.Status(b.id)), "offline")
	waitDead(t, pid)
	b.g = startMQTTGateway(t, g.dir, cfg)
	b.s.msg(t, mark, q(b.tp.Status(b.id)), "online")
	b.marker(t)
	b.wantRead(t, "sim.led", "false") // the ghost was not acted on
}

// heaterPending: a command to sim.heater (risk high) is pending with a
// confirmation; its state topic keeps false until `gateway confirm
// approve`, then follows, and a second result says approved.
func (b *mqttBench) heaterPending(t *testing.T) {
	t.Helper()
	mark := b.s.out.len()
	publish(t, b.port, b.tp.Set(b.id, "sim.heater"), "true", false)
	i, r := b.result(t, mark, "sim.heater")
	if r.Status != "pending" || r.Confirmation == nil || !regexp.MustCompile(`^c-\d+$`).MatchString(r.Confirmation.ID) {
		t.Fatalf("sim.heater result %+v, want pending with a confirmation", r)
	}
	if _, err := time.Parse(time.RFC3339, r.Confirmation.ExpiresAt); err != nil {
		t.Errorf("expiresAt %q: %v", r.Confirmation.ExpiresAt, err)
	}
	// The bridge publishes the Hub's values in order: once sim.led's
	// change is out, a change of the heater before it would be too.
	gwOK(t, b.g.admin("write", "sim.led", "false")...)
	led, _ := b.s.msg(t, i, q(b.tp.State(b.id, "sim.led")), "false")
	if got := b.s.msgs(mark, q(b.tp.State(b.id, "sim.heater"))); len(got) > 0 {
		t.Errorf("sim.heater's state was published before the approval: %q", got)
	}
	b.wantRead(t, "sim.heater", "false")
	gwOK(t, b.g.admin("confirm", "approve", r.Confirmation.ID)...)
	b.s.msg(t, led, q(b.tp.State(b.id, "sim.heater")), "true")
	if _, r2 := b.result(t, led, "sim.heater"); r2.Status != "approved" || r2.Confirmation == nil || r2.Confirmation.ID != r.Confirmation.ID {
		t.Errorf("sim.heater's second result %+v, want approved %s", r2, r.Confirmation.ID)
	}
}

// retainedIgnored: a command published with the retain flag is dropped
// and counted, however the broker hands it over; the next command is
// acted on.
func (b *mqttBench) retainedIgnored(t *testing.T) {
	t.Helper()
	mark := b.s.out.len()
	publish(t, b.port, b.tp.Set(b.id, "sim.led"), "true", true)
	b.s.msg(t, mark, q(b.tp.BridgeState(b.id)), `\{.*"retainedCommandsDropped":1[,}].*`)
	b.marker(t)
	if got := b.s.msgs(mark, q(b.tp.Base(b.id)+"/sim.led/")+`(?:state|result)`); len(got) > 0 {
		t.Errorf("a retained command to sim.led was acted on or answered: %q", got)
	}
	b.wantRead(t, "sim.led", "false")
	publish(t, b.port, b.tp.Set(b.id, "sim.led"), "", true) // clears it from the broker
}

// stop: any payload on the stop's command topic engages the stop
// (fail-safe: "stop please" and {"stopped":false} too), with the topic as
// its reason; {"reason"} engages it (hub.stop, as the adapter) with that
// reason: its state is published with who, why and since when, the heater
// is driven to its safe value and a command is refused with STOPPED; no
// MQTT command lifts it, `gateway resume` does, and the state follows.
func (b *mqttBench) stop(t *testing.T) {
	t.Helper()
	for _, payload := range []string{"stop please", `{"stopped":false}`} {
		mark := b.s.out.len()
		publish(t, b.port, b.tp.StopSet(b.id), payload, false)
		b.s.msg(t, mark, q(b.tp.StopState(b.id)), `\{"stopped":true,"by":"mqtt","reason":"mqtt: `+q(b.tp.StopSet(b.id))+`",.*\}`)
		if st := b.status(t); st == nil {
			t.Errorf("gateway status after %q on the stop topic: not stopped", payload)
		}
		gwOK(t, b.g.admin("resume")...)
		b.s.msg(t, mark, q(b.tp.StopState(b.id)), `\{"stopped":false\}`)
	}

	mark := b.s.out.len()
	publish(t, b.port, b.tp.StopSet(b.id), `{"reason":"drill over mqtt"}`, false)
	_, p := b.s.msg(t, mark, q(b.tp.StopState(b.id)), `\{.*"stopped":true.*\}`)
	var st struct {
		Stopped    bool
		By, Reason string
		Since      string
	}
	if err := json.Unmarshal([]byte(p), &st); err != nil || st.Reason != "mqtt: drill over mqtt" || st.By != "mqtt" {
		t.Errorf(`stop state %q (%v): want by "mqtt", reason "mqtt: drill over mqtt"`, p, err)
	}
	if _, err := time.Parse(time.RFC3339, st.Since); err != nil {
		t.Errorf("stop state since %q: %v", st.Since, err)
	}
	if s := b.status(t); s == nil || !strings.Contains(s.Reason, "drill over mqtt") {
		t.Errorf("gateway status after the stop over MQTT: stopped %+v", s)
	}
	b.s.msg(t, mark, q(b.tp.State(b.id, "sim.heater")), "false")

	cmd := b.s.out.len()
	publish(t, b.port, b.tp.Set(b.id, "sim.led"), "true", false)
	if _, r := b.result(t, cmd, "sim.led"); r.Status != "refused" || r.Error == nil || r.Error.Name != "STOPPED" {
		t.Errorf("sim.led during the stop: %+v, want refused STOPPED", r)
	}

	mark = b.s.out.len()
	gwOK(t, b.g.admin("resume")...)
	b.s.msg(t, mark, q(b.tp.StopState(b.id)), `\{"stopped":false\}`)
}

// stopInfo is the stop in force, as `gateway status --json` says it.
type stopInfo struct{ Reason string }

// status returns the stop in force, or nil.
func (b *mqttBench) status(t *testing.T) *stopInfo {
	t.Helper()
	var st struct {
		Stopped *stopInfo `json:"stopped"`
	}
	if err := json.Unmarshal([]byte(gwOK(t, b.g.admin("status", "--json")...)), &st); err != nil {
		t.Fatalf("gateway status --json: %v", err)
	}
	return st.Stopped
}

// waitDead waits until pid has ended: the adapter's end is not reported
// to anyone but the gateway, which is gone; polled.
func waitDead(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the adapter (pid %d) still runs %s after the gateway was killed", pid, waitLong)
		}
		<-time.After(20 * time.Millisecond)
	}
}

// TestBinaryMQTTWrongPassword: a broker refusing the adapter's password
// shows as mqtt.broker's value, in words that say which settings to
// check, and in the adapter's log; the gateway runs on.
func TestBinaryMQTTWrongPassword(t *testing.T) {
	t.Parallel()
	_, port := startBroker(t, mosquittotest.Options{Users: map[string]string{"gateway": "right horse"}})
	g, _, _ := mqttGateway(t, mqttAdapter(t), mqttSettings(port, "bench", "username: gateway", "password: wrong horse"))
	want := `disconnected: .*check adapters\.settings\.mqtt\.username and password`
	t.Logf("mqtt.broker: %s", brokerValue(t, g, `^"`+want+`"\n$`, waitLong))
	if logs := gwOK(t, "adapter", "logs", "mqtt", "--state-dir", g.dir); !regexp.MustCompile(want).MatchString(logs) {
		t.Errorf("the adapter's log does not say it:\n%s", logs)
	}
	status := gwOK(t, "adapter", "status", "mqtt", "--hub", g.ws, "--state-dir", g.dir)
	if !regexp.MustCompile(`devices +mqtt\.broker = "` + want).MatchString(status) {
		t.Errorf("gateway adapter status mqtt does not say it:\n%s", status)
	}
	b := &mqttBench{g: g}
	b.wantRead(t, "sim.led", "false")
}

// discovered checks, from line from on, the discovery configuration: the
// gateway's components follow the bridge's topics and every sim device is
// a component following its own state topic (package homeassistant's
// tests check the fields); each of those topics has a value, and each
// device an availability.
func (b *mqttBench) discovered(t *testing.T, from int) haDiscovery {
	t.Helper()
	_, p := b.s.msg(t, from, q(b.tp.DeviceConfig(b.id)), `\{.*\}`)
	d := parseDiscovery(t, p)
	var topics []string
	for id, tp := range d.stateTopics() {
		switch {
		case tp == "" && d.Cmps[id]["p"] != "button":
			t.Errorf("%s: component %s has no state topic", b.id, id)
		case tp == "", d.Cmps[id]["p"] == "event": // events come when something happens
		default:
			topics = append(topics, tp)
		}
	}
	for _, tp := range append([]string{b.tp.StopState(b.id), b.tp.BridgeState(b.id)}, b.stateTopics(simDevices)...) {
		if !slices.Contains(topics, tp) {
			t.Errorf("%s: no component follows %s; state topics: %q", b.id, tp, topics)
		}
	}
	for _, tp := range topics {
		b.s.msg(t, from, q(tp), `.+`)
	}
	for _, dev := range simDevices {
		b.s.msg(t, from, q(b.tp.Availability(b.id, dev)), `online`)
	}
	return d
}

// stateTopics are the state topics of devs.
func (b *mqttBench) stateTopics(devs []string) []string {
	out := make([]string, len(devs))
	for i, dev := range devs {
		out[i] = b.tp.State(b.id, dev)
	}
	return out
}
