package homeassistant

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/openhal/gateway/device"
)

// Every key of the message, of dev, of o and of each component is one Home
// Assistant documents for it, and every required one is there.
func TestConfigSimBenchFollowsHomeAssistantSchema(t *testing.T) {
	topic, data, err := Config(Topics{}, benchGW, simBench())
	if err != nil {
		t.Fatal(err)
	}
	if topic != "homeassistant/device/bench/config" {
		t.Errorf("topic %q", topic)
	}
	d := decode(t, data)
	check := func(what string, obj map[string]any, required []string, allowed map[string]bool) {
		t.Helper()
		missing, unknown := missingAndUnknown(obj, required, allowed)
		if len(missing) > 0 || len(unknown) > 0 {
			t.Errorf("%s: missing %v, not documented %v", what, missing, unknown)
		}
	}
	check("message", d.all, topRequired, setOf(topAllowed))
	check("dev", d.Dev, nil, setOf(deviceAllowed))
	check("o", d.O, originRequired, setOf(originAllowed))
	if len(d.Cmps) != 12 {
		t.Errorf("%d components, want 12 (one per sim device, 5 of the gateway): %v", len(d.Cmps), slices.Sorted(mapsKeys(d.Cmps)))
	}
	entityID := regexp.MustCompile(`^[a-z_]+\.[a-z0-9]+(_[a-z0-9]+)*$`)
	for key, c := range d.Cmps {
		p, _ := c["p"].(string)
		allowed := allowedKeys(p)
		if allowed == nil {
			t.Errorf("%s: platform %q is not one of %v", key, p, slices.Sorted(mapsKeys(platforms)))
			continue
		}
		check(key, c, platforms[p].required, allowed)
		if id, _ := c["default_entity_id"].(string); !entityID.MatchString(id) || !strings.HasPrefix(id, p+".") {
			t.Errorf("%s: default_entity_id %q is not %s.<object id>", key, id, p)
		}
		checkAvailability(t, key, c)
		if c["entity_category"] != nil && c["entity_category"] != "diagnostic" && p == PlatformSensor {
			t.Errorf("%s: a sensor's entity_category must be diagnostic, got %v", key, c["entity_category"])
		}
	}
}

// checkAvailability: a list of {topic}, its mode all when there are two.
func checkAvailability(t *testing.T, key string, c map[string]any) {
	t.Helper()
	list, ok := c["availability"].([]any)
	if !ok || len(list) == 0 {
		t.Errorf("%s: no availability list", key)
		return
	}
	for _, a := range list {
		m, _ := a.(map[string]any)
		if _, ok := m["topic"].(string); !ok || len(m) != 1 {
			t.Errorf("%s: availability entry %v, want {topic}", key, a)
		}
	}
	if len(list) > 1 && c["availability_mode"] != "all" {
		t.Errorf("%s: availability_mode %v with %d topics, want all", key, c["availability_mode"], len(list))
	}
	if c["availability_topic"] != nil {
		t.Errorf("%s: availability_topic must not be used with availability", key)
	}
}

