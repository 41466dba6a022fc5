package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/mqttbridge/mosquittotest"
)

// subscriber is mosquitto_sub on a filter, one line per message:
// "<retain> <topic> <payload>", the retain flag as published.
type subscriber struct {
	t     *testing.T
	lines chan string
}

func subscribe(t *testing.T, broker, filter string) *subscriber {
	t.Helper()
	u, _ := url.Parse(broker)
	cmd := exec.Command("mosquitto_sub", "-h", u.Hostname(), "-p", u.Port(), "-V", "mqttv5", "-q", "1", "-t", filter, "--retain-as-published", "-F", "%r %t %p")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("mosquitto_sub: %v", err)
	}
	s := &subscriber{t: t, lines: make(chan string, 256)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return s
}

// wait waits for the line want, and returns the lines before it.
func (s *subscriber) wait(want string) []string {
	s.t.Helper()
	var seen []string
	deadline := time.After(wait)
	for {
		select {
		case l := <-s.lines:
			if l == want {
				return seen
			}
			seen = append(seen, l)
		case <-deadline:
			s.t.Fatalf("no %q within %v; got:\n%s", want, wait, strings.Join(seen, "\n"))
		}
	}
}

// waitAll waits for every line of wants, in any order (a new
// subscription gets the retained messages in the broker's order).
func (s *subscriber) waitAll(wants ...string) {
	s.t.Helper()
	missing := map[string]bool{}
	for _, w := range wants {
		missing[w] = true
	}
	var seen []string
	deadline := time.After(wait)
	for len(missing) > 0 {
		select {
		case l := <-s.lines:
			delete(missing, l)
			seen = append(seen, l)
		case <-deadline:
			s.t.Fatalf("missing %v within %v; got:\n%s", missing, wait, strings.Join(seen, "\n"))
		}
	}
}

// publish publishes with mosquitto_pub.
func publish(t *testing.T, broker, topic, payload string, retain bool) {
	t.Helper()
	u, _ := url.Parse(broker)
	args := []string{"-h", u.Hostname(), "-p", u.Port(), "-V", "mqttv5", "-q", "1", "-t", topic, "-m", payload}
	if retain {
		args = append(args, "-r")
	}
	if out, err := exec.Command("mosquitto_pub", args...).CombinedOutput(); err != nil {
		t.Fatalf("mosquitto_pub: %v: %s", err, out)
	}
}

func settings(broker string, extra ...string) string {
	return fmt.Sprintf(`{"broker":%q,"gateway":"gw","discoveryPrefix":""%s}`, broker, strings.Join(extra, ""))
}

// A command round trip: set → device.write with its reason → result;
// the state follows the Hub's value; a high-risk command is pending,
// its state unchanged until the approval's value.
func TestCommandRoundTrip(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	d := startAdapter(t, settings(b.URL))
	d.waitBroker("connected mqtt://127.0.0.1:")
	s := subscribe(t, b.URL, "openhal/gw/#")
	s.waitAll("1 openhal/gw/status online", "1 openhal/gw/sim.led/state false")

	publish(t, b.URL, "openhal/gw/sim.led/set", "true", false)
	if w := d.nextWrite(); w.Device != "sim.led" || string(w.Value) != "true" || w.Reason != "mqtt: openhal/gw/sim.led/set" {
		t.Fatalf("write %+v", w)
	}
	s.wait(`0 openhal/gw/sim.led/result {"status":"applied","value":true}`)
	d.event("value", `{"device":"sim.led","value":true,"ts":"2026-01-02T03:04:06Z","devSeq":2}`)
	s.wait("1 openhal/gw/sim.led/state true")

	publish(t, b.URL, "openhal/gw/sim.heater/set", "true", false)
	d.nextWrite()
	before := s.wait(`0 openhal/gw/sim.heater/result {"status":"pending","value":true,"confirmation":{"id":"c-1","expiresAt":"2026-01-02T03:06:05Z"}}`)
	d.event("confirmationResolved", `{"confirmation":{"id":"c-1","device":"sim.heater","value":true,"status":"approved","expiresAt":"2026-01-02T03:06:05Z"}}`)
	before = append(before, s.wait(`0 openhal/gw/sim.heater/result {"status":"approved","value":true,"confirmation":{"id":"c-1","expiresAt":"2026-01-02T03:06:05Z"}}`)...)
	for _, l := range before {
		if strings.HasPrefix(l, "1 openhal/gw/sim.heater/state") {
			t.Errorf("heater state published while pending: %s", l)
		}
	}
	d.event("value", `{"device":"sim.heater","value":true,"ts":"2026-01-02T03:04:07Z","devSeq":2}`)
	s.wait("1 openhal/gw/sim.heater/state true")
}

