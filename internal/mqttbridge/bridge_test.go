package mqttbridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/adapter"
	"github.com/openhal/gateway/internal/mqttbridge"
	"github.com/openhal/gateway/internal/mqttbridge/mqtttest"
	"github.com/openhal/gateway/openhal"
)

// On a connection: online first, the subscriptions, then every retained
// message; the bridge's own device is not bridged.
func TestConnect(t *testing.T) {
	h := bench()
	_, c := run(t, h)
	c.Up()
	want := map[string]string{
		"homeassistant/device/gw/config":     "sim.heater,sim.led,sim.meter",
		"openhal/gw/sim.led/state":           "false",
		"openhal/gw/sim.led/availability":    "online",
		"openhal/gw/sim.meter/state":         `"READY"`,
		"openhal/gw/sim.heater/state":        "false",
		"openhal/gw/_bridge/state":           `{"adapters":"1/1","devices":3,"retainedCommandsDropped":0,"commandsDropped":0,"eventsDropped":0,"stopsRefused":0}`,
		"openhal/gw/sim.heater/availability": "online",
	}
	for topic, payload := range want {
		c.Wait(t, 0, topic, payload)
	}
	c.Wait(t, 0, "openhal/gw/_stop/state", `{"stopped":false}`) // hub.stopped: none
	pubs := c.Published(0)
	if p := pubs[0]; p != (mqtttest.Published{Topic: "openhal/gw/status", Payload: "online", Retain: true}) {
		t.Fatalf("first publish %+v, want the gateway online", p)
	}
	for _, p := range pubs {
		if !p.Retain {
			t.Errorf("%s not retained", p.Topic)
		}
		if strings.Contains(p.Topic, "mqtt.broker") {
			t.Errorf("the bridge's own device published: %s", p.Topic)
		}
	}
	subs := c.Subscriptions()
	if w := []string{"openhal/gw/+/set", "homeassistant/status"}; !slices.Equal(subs, w) {
		t.Errorf("subscriptions %v, want %v", subs, w)
	}
	if s := h.lastStatus(); s != "connected mqtt://127.0.0.1:1883" {
		t.Errorf("mqtt.broker %q", s)
	}
}

// Events become retained messages: value → state, deviceState →
// availability, stopped/resumed → the stop state, added/removed → config
// (a removed device's topics cleared).
// A stop engaged before the bridge started is on _stop/state at once:
// events would tell of it only when it changes.
func TestStopInForceAtStart(t *testing.T) {
	h := bench()
	h.stopped = &openhal.StopInfo{Principal: openhal.Principal{Kind: "operator", Name: "alice"}, Reason: "lunch",
		TS: time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)}
	_, c := run(t, h)
	c.Up()
	c.Wait(t, 0, "openhal/gw/_stop/state", `{"stopped":true,"by":"alice","reason":"lunch","since":"2026-12-02T12:00:00Z"}`)
}