func mapsKeys[M ~map[string]V, V any](m M) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// The sim bench, field by field.
func TestConfigSimBenchFieldByField(t *testing.T) {
	d := config(t, simBench())
	avail := func(dev string) []any {
		return []any{map[string]any{"topic": "openhal/bench/status"},
			map[string]any{"topic": "openhal/bench/" + dev + "/availability"}}
	}
	gwAvail := []any{map[string]any{"topic": "openhal/bench/status"}}
	dev := func(platform, id string, fields map[string]any) map[string]any {
		uid := "openhal_bench_" + strings.ReplaceAll(id, ".", "_")
		m := map[string]any{"p": platform, "unique_id": uid, "default_entity_id": platform + "." + uid,
			"state_topic": "openhal/bench/" + id + "/state", "availability": avail(id), "availability_mode": "all"}
		for k, v := range fields {
			m[k] = v
		}
		return m
	}
	onOff := map[string]any{"payload_on": "true", "payload_off": "false", "state_on": "true", "state_off": "false"}
	with := func(a, b map[string]any) map[string]any {
		m := map[string]any{}
		for k, v := range a {
			m[k] = v
		}
		for k, v := range b {
			m[k] = v
		}
		return m
	}
	want := map[string]map[string]any{
		"switch_sim_led": dev("switch", "sim.led", with(onOff, map[string]any{
			"name": "LED", "command_topic": "openhal/bench/sim.led/set"})),
		"switch_sim_heater": dev("switch", "sim.heater", with(onOff, map[string]any{
			"name": "Heater relay (waits for approval)", "command_topic": "openhal/bench/sim.heater/set",
			"json_attributes_topic": "openhal/bench/sim.heater/approval"})),
		"binary_sensor_sim_button": dev("binary_sensor", "sim.button", map[string]any{
			"name": "Button", "payload_on": "true", "payload_off": "false"}),
		"binary_sensor_sim_door": dev("binary_sensor", "sim.door", map[string]any{
			"name": "Door contact", "payload_on": "true", "payload_off": "false", "device_class": "door"}),
		"number_sim_fan": dev("number", "sim.fan", map[string]any{
			"name": "Fan", "command_topic": "openhal/bench/sim.fan/set", "min": 0.0, "max": 100.0, "step": 1.0,
			"unit_of_measurement": "%", "mode": "slider"}),
		"text_sim_meter": dev("text", "sim.meter", map[string]any{
			"name": "Meter", "command_topic": "openhal/bench/sim.meter/set", "command_template": "{{ value | tojson }}",
			"value_template": "{{ value_json[:255] }}", "max": 255.0}),
		"sensor_sim_temperature_temperature": with(dev("sensor", "sim.temperature", map[string]any{
			"name": "Temperature", "device_class": "temperature", "unit_of_measurement": "°C",
			"state_class": "measurement", "value_template": "{{ value_json.temperature }}"}), map[string]any{
			"unique_id":         "openhal_bench_sim_temperature_temperature",
			"default_entity_id": "sensor.openhal_bench_sim_temperature_temperature"}),
		"binary_sensor__stop": {"p": "binary_sensor", "name": "Emergency stop engaged",
			"unique_id": "openhal_bench__stop", "default_entity_id": "binary_sensor.openhal_bench_stop",
			"entity_category": "diagnostic", "device_class": "safety", "state_topic": "openhal/bench/_stop/state",
			"value_template": "{{ 'on' if value_json.stopped else 'off' }}", "payload_on": "on", "payload_off": "off",
			"availability": gwAvail},
		"button__stop_button": {"p": "button", "name": "Emergency stop",
			"unique_id": "openhal_bench__stop_button", "default_entity_id": "button.openhal_bench_stop_button",
			"command_topic": "openhal/bench/_stop/set", "payload_press": "STOP", "availability": gwAvail},
		"sensor__adapters": {"p": "sensor", "name": "Adapters up",
			"unique_id": "openhal_bench__adapters", "default_entity_id": "sensor.openhal_bench_adapters",
			"entity_category": "diagnostic", "state_topic": "openhal/bench/_bridge/state",
			"value_template": "{{ value_json.adapters }}", "availability": gwAvail},
		"sensor__approvals": {"p": "sensor", "name": "Pending approvals", "icon": "mdi:account-clock",
			"unique_id": "openhal_bench__approvals", "default_entity_id": "sensor.openhal_bench_approvals",
			"state_topic": "openhal/bench/_approvals/state", "value_template": "{{ value_json.pending }}",
			"json_attributes_topic":    "openhal/bench/_approvals/state",
			"json_attributes_template": "{{ value_json.newest | tojson }}", "availability": gwAvail},
		"event__approval_events": {"p": "event", "name": "Approval requests", "icon": "mdi:account-check",
			"unique_id": "openhal_bench__approval_events", "default_entity_id": "event.openhal_bench_approval_events",
			"state_topic":  "openhal/bench/_approvals/event",
			"event_types":  []any{"requested", "approved", "rejected", "cancelled", "expired", "failed", "superseded"},
			"availability": gwAvail},
	}
	for key, w := range want {
		got, ok := d.Cmps[key]
		if !ok {
			t.Errorf("no component %s", key)
			continue
		}
		for _, f := range slices.Sorted(mapsKeys(with(w, got))) {
			if !reflect.DeepEqual(got[f], w[f]) {
				t.Errorf("%s.%s = %#v, want %#v", key, f, got[f], w[f])
			}
		}
	}
	for key := range d.Cmps {
		if want[key] == nil {
			t.Errorf("unexpected component %s", key)
		}
	}
	if s := Unmapped(simBench()); s != nil {
		t.Errorf("sim devices without an entity: %v", s)
	}
	wantDev := map[string]any{"ids": []any{"openhal_bench"}, "name": "Bench", "mf": "OpenHAL", "mdl": "gateway",
		"sw": "1.2.3", "cu": "http://bench.local:7750/"}
	if !reflect.DeepEqual(d.Dev, wantDev) {
		t.Errorf("dev = %v, want %v", d.Dev, wantDev)
	}
	wantO := map[string]any{"name": "openhal-gateway", "sw": "1.2.3", "url": "https://github.com/openhal/gateway"}
	if !reflect.DeepEqual(d.O, wantO) {
		t.Errorf("o = %v, want %v", d.O, wantO)
	}
}

