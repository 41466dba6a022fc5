package homeassistant

import (
	"regexp"
	"strings"
	"testing"

	"github.com/openhal/gateway/device"
)

func output(id string) device.Descriptor {
	return device.Descriptor{ID: id, Kind: device.KindGPIOOutput, Access: device.AccessReadWrite,
		Risk: device.RiskLow, Schema: device.Schema{Type: device.TypeBoolean}}
}

func sensor(id string, props ...string) device.Descriptor {
	ps := map[string]device.Schema{}
	for _, p := range props {
		ps[p] = device.Schema{Type: device.TypeNumber, Unit: "V"}
	}
	return device.Descriptor{ID: id, Kind: device.KindSensor, Access: device.AccessRead, Risk: device.RiskLow,
		Schema: device.Schema{Type: device.TypeObject, Properties: ps}}
}

// Ids with odd characters: every unique id and key is unique and of
// [a-z0-9_-] (Home Assistant splits a component's discovery id on spaces),
// every default_entity_id a valid entity id, every template reads the
// right property, and the readable form is kept where it is unambiguous.
func TestOddIDs(t *testing.T) {
	tests := []struct {
		name  string
		devs  []device.Descriptor
		uids  map[string]string // key → unique_id, for those that matter
		tmpls map[string]string // key → value_template
	}{
		{"dot and underscore meet", []device.Descriptor{output("a.b"), output("a_b"), output("c.d")},
			map[string]string{
				"switch_a_b" + disambiguator("a.b", ""): "openhal_bench_a_b" + disambiguator("a.b", ""),
				"switch_a_b" + disambiguator("a_b", ""): "openhal_bench_a_b" + disambiguator("a_b", ""),
				"switch_c_d":                            "openhal_bench_c_d",
			}, nil},
		{"property meets device", []device.Descriptor{sensor("a", "b"), output("a.b")},
			map[string]string{
				"sensor_a_b" + disambiguator("a", "b"):  "openhal_bench_a_b" + disambiguator("a", "b"),
				"switch_a_b" + disambiguator("a.b", ""): "openhal_bench_a_b" + disambiguator("a.b", ""),
			}, nil},
		{"dashes and digits", []device.Descriptor{output("x-ray.tube-2"), output("0.1")},
			map[string]string{"switch_x-ray_tube-2": "openhal_bench_x-ray_tube-2", "switch_0_1": "openhal_bench_0_1"}, nil},
		{"odd property names", []device.Descriptor{sensor("env.probe", "temp 1", "Hum%", "ok_name", `q"uote`)},
			map[string]string{"sensor_env_probe_temp_1": "openhal_bench_env_probe_temp_1",
				"sensor_env_probe_hum_": "openhal_bench_env_probe_hum_"},
			map[string]string{
				"sensor_env_probe_temp_1":  `{{ value_json["temp 1"] }}`,
				"sensor_env_probe_hum_":    `{{ value_json["Hum%"] }}`,
				"sensor_env_probe_ok_name": `{{ value_json.ok_name }}`,
				"sensor_env_probe_q_uote":  `{{ value_json["q\"uote"] }}`,
			}},
	}
	safe := regexp.MustCompile(`^[a-z0-9_-]+$`)
	entityID := regexp.MustCompile(`^[a-z_]+\.[a-z0-9]+(_[a-z0-9]+)*$`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmps := config(t, tt.devs).Cmps
			seen := map[string]bool{}
			for key, c := range cmps {
				uid := c["unique_id"].(string)
				if seen[uid] {
					t.Errorf("unique_id %s twice", uid)
				}
				seen[uid] = true
				if !safe.MatchString(key) || !safe.MatchString(uid) {
					t.Errorf("key %q or unique_id %q outside [a-z0-9_-]", key, uid)
				}
				if !entityID.MatchString(c["default_entity_id"].(string)) {
					t.Errorf("%s: default_entity_id %q", key, c["default_entity_id"])
				}
			}
			for key, uid := range tt.uids {
				if cmps[key] == nil || cmps[key]["unique_id"] != uid {
					t.Errorf("%s: unique_id %v, want %s", key, cmps[key]["unique_id"], uid)
				}
			}
			for key, tmpl := range tt.tmpls {
				if cmps[key] == nil || cmps[key]["value_template"] != tmpl {
					t.Errorf("%s: value_template %v, want %s", key, cmps[key]["value_template"], tmpl)
				}
			}
		})
	}
}

func TestEntitySlug(t *testing.T) {
	tests := []struct{ in, want string }{
		{"openhal_bench_sim_led", "openhal_bench_sim_led"},
		{"openhal_bench__stop", "openhal_bench_stop"},
		{"openhal_my-gw_x-ray_tube-2", "openhal_my_gw_x_ray_tube_2"},
		{"openhal_bench_env_probe_hum_", "openhal_bench_env_probe_hum"},
		{"__a..B__", "a_b"},
	}
	for _, tt := range tests {
		if got := entitySlug(tt.in); got != tt.want {
			t.Errorf("entitySlug(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// A gateway Home Assistant would refuse is an error, not a message it
// drops.
func TestGatewayChecked(t *testing.T) {
	tests := []struct {
		gw   Gateway
		want string
	}{
		{Gateway{ID: "Bench"}, "gateway id"},
		{Gateway{ID: ""}, "gateway id"},
		{Gateway{ID: "a/b"}, "gateway id"},
		{Gateway{ID: strings.Repeat("a", 65)}, "gateway id"},
		{Gateway{ID: "bench", ConfigURL: "ftp://x/"}, "configuration URL"},
		{Gateway{ID: "bench", ConfigURL: "bench.local:7750"}, "configuration URL"},
		{Gateway{ID: "bench", ConfigURL: "https://bench.local/"}, ""},
		{Gateway{ID: "lab-2b"}, ""},
		{Gateway{ID: "lab_2"}, "gateway id"}, // "_" would make unique ids ambiguous across gateways
	}
	for _, tt := range tests {
		_, _, err := Config(Topics{}, tt.gw, simBench())
		if (err == nil) != (tt.want == "") || err != nil && !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want %q", tt.gw, err, tt.want)
		}
	}
}

// Without a name the device is named by its id.
func TestGatewayNameDefaultsToID(t *testing.T) {
	_, data, err := Config(Topics{}, Gateway{ID: "lab"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := decode(t, data)
	if d.Dev["name"] != "lab" || d.Dev["sw"] != nil || d.Dev["cu"] != nil || d.O["name"] != OriginName || len(d.Cmps) != 5 {
		t.Errorf("dev %v, o %v, %d components", d.Dev, d.O, len(d.Cmps))
	}
}
