package gateway_test

// Helpers of the MQTT bridge's whole-binary tests: a mosquitto of the
// test's own (package mosquittotest), its command-line clients as the
// subscriber and publisher a user would run, and a gateway running the
// mqtt adapter installed with `gateway adapter install` from a folder
// the test builds.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/e2e/binaries"
	"github.com/openhal/gateway/internal/homeassistant"
	"github.com/openhal/gateway/internal/mqttbridge/mosquittotest"
)

// startBroker starts a mosquitto of the test's own on a free loopback
// port, and returns it with that port.
func startBroker(t *testing.T, o mosquittotest.Options) (*mosquittotest.Broker, int) {
	t.Helper()
	b := mosquittotest.Start(t, o)
	port, err := strconv.Atoi(strings.TrimPrefix(b.URL, "mqtt://127.0.0.1:"))
	if err != nil {
		t.Fatalf("broker URL %q: %v", b.URL, err)
	}
	return b, port
}

// mqttTool finds one of mosquitto's clients (mosquittotest.Need: skipped
// without it, except in CI).
func mqttTool(t *testing.T, name string) string {
	t.Helper()
	return mosquittotest.Need(t, name)
}

// mqttSub is `mosquitto_sub` on every topic but $SYS, one message a line:
// the retain flag (1 for a retained message sent at subscribe, 0 for a
// live one), the topic, the payload.
type mqttSub struct{ *child }

// subscribe starts a subscriber on the broker at port and waits until
// the broker has acknowledged its subscription, so that whatever is
// published next reaches it.
func subscribe(t *testing.T, port int, topics ...string) *mqttSub {
	t.Helper()
	if len(topics) == 0 {
		topics = []string{"#"}
	}
	// stdbuf: mosquitto_sub writes through stdio, which holds a pipe's
	// output in 4 KiB blocks.
	args := []string{"-oL", mqttTool(t, "mosquitto_sub"), "-h", "127.0.0.1", "-p", fmt.Sprint(port), "-V", "mqttv5", "-q", "1", "-d", "-F", "%r %t %p"}
	for _, tp := range topics {
		args = append(args, "-t", tp)
	}
	c := newChild("mosquitto_sub", exec.Command("stdbuf", args...))
	c.start(t)
	c.out.waitFor(t, 0, `received SUBACK`, waitLong)
	return &mqttSub{c}
}

// msg waits for a message on topic (a regular expression) whose payload
// matches payload, from line index from on, and returns its line index
// and payload.
func (s *mqttSub) msg(t *testing.T, from int, topic, payload string) (int, string) {
	t.Helper()
	i, m := s.out.waitFor(t, from, `^[01] `+topic+` (`+payload+`)$`, waitLong)
	return i, m[1]
}

// msgs returns the payloads of the messages on topic (a regular
// expression) seen so far from line index from on.
func (s *mqttSub) msgs(from int, topic string) []string {
	re := regexp.MustCompile(`^[01] ` + topic + ` (.*)$`)
	s.out.mu.Lock()
	defer s.out.mu.Unlock()
	var out []string
	for _, l := range s.out.lines[min(from, len(s.out.lines)):] {
		if m := re.FindStringSubmatch(l); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// publish runs `mosquitto_pub` once, at QoS 1, with the retain flag when
// retain is set.
func publish(t *testing.T, port int, topic, payload string, retain bool) {
	t.Helper()
	args := []string{"-h", "127.0.0.1", "-p", fmt.Sprint(port), "-V", "mqttv5", "-q", "1", "-t", topic, "-m", payload}
	if retain {
		args = append(args, "-r")
	}
	if out, err := exec.Command(mqttTool(t, "mosquitto_pub"), args...).CombinedOutput(); err != nil {
		t.Fatalf("mosquitto_pub %s %s: %v\n%s", topic, payload, err, out)
	}
}

// The mqtt adapter's folder: its binary, built once per test run
// (package binaries), and its manifest, written beside it once.
var (
	mqttOnce sync.Once
	mqttErr  error
)

// mqttAdapter returns the mqtt adapter as an installable folder, as
// `make adapters` builds it: the binary and its adapter.json.
func mqttAdapter(t *testing.T) string {
	t.Helper()
	skipShort(t)
	dir := filepath.Dir(binaries.Build(t, binaries.Program{Pkg: "./adapters/mqtt", Env: []string{"CGO_ENABLED=0"}}))
	mqttOnce.Do(func() {
		man, err := os.ReadFile("../../adapters/mqtt/adapter.json")
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "adapter.json"), man, 0o644)
		}
		mqttErr = err
	})
	if mqttErr != nil {
		t.Fatal(mqttErr)
	}
	return dir
}

// mqttSettings are the lines of the configuration's adapters section
// for the mqtt adapter: adapters.settings.mqtt as a flow mapping (broker
// and gateway id, and any more fields given), and no shipped adapters,
// so that the adapter run is the one the test installed whatever the
// machine has in /usr/lib/gateway/adapters.
func mqttSettings(port int, gatewayID string, more ...string) string {
	fields := append([]string{fmt.Sprintf("broker: mqtt://127.0.0.1:%d", port), "gateway: " + gatewayID}, more...)
	return "  shipped: \"\"\n  settings:\n    mqtt: {" + strings.Join(fields, ", ") + "}\n"
}