// Compact, and small: HA receives it again on every (re)connect.
func TestConfigSize(t *testing.T) {
	_, data, err := Config(Topics{}, benchGW, simBench())
	if err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsAny(data, "\n\t") || len(data) > 8<<10 {
		t.Errorf("sim bench payload: %d bytes (want compact, at most 8 KiB)", len(data))
	}
	t.Logf("sim bench: %d bytes", len(data))

	// 256 devices with the longest ids still fit; 4096 do not, and say so.
	many := func(n int) []device.Descriptor {
		var devs []device.Descriptor
		for i := range n {
			id := fmt.Sprintf("adapter-with-a-long-name.output-%04d-%s", i, strings.Repeat("x", 20))
			devs = append(devs, device.Descriptor{ID: id, Kind: device.KindGPIOOutput, Access: device.AccessReadWrite,
				Risk: device.RiskLow, Schema: device.Schema{Type: device.TypeBoolean}})
		}
		return devs
	}
	if _, data, err := Config(Topics{}, benchGW, many(256)); err != nil || !json.Valid(data) {
		t.Errorf("256 devices: %d bytes, %v", len(data), err)
	}
	if _, _, err := Config(Topics{}, benchGW, many(4096)); err == nil || !strings.Contains(err.Error(), "discovery message") {
		t.Errorf("4096 devices: error %v, want one about the size", err)
	}
}

// Unique ids are unique, and the same whatever the order of devices or
// what other devices come and go.
func TestUniqueIDsUniqueAndStable(t *testing.T) {
	bench := simBench()
	_, first, _ := Config(Topics{}, benchGW, bench)
	ids := map[string]string{}
	for key, c := range decode(t, first).Cmps {
		uid := c["unique_id"].(string)
		if other, ok := ids[uid]; ok {
			t.Errorf("unique_id %s of %s and %s", uid, key, other)
		}
		ids[uid] = key
	}
	for i := range 20 {
		shuffled := slices.Clone(bench)
		rand.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		if _, again, _ := Config(Topics{}, benchGW, shuffled); !bytes.Equal(again, first) {
			t.Fatalf("shuffle %d: payload differs", i)
		}
	}
	more := append(slices.Clone(bench), device.Descriptor{ID: "lab.relay", Kind: device.KindGPIOOutput,
		Access: device.AccessReadWrite, Risk: device.RiskLow, Schema: device.Schema{Type: device.TypeBoolean}})
	after := config(t, more).Cmps
	for uid, key := range ids {
		if after[key]["unique_id"] != uid {
			t.Errorf("%s: unique_id %v after a device was added, was %s", key, after[key]["unique_id"], uid)
		}
	}
}
