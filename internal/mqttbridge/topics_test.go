package mqttbridge

import (
	"testing"

	"github.com/openhal/gateway/internal/homeassistant"
)

// Only <base>/<device>/set names a device: never the gateway's own
// topics (a device cannot start with '_'), another gateway's, or a deeper
// level.
func TestSetDevice(t *testing.T) {
	topics := homeassistant.Topics{Prefix: "openhal"}
	for topic, want := range map[string]string{
		"openhal/gw/sim.led/set":    "sim.led",
		"openhal/gw/stop/set":       "stop",
		"openhal/gw/_stop/set":      "",
		"openhal/gw/_bridge/set":    "",
		"openhal/gw2/sim.led/set":   "",
		"openhal/gw/a/b/set":        "",
		"openhal/gw//set":           "",
		"openhal/gw/sim.led/state":  "",
		"openhal/gw/sim.led/set/x":  "",
		"homeassistant/status":      "",
		"xopenhal/gw/sim.led/set":   "",
		"openhal/gw/sim.led/setter": "",
	} {
		got, ok := setDevice(topics, "gw", topic)
		if got != want || ok != (want != "") {
			t.Errorf("setDevice(%q) = %q, %v; want %q", topic, got, ok, want)
		}
	}
}