// A retained command is never acted on: neither the one the broker kept
// from before (retain handling 2) nor one published with the flag now.
func TestRetainedCommandIgnored(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	publish(t, b.URL, "openhal/gw/sim.led/set", "true", true)
	d := startAdapter(t, settings(b.URL))
	d.waitBroker("connected")
	s := subscribe(t, b.URL, "openhal/gw/#")
	s.wait("1 openhal/gw/sim.led/state false")
	publish(t, b.URL, "openhal/gw/sim.led/set", "true", true)
	publish(t, b.URL, "openhal/gw/sim.led/set", `"plain"`, false)
	if w := d.nextWrite(); string(w.Value) != `"plain"` {
		t.Fatalf("first write %s: a retained command was acted on", w.Value)
	}
	s.wait(`1 openhal/gw/_bridge/state {"adapters":"0/0","devices":2,"retainedCommandsDropped":1,"commandsDropped":0,"eventsDropped":0,"stopsRefused":0}`)
}

// A wrong password: mqtt.broker says so, in words.
func TestWrongPassword(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{Users: map[string]string{"gw": "right"}})
	d := startAdapter(t, settings(b.URL, `,"username":"gw","password":"wrong"`))
	d.waitBroker("disconnected: not authorized: check adapters.settings.mqtt.username and password")
}

// The broker killed mid-run and restarted: the bridge reconnects and
// republishes the states, with what changed meanwhile.
func TestBrokerRestart(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	d := startAdapter(t, settings(b.URL))
	d.waitBroker("connected")
	s := subscribe(t, b.URL, "openhal/gw/#")
	s.wait("1 openhal/gw/sim.led/state false")
	b.Kill()
	d.waitBroker("disconnected: connection to mqtt://127.0.0.1:")
	d.event("value", `{"device":"sim.led","value":true,"ts":"2026-01-02T03:04:06Z","devSeq":2}`)
	b.Restart() // no persistence: the broker comes back empty
	d.waitBroker("connected")
	s2 := subscribe(t, b.URL, "openhal/gw/#")
	s2.waitAll("1 openhal/gw/status online", "1 openhal/gw/sim.led/state true", "1 openhal/gw/sim.heater/state false")
}

// TLS with a client certificate, from the settings' files.
func TestTLSClientCertificate(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{TLS: true, ClientCert: true})
	d := startAdapter(t, settings(b.TLSURL, fmt.Sprintf(`,"tls":{"ca":%q,"cert":%q,"key":%q}`, b.CAFile, b.ClientCertFile, b.ClientKeyFile)))
	d.waitBroker("connected mqtts://127.0.0.1:")
	s := subscribe(t, b.URL, "openhal/gw/#")
	s.wait("1 openhal/gw/status online")
}

// Bad settings refuse to start, naming the field.
func TestBadSettings(t *testing.T) {
	d := startRaw(t, `{"broker":"http://127.0.0.1:1883"}`)
	select {
	case e := <-d.initErr:
		if !strings.Contains(string(e), "adapters.settings.mqtt.broker") {
			t.Fatalf("initialize refused with %s, want the field named", e)
		}
	case <-time.After(wait):
		t.Fatal("initialize not answered")
	}
	<-d.done
	if d.code != 1 {
		t.Fatalf("exit code %d, want 1", d.code)
	}
}

// A stop asked on MQTT engages the Hub's stop through hub.stop (the
// gateway's extension of protocol 1), with the words given as its reason;
// any other payload engages it too (fail-safe), with the topic as its
// reason.
func TestStopCommand(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	d := startAdapter(t, settings(b.URL))
	d.waitBroker("connected")
	s := subscribe(t, b.URL, "openhal/gw/#")
	s.wait("1 openhal/gw/sim.led/state false")
	publish(t, b.URL, "openhal/gw/_stop/set", "STOP", false)
	if got := d.nextStop(); got != "mqtt: openhal/gw/_stop/set" {
		t.Fatalf("hub.stop reason %q", got)
	}
	publish(t, b.URL, "openhal/gw/_stop/set", `{"reason":"smoke from the heater"}`, false)
	if got := d.nextStop(); got != "mqtt: smoke from the heater" {
		t.Fatalf("hub.stop reason %q", got)
	}
	publish(t, b.URL, "openhal/gw/_stop/set", "please", false)
	if got := d.nextStop(); got != "mqtt: openhal/gw/_stop/set" {
		t.Fatalf("hub.stop reason %q", got)
	}
}

