package mqttbridge

import "strings"

// Topics is the topic layout (docs/mqtt.md): Base is
// "<prefix>/<gateway>", Discovery Home Assistant's prefix ("" when
// discovery is off).
type Topics struct {
	Base      string
	Discovery string
}

// Status is the gateway's availability: "online", and the will "offline".
func (t Topics) Status() string { return t.Base + "/status" }

// State is a device's value, retained.
func (t Topics) State(dev string) string { return t.Base + "/" + dev + "/state" }

// Availability is a device's own availability, retained.
func (t Topics) Availability(dev string) string { return t.Base + "/" + dev + "/availability" }

// Result answers each command sent to a device's set topic.
func (t Topics) Result(dev string) string { return t.Base + "/" + dev + "/result" }

// SetFilter subscribes to every device's commands; StopSet engages the
// stop.
func (t Topics) SetFilter() string { return t.Base + "/+/set" }
func (t Topics) StopSet() string   { return t.Base + "/stop/set" }

// StopState is the emergency stop's state, retained.
func (t Topics) StopState() string { return t.Base + "/stop/state" }

// BridgeState is the bridge's diagnostics, retained.
func (t Topics) BridgeState() string { return t.Base + "/bridge/state" }

// HAStatus is where Home Assistant announces itself ("online").
func (t Topics) HAStatus() string { return t.Discovery + "/status" }

// SetDevice returns the device a set topic names, or false when topic is
// not one: "<base>/<device>/set" with a device that has no '/'.
func (t Topics) SetDevice(topic string) (string, bool) {
	rest, ok := strings.CutPrefix(topic, t.Base+"/")
	if !ok {
		return "", false
	}
	dev, ok := strings.CutSuffix(rest, "/set")
	if !ok || dev == "" || strings.Contains(dev, "/") {
		return "", false
	}
	return dev, true
}