func TestEvents(t *testing.T) {
	for _, tc := range []struct {
		name, typ, data string
		want            []pub // in any order, each retained
	}{
		{"value", "value", `{"device":"sim.led","value": true,"ts":"2026-01-02T03:04:05Z","devSeq":3}`,
			[]pub{{"openhal/gw/sim.led/state", "true"}}},
		{"object value", "value", `{"device":"sim.temperature","value":{"temperature": 20.5}}`,
			[]pub{{"openhal/gw/sim.temperature/state", `{"temperature":20.5}`}}},
		{"fault", "deviceState", `{"device":"sim.meter","state":"fault","fault":"timeout"}`,
			[]pub{{"openhal/gw/sim.meter/availability", "offline"}}},
		{"offline", "deviceState", `{"device":"sim.led","state":"offline"}`,
			[]pub{{"openhal/gw/sim.led/availability", "offline"}}},
		{"stopped", "stopped", `{"principal":{"kind":"operator","name":"admin"},"reason":"smoke","ts":"2026-01-02T03:04:05.123Z","safeApplied":[],"failed":[]}`,
			[]pub{{"openhal/gw/_stop/state", `{"stopped":true,"by":"admin","reason":"smoke","since":"2026-01-02T03:04:05Z"}`}}},
		{"resumed", "resumed", `{"principal":{"kind":"operator","name":"admin"},"ts":"2026-01-02T03:04:05Z"}`,
			[]pub{{"openhal/gw/_stop/state", `{"stopped":false}`}}},
		{"added", "deviceAdded", `{"device":{"id":"pump.flow","kind":"sensor","source":"adapter:pump","access":"r","risk":"low","schema":{"type":"number"},"state":"ok"}}`,
			[]pub{
				{"homeassistant/device/gw/config", "pump.flow,sim.heater,sim.led,sim.meter"},
				{"openhal/gw/pump.flow/availability", "online"},
				{"openhal/gw/_bridge/state", `{"adapters":"2/2","devices":4,"retainedCommandsDropped":0,"commandsDropped":0,"eventsDropped":0,"stopsRefused":0}`},
			}},
		{"removed", "deviceRemoved", `{"device":"sim.meter","reason":"unplugged"}`,
			[]pub{
				{"homeassistant/device/gw/config", "-sim.meter"},
				{"homeassistant/device/gw/config", "sim.heater,sim.led"},
				{"openhal/gw/sim.meter/state", ""},
				{"openhal/gw/sim.meter/availability", ""},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, c := run(t, bench())
			c.Up()
			settled(t, c)
			mark := c.Mark()
			event(b, tc.typ, tc.data)
			for _, w := range tc.want {
				if got := c.Wait(t, mark, w.topic, w.payload); !got.Retain {
					t.Errorf("%s not retained", w.topic)
				}
			}
		})
	}
}

// While the broker is away only the newest value of each device is kept,
// and published once it is back.
func TestDisconnectedKeepsNewest(t *testing.T) {
	h := bench()
	b, c := run(t, h)
	c.Up()
	settled(t, c)
	c.Down(errors.New("gone"))
	mark := c.Mark()
	for i := range 1000 {
		event(b, "value", fmt.Sprintf(`{"device":"sim.led","value":%v}`, i%2 == 0))
		event(b, "value", fmt.Sprintf(`{"device":"sim.meter","value":"line %d"}`, i))
	}
	if n := b.Due(); n > 2*len(h.devs)+4 {
		t.Errorf("%d messages kept while disconnected, want at most a few per device", n)
	}
	c.Up()
	c.Wait(t, mark, "openhal/gw/sim.meter/state", `"line 999"`)
	c.Wait(t, mark, "openhal/gw/_bridge/state", "")
	n := 0
	for _, p := range c.Published(mark) {
		if p.Topic == "openhal/gw/sim.led/state" {
			n++
			if p.Payload != "false" {
				t.Errorf("sim.led state %s, want the newest, false", p.Payload)
			}
		}
	}
	if n != 1 {
		t.Errorf("sim.led state published %d times after the reconnection, want 1", n)
	}
}

