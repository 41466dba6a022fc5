package homeassistant

import (
	"reflect"
	"slices"
	"testing"

	"github.com/openhal/gateway/device"
)

// A device that goes away: absent from the next Config; Update removes its
// entity with an entry of its platform alone; Removal empties the topic.
func TestDeviceGoesAway(t *testing.T) {
	all := simBench()
	without := slices.DeleteFunc(slices.Clone(all), func(d device.Descriptor) bool {
		return d.ID == "sim.fan" || d.ID == "sim.temperature"
	})
	gone := []string{"number_sim_fan", "sensor_sim_temperature_temperature"}

	next := config(t, without).Cmps
	for _, key := range gone {
		if _, ok := next[key]; ok {
			t.Errorf("%s still in the next config", key)
		}
	}
	if len(next) != 10 {
		t.Errorf("next config has %d components, want 10", len(next))
	}

	topic, data, removed, err := Update(Topics{}, benchGW, all, without)
	if err != nil {
		t.Fatal(err)
	}
	if topic != "homeassistant/device/bench/config" || !reflect.DeepEqual(removed, gone) {
		t.Errorf("Update: topic %q, removed %v, want %v", topic, removed, gone)
	}
	upd := decode(t, data).Cmps
	for key, want := range map[string]map[string]any{
		"number_sim_fan":                     {"p": "number"},
		"sensor_sim_temperature_temperature": {"p": "sensor"},
	} {
		if !reflect.DeepEqual(upd[key], want) {
			t.Errorf("Update's %s = %v, want %v", key, upd[key], want)
		}
	}
	for key, c := range next {
		if !reflect.DeepEqual(upd[key], c) {
			t.Errorf("Update's %s = %v, want the config's %v", key, upd[key], c)
		}
	}

	// Nothing gone: Update is Config.
	_, same, removed, _ := Update(Topics{}, benchGW, without, without)
	_, cfg, _ := Config(Topics{}, benchGW, without)
	if removed != nil || string(same) != string(cfg) {
		t.Errorf("Update with nothing gone: removed %v, payload differs: %v", removed, string(same) != string(cfg))
	}

	topic, payload := Removal(Topics{Discovery: "ha"}, benchGW)
	if topic != "ha/device/bench/config" || payload == nil || len(payload) != 0 {
		t.Errorf("Removal = %q, %q; want ha/device/bench/config and an empty payload", topic, payload)
	}
}

// A device whose platform changes (an output no longer writable) gets a new
// key, so that the old entity can be removed.
func TestPlatformChangeRemovesOldEntity(t *testing.T) {
	all := simBench()
	ro := slices.Clone(all)
	for i := range ro {
		if ro[i].ID == "sim.led" {
			ro[i].Access = device.AccessRead
		}
	}
	_, data, removed, err := Update(Topics{}, benchGW, all, ro)
	if err != nil {
		t.Fatal(err)
	}
	c := decode(t, data).Cmps
	if !reflect.DeepEqual(removed, []string{"switch_sim_led"}) || c["switch_sim_led"]["p"] != "switch" ||
		c["binary_sensor_sim_led"]["p"] != "binary_sensor" {
		t.Errorf("removed %v, switch %v, binary_sensor %v", removed, c["switch_sim_led"], c["binary_sensor_sim_led"])
	}
}