// mqttGateway installs the adapter folder src into a fresh state
// directory and starts a gateway on the sim board with the mqtt adapter
// enabled under settings. It returns the gateway, the adapter's pid and
// the configuration file, for a restart.
func mqttGateway(t *testing.T, src, settings string) (*gateway, int, string) {
	t.Helper()
	state, cfg := installAdapter(t, src, "mqtt", settings)
	g := startMQTTGateway(t, state, cfg)
	return g, adapterRunning(t, g, "mqtt"), cfg
}

// startMQTTGateway starts a gateway with the state directory dir and the
// configuration cfg, which enables the mqtt adapter: it is ready with the
// sim board's 7 devices, and mqtt.broker too when the adapter was quick.
func startMQTTGateway(t *testing.T, dir, cfg string) *gateway {
	t.Helper()
	return readyGatewayAt(t, startChild(t, gatewayRunArgs(dir, "--config", cfg)...), dir, "7|8")
}

// admin are the client flags for g with its admin token.
func (g *gateway) admin(args ...string) []string {
	return append(args, "--hub", g.ws, "--state-dir", g.dir)
}

// haDiscovery is Home Assistant's device-based discovery payload, as much
// of it as these tests read: the components and the topics they follow
// (package homeassistant's own tests check every field).
type haDiscovery struct {
	Device map[string]any            `json:"dev"`
	Origin map[string]any            `json:"o"`
	Cmps   map[string]map[string]any `json:"cmps"`
}

// stateTopics returns the state topic of each component, with the
// abbreviations and the "~" base of Home Assistant's discovery expanded.
func (d haDiscovery) stateTopics() map[string]string {
	out := map[string]string{}
	for id, c := range d.Cmps {
		tp, _ := c["state_topic"].(string)
		if tp == "" {
			tp, _ = c["stat_t"].(string)
		}
		if base, ok := c["~"].(string); ok {
			if strings.HasPrefix(tp, "~") {
				tp = base + tp[1:]
			} else if strings.HasSuffix(tp, "~") {
				tp = tp[:len(tp)-1] + base
			}
		}
		out[id] = tp
	}
	return out
}

// parseDiscovery decodes a discovery payload, failing the test when it is
// not one.
func parseDiscovery(t *testing.T, payload string) haDiscovery {
	t.Helper()
	var d haDiscovery
	if err := json.Unmarshal([]byte(payload), &d); err != nil || d.Origin == nil || d.Device == nil || len(d.Cmps) == 0 {
		t.Fatalf("discovery payload %q: %v; want dev, o and cmps", payload, err)
	}
	return d
}

// brokerValue polls `gateway read mqtt.broker` until it matches pattern:
// the adapter's device has no event a client command could wait on
// without a watch, and the connection changes within a second or two.
func brokerValue(t *testing.T, g *gateway, pattern string, within time.Duration) string {
	t.Helper()
	re := regexp.MustCompile(pattern)
	deadline := time.Now().Add(within)
	for {
		r := gw(t, g.admin("read", "mqtt.broker")...)
		if r.code == 0 && re.MatchString(r.stdout) {
			return strings.TrimSpace(r.stdout)
		}
		if time.Now().After(deadline) {
			t.Fatalf("mqtt.broker did not match %s within %s: last read exit %d, %q %q", pattern, within, r.code, r.stdout, r.stderr)
		}
		<-time.After(100 * time.Millisecond)
	}
}

// mqttBench is a gateway seen through MQTT: its id in topics, the
// broker's port and a subscriber to every topic.
type mqttBench struct {
	g    *gateway
	id   string
	port int
	s    *mqttSub
	tp   homeassistant.Topics // the zero value is the layout's defaults
}

// commandResult is a message of <base>/<device>/result.
type commandResult struct {
	Status       string          `json:"status"`
	Value        json.RawMessage `json:"value"`
	Confirmation *struct {
		ID        string `json:"id"`
		ExpiresAt string `json:"expiresAt"`
	} `json:"confirmation"`
	Error *struct {
		Code    int    `json:"code"`
		Name    string `json:"name"`
		Message string `json:"message"`
	} `json:"error"`
}

// result waits for the next result of device's commands from line from
// on, and returns its line index and the result.
func (b *mqttBench) result(t *testing.T, from int, device string) (int, commandResult) {
	t.Helper()
	i, p := b.s.msg(t, from, q(b.tp.Result(b.id, device)), `\{.*\}`)
	var r commandResult
	if err := json.Unmarshal([]byte(p), &r); err != nil {
		t.Fatalf("%s result %q: %v", device, p, err)
	}
	return i, r
}

// marker sends a command to sim.fan and waits for its result: the
// bridge has then handled every command sent before it. A bridge that
// has just connected may not have subscribed yet: the command (the same
// value each time) is sent again each second until it is answered.
func (b *mqttBench) marker(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for {
		mark := b.s.out.len()
		publish(t, b.port, b.tp.Set(b.id, "sim.fan"), "40", false)
		i, _, err := b.s.out.await(mark, `^[01] `+q(b.tp.Result(b.id, "sim.fan"))+` `, time.Second)
		if err == nil {
			if _, r := b.result(t, i, "sim.fan"); r.Status != "applied" {
				t.Fatalf("sim.fan result %+v, want applied", r)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no answer to a command to sim.fan within %s", waitLong)
		}
	}
}

// wantRead checks a device's value with `gateway read`.
func (b *mqttBench) wantRead(t *testing.T, device, want string) {
	t.Helper()
	if out := gwOK(t, b.g.admin("read", device)...); out != want+"\n" {
		t.Errorf("%s: read %s = %q, want %s", b.id, device, out, want)
	}
}

// q quotes a topic for a pattern: device ids hold dots.
func q(topic string) string { return regexp.QuoteMeta(topic) }