// A command is a write through the Hub, answered on the result topic;
// the state topic is left to the Hub's value events.
func TestCommands(t *testing.T) {
	stopped := &adapter.Error{Code: -32006, Message: "emergency stop engaged"}
	// A value of 1 MiB is echoed as its first 256 bytes and its length.
	long := `"` + strings.Repeat("x", 1<<20) + `"`
	longStart, _ := json.Marshal(long[:256])
	for _, tc := range []struct {
		name, device, payload string
		answer                func(string) (adapter.WriteResult, error)
		wantWrite             string // "" when no write is made
		result                string
	}{
		{"applied", "sim.led", "true", nil, "true", `{"status":"applied","value":true}`},
		{"string", "sim.meter", `"*IDN?"`, nil, `"*IDN?"`, `{"status":"applied","value":"*IDN?"}`},
		{"pending", "sim.heater", "true", func(string) (adapter.WriteResult, error) {
			return adapter.WriteResult{Status: "pending", Confirmation: []byte(`{"id":"c-1","device":"sim.heater","status":"pending","expiresAt":"2026-01-02T03:06:05Z"}`)}, nil
		}, "true", `{"status":"pending","value":true,"confirmation":{"id":"c-1","expiresAt":"2026-01-02T03:06:05Z"}}`},
		{"refused", "sim.led", "true", func(string) (adapter.WriteResult, error) {
			return adapter.WriteResult{}, fmt.Errorf("call device.write: %w", stopped)
		}, "true", `{"status":"refused","value":true,"error":{"code":-32006,"name":"STOPPED","message":"emergency stop engaged"}}`},
		{"refused, long", "sim.meter", long, func(string) (adapter.WriteResult, error) {
			return adapter.WriteResult{}, fmt.Errorf("call device.write: %w", stopped)
		}, long, `{"status":"refused","valueStart":` + string(longStart) + `,"valueBytes":1048578,"error":{"code":-32006,"name":"STOPPED","message":"emergency stop engaged"}}`},
		{"not JSON", "sim.meter", "*IDN?", nil, "",
			`{"status":"refused","error":{"code":-32602,"name":"INVALID_PARAMS","message":"payload \"*IDN?\" is not JSON: send true, 40 or \"a string\" (in quotes)"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := bench()
			h.answer = tc.answer
			_, c := run(t, h)
			c.Up()
			settled(t, c)
			mark := c.Mark()
			topic := "openhal/gw/" + tc.device + "/set"
			c.Deliver(mqttMessage(topic, tc.payload, false))
			if tc.wantWrite != "" {
				w := h.nextWrite(t)
				if w != (write{tc.device, tc.wantWrite, "mqtt: " + topic}) {
					t.Errorf("write %+v", w)
				}
			}
			r := c.Wait(t, mark, "openhal/gw/"+tc.device+"/result", "")
			if r.Payload != tc.result || r.Retain {
				t.Errorf("result %s (retained %v)\nwant %s", r.Payload, r.Retain, tc.result)
			}
			for _, p := range c.Published(mark) {
				if p.Topic == "openhal/gw/"+tc.device+"/state" {
					t.Errorf("state published by the command itself: %s", p.Payload)
				}
			}
		})
	}
}

// A pending write's resolution is published as a result; another
// client's confirmations are not the bridge's to answer.
func TestConfirmationResolved(t *testing.T) {
	h := bench()
	h.answer = func(string) (adapter.WriteResult, error) {
		return adapter.WriteResult{Status: "pending", Confirmation: []byte(`{"id":"c-7","expiresAt":"2026-01-02T03:06:05Z"}`)}, nil
	}
	b, c := run(t, h)
	c.Up()
	settled(t, c)
	c.Deliver(mqttMessage("openhal/gw/sim.heater/set", "true", false))
	c.Wait(t, 0, "openhal/gw/sim.heater/result", "")
	mark := c.Mark()
	event(b, "confirmationResolved", `{"confirmation":{"id":"c-other","device":"sim.heater","value":true,"status":"approved"}}`)
	event(b, "confirmationResolved", `{"confirmation":{"id":"c-7","device":"sim.heater","value":true,"status":"approved","expiresAt":"2026-01-02T03:06:05Z"}}`)
	r := c.Wait(t, mark, "openhal/gw/sim.heater/result", "")
	if want := `{"status":"approved","value":true,"confirmation":{"id":"c-7","expiresAt":"2026-01-02T03:06:05Z"}}`; r.Payload != want {
		t.Fatalf("result %s\nwant %s", r.Payload, want)
	}
	// Only results count: the approvals' count and attributes
	// (approvals.go) follow every request and resolution, the other
	// client's too, and may come after the mark from the bridge's start.
	var results []string
	for _, p := range c.Published(mark) {
		if strings.HasSuffix(p.Topic, "/result") {
			results = append(results, p.Topic+" "+string(p.Payload))
		}
	}
	if len(results) != 1 {
		t.Errorf("%d results published, want the one: %v", len(results), results)
	}
}

// A command with the retain flag is never acted on, and counted; a
// stop with the retain flag is engaged all the same (a stop is never
// ignored), and an empty retained stop, which only clears the broker's
// copy, engages nothing and is counted.
func TestRetainedCommandDropped(t *testing.T) {
	h := bench()
	_, c := run(t, h)
	c.Up()
	settled(t, c)
	mark := c.Mark()
	c.Deliver(mqttMessage("openhal/gw/sim.led/set", "true", true))
	c.Deliver(mqttMessage("openhal/gw/_stop/set", "", true))
	c.Wait(t, mark, "openhal/gw/_bridge/state", `{"adapters":"1/1","devices":3,"retainedCommandsDropped":2,"commandsDropped":0,"eventsDropped":0,"stopsRefused":0}`)
	c.Deliver(mqttMessage("openhal/gw/sim.led/set", "false", false))
	if w := h.nextWrite(t); w.value != "false" {
		t.Fatalf("write %+v: the retained command was acted on", w)
	}
	select {
	case r := <-h.stops:
		t.Fatalf("stop engaged by clearing a retained stop: %s", r)
	default:
	}
	c.Deliver(mqttMessage("openhal/gw/_stop/set", "STOP", true))
	if r := h.nextStop(t); r != "mqtt: openhal/gw/_stop/set" {
		t.Errorf("retained stop's reason %q", r)
	}
}

// Any payload on the stop topic engages the stop (fail-safe,
// docs/mqtt.md); a JSON object's non-empty string reason is its reason,
// cut to the Hub's bound; a refusal is logged and counted.
func TestStopCommand(t *testing.T) {
	const topic = "mqtt: openhal/gw/_stop/set"
	long := strings.Repeat("é", openhal.MaxReasonBytes)
	for _, tc := range []struct {
		name, payload, reason string
		stopErr               error
		refused               int
	}{
		{"STOP", "STOP", topic, nil, 0},
		{"reason", `{"reason":"smoke"}`, "mqtt: smoke", nil, 0},
		{"reason after spaces", ` {"reason":"smoke"}`, "mqtt: smoke", nil, 0},
		{"refused", "STOP", topic, errors.New("no stop"), 1},
		{"any word", "halt", topic, nil, 0},
		{"Home Assistant's press", "PRESS", topic, nil, 0},
		{"empty", "", topic, nil, 0},
		{"stopped false", `{"stopped":false}`, topic, nil, 0},
		{"reason not a string", `{"reason":42}`, topic, nil, 0},
		{"empty reason", `{"reason":""}`, topic, nil, 0},
		{"not JSON", `{"reason":`, topic, nil, 0},
		{"long reason", `{"reason":"` + long + `"}`, ("mqtt: " + long)[:openhal.MaxReasonBytes], nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := bench()
			h.stopErr = tc.stopErr
			_, c := run(t, h)
			c.Up()
			settled(t, c)
			mark := c.Mark()
			c.Deliver(mqttMessage("openhal/gw/_stop/set", tc.payload, false))
			if r := h.nextStop(t); r != tc.reason {
				t.Errorf("stop reason %q, want %q", r, tc.reason)
			}
			if tc.refused > 0 {
				c.Wait(t, mark, "openhal/gw/_bridge/state", fmt.Sprintf(`{"adapters":"1/1","devices":3,"retainedCommandsDropped":0,"commandsDropped":0,"eventsDropped":0,"stopsRefused":%d}`, tc.refused))
			}
		})
	}
}

// The stop has its own lane: it reaches the Hub while a command waits
// there (a write that does not return), and is not dropped when a flood
// has filled the commands' queue.
func TestStopBesideCommands(t *testing.T) {
	h := bench()
	release := make(chan struct{})
	h.answer = func(string) (adapter.WriteResult, error) {
		<-release
		return adapter.WriteResult{Status: "applied"}, nil
	}
	defer close(release)
	_, c := run(t, h)
	c.Up()
	settled(t, c)
	mark := c.Mark()
	c.Deliver(mqttMessage("openhal/gw/sim.led/set", "true", false))
	h.nextWrite(t) // one command is at the Hub, and stays there
	for range 500 {
		c.Deliver(mqttMessage("openhal/gw/sim.led/set", "true", false))
	}
	// 64 wait in the queue; the rest are dropped.
	c.Wait(t, mark, "openhal/gw/_bridge/state", `{"adapters":"1/1","devices":3,"retainedCommandsDropped":0,"commandsDropped":436,"eventsDropped":0,"stopsRefused":0}`)
	c.Deliver(mqttMessage("openhal/gw/_stop/set", `{"reason":"flood"}`, false))
	if r := h.nextStop(t); r != "mqtt: flood" {
		t.Errorf("stop reason %q", r)
	}
}

// Stops asked while one is on its way to the Hub coalesce into one more,
// with the newest reason: none is lost, and a burst of them is not a
// burst of calls.
func TestStopsCoalesce(t *testing.T) {
	h := bench()
	release := make(chan struct{})
	h.stopWait = release
	_, c := run(t, h)
	c.Up()
	settled(t, c)
	c.Deliver(mqttMessage("openhal/gw/_stop/set", `{"reason":"first"}`, false))
	if r := h.nextStop(t); r != "mqtt: first" {
		t.Fatalf("first stop %q", r)
	}
	for i := range 100 {
		c.Deliver(mqttMessage("openhal/gw/_stop/set", fmt.Sprintf(`{"reason":"again %d"}`, i), false))
	}
	close(release)
	if r := h.nextStop(t); r != "mqtt: again 99" {
		t.Errorf("second stop %q, want the newest reason", r)
	}
	select {
	case r := <-h.stops:
		t.Errorf("a third stop %q: repeated stops were not coalesced", r)
	case <-time.After(100 * time.Millisecond):
	}
}

// Home Assistant's "online" republishes the config and the states.
func TestHomeAssistantOnline(t *testing.T) {
	_, c := run(t, bench())
	c.Up()
	settled(t, c)
	mark := c.Mark()
	c.Deliver(mqttMessage("homeassistant/status", "offline", false))
	c.Deliver(mqttMessage("homeassistant/status", "online", false))
	c.Wait(t, mark, "homeassistant/device/gw/config", "")
	c.Wait(t, mark, "openhal/gw/sim.led/state", "false")
}

// mqtt.broker says why the broker is out of reach.
func TestBrokerStatus(t *testing.T) {
	h := bench()
	_, c := run(t, h)
	c.Up()
	c.Down(&mqttbridge.RefusedError{Code: 0x87})
	if s, want := h.lastStatus(), "disconnected: not authorized: check adapters.settings.mqtt.username and password"; s != want {
		t.Fatalf("mqtt.broker %q, want %q", s, want)
	}
}

// pub is a retained message expected.
type pub struct{ topic, payload string }

// Before the first Sync the bench is unknown: a connection publishes the
// gateway online, and neither a discovery config without devices nor a
// "0/0" diagnostics that Home Assistant would show; both follow the Sync.
func TestNothingOfTheBenchBeforeSync(t *testing.T) {
	b := mqttbridge.New(mqttbridge.Options{Config: testConfig(), Hub: bench(), Discovery: discovery, Own: "mqtt.", Log: slog.New(slog.DiscardHandler)})
	c := mqtttest.New()
	c.Attach(b)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Run(ctx, c)
	}()
	defer func() { cancel(); <-done }()
	c.Up()
	c.Wait(t, 0, "openhal/gw/status", "online")
	if err := b.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	c.Wait(t, 0, "homeassistant/device/gw/config", "sim.heater,sim.led,sim.meter")
	for _, p := range c.Published(0) {
		if p.Topic == "openhal/gw/_bridge/state" && strings.Contains(p.Payload, `"devices":0`) ||
			p.Topic == "homeassistant/device/gw/config" && p.Payload != "sim.heater,sim.led,sim.meter" {
			t.Errorf("published before the bench was known: %s %s", p.Topic, p.Payload)
		}
	}
}