// Discovery: one device-based config for the bench; a device removed is
// taken out of Home Assistant (its entry with only its platform, then the
// config without it) and its retained topics cleared; Home Assistant's
// "online" has the config published again.
func TestDiscovery(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	s := subscribe(t, b.URL, "#")
	publish(t, b.URL, "ready", "1", true) // retained: it comes, subscribed before or after
	s.wait("1 ready 1")                   // subscribed: what follows comes in the order published
	d := startAdapter(t, fmt.Sprintf(`{"broker":%q,"gateway":"gw","name":"Bench"}`, b.URL))
	d.waitBroker("connected")
	cfg := s.waitPrefix("1 homeassistant/device/gw/config ")
	cmps := components(t, cfg)
	if c, ok := cmps["switch_sim_led"]; !ok || c["p"] != "switch" || c["command_topic"] != "openhal/gw/sim.led/set" {
		t.Errorf("sim.led's component %v (all: %v)", c, cmps)
	}
	if _, ok := cmps["switch_sim_heater"]; !ok {
		t.Errorf("no sim.heater component: %v", cmps)
	}
	s.waitAll("1 openhal/gw/sim.heater/state false", "1 openhal/gw/sim.heater/availability online") // after the config

	d.event("deviceRemoved", `{"device":"sim.heater","reason":"test"}`)
	// In the order published, the topics interleaved: a config the bridge
	// published before it took the event (it may publish the same config
	// again at start) still holds sim.heater whole; then comes the removal
	// (its entry with only its platform), then the config without it.
	removal, after, cleared := false, false, 0
	for !after || cleared < 2 {
		l := s.next()
		switch {
		case strings.HasPrefix(l, "1 homeassistant/device/gw/config "):
			c, ok := components(t, strings.TrimPrefix(l, "1 homeassistant/device/gw/config "))["switch_sim_heater"]
			switch {
			case !removal && ok && len(c) == 1 && c["p"] == "switch":
				removal = true
			case !removal && ok:
				// published before the event: not yet the removal
			case !removal:
				t.Fatalf("sim.heater left the config before its removal entry: %s", l)
			case ok:
				t.Fatalf("sim.heater still in the config after its removal entry: %v", c)
			default:
				after = true
			}
		case l == "1 openhal/gw/sim.heater/state " || l == "1 openhal/gw/sim.heater/availability ":
			cleared++
		}
	}

	publish(t, b.URL, "homeassistant/status", "online", false)
	s.waitPrefix("0 homeassistant/status online")
	again := components(t, s.waitPrefix("1 homeassistant/device/gw/config "))
	if _, ok := again["switch_sim_led"]; !ok {
		t.Errorf("republished config without sim.led: %v", again)
	}
}

// next returns the next line.
func (s *subscriber) next() string {
	s.t.Helper()
	select {
	case l := <-s.lines:
		return l
	case <-time.After(wait):
		s.t.Fatalf("no line within %v", wait)
	}
	return ""
}

// waitPrefix waits for a line starting with prefix, and returns the rest.
func (s *subscriber) waitPrefix(prefix string) string {
	s.t.Helper()
	var seen []string
	deadline := time.After(wait)
	for {
		select {
		case l := <-s.lines:
			if rest, ok := strings.CutPrefix(l, prefix); ok {
				return rest
			}
			seen = append(seen, l)
		case <-deadline:
			s.t.Fatalf("no line %q... within %v; got:\n%s", prefix, wait, strings.Join(seen, "\n"))
			return ""
		}
	}
}

// components returns a device discovery payload's components by key.
func components(t *testing.T, payload string) map[string]map[string]any {
	t.Helper()
	var m struct {
		Cmps map[string]map[string]any `json:"cmps"`
	}
	if err := json.Unmarshal([]byte(payload), &m); err != nil {
		t.Fatalf("discovery payload %q: %v", payload, err)
	}
	return m.Cmps
}
