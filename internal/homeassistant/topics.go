package homeassistant

import "strings"

// Default prefixes of the topic layout (issue 16): the bridge's own topics
// live under "openhal/<gateway>", Home Assistant listens for discovery
// under "homeassistant" (its default discovery prefix, changeable in its
// MQTT options).
const (
	DefaultPrefix    = "openhal"
	DefaultDiscovery = "homeassistant"
)

// Gateway is what discovery says about the gateway itself: ID is the slug
// of the topic layout (see Slug), Name what people read, Version the
// gateway's version (the device's and the origin's sw), ConfigURL the
// console's address (optional; http or https only, as Home Assistant's
// configuration_url validator accepts nothing else but homeassistant://).
type Gateway struct{ ID, Name, Version, ConfigURL string }

// Topics names every topic of the shared layout. An empty Prefix or
// Discovery means the default, so that the zero value is the layout.
type Topics struct{ Prefix, Discovery string }

func (t Topics) prefix() string {
	if t.Prefix == "" {
		return DefaultPrefix
	}
	return t.Prefix
}

func (t Topics) discovery() string {
	if t.Discovery == "" {
		return DefaultDiscovery
	}
	return t.Discovery
}

// Base is "<prefix>/<gw>", under which every topic of one gateway lives.
func (t Topics) Base(gw string) string { return t.prefix() + "/" + gw }

// Status is the gateway's retained online/offline (its last will).
func (t Topics) Status(gw string) string { return t.Base(gw) + "/status" }

// State is a device's retained value, as JSON exactly as the Hub gives it.
// Device ids are used as they are, dots included.
func (t Topics) State(gw, dev string) string { return t.Base(gw) + "/" + dev + "/state" }

// Availability is a device's retained online/offline (state ok, or not).
func (t Topics) Availability(gw, dev string) string {
	return t.Base(gw) + "/" + dev + "/availability"
}

// Set is where a command for a device arrives (never retained).
func (t Topics) Set(gw, dev string) string { return t.Base(gw) + "/" + dev + "/set" }

// Result is where the outcome of each command on a device is published.
func (t Topics) Result(gw, dev string) string { return t.Base(gw) + "/" + dev + "/result" }

// The gateway's own topics sit under a level that starts with "_", which
// no device id can (ids match ^[a-z0-9][a-z0-9_.-]*$): a device called
// "stop" has <base>/stop/set, and a command to it must never engage the
// emergency stop, nor the stop's command reach a device.

// StopState is the emergency stop's retained state.
func (t Topics) StopState(gw string) string { return t.Base(gw) + "/_stop/state" }

// StopSet engages the emergency stop: any payload ("STOP", or
// {"reason":...} to give a reason).
func (t Topics) StopSet(gw string) string { return t.Base(gw) + "/_stop/set" }

// BridgeState is the bridge's retained diagnostics ({"adapters":"n/m",...}).
func (t Topics) BridgeState(gw string) string { return t.Base(gw) + "/_bridge/state" }

// DeviceConfig is the gateway's one device-based discovery topic,
// "<discovery>/device/<gw>/config".
func (t Topics) DeviceConfig(gw string) string {
	return t.discovery() + "/device/" + gw + "/config"
}

// HAStatus is Home Assistant's birth and last will topic: "online" there
// means every config and state must be published again.
func (t Topics) HAStatus() string { return t.discovery() + "/status" }

// Slug turns a configured name (or the host name) into a gateway id of the
// layout: lower case, [a-z0-9-], every other run of characters one "-",
// no "-" at either end. Home Assistant accepts [a-zA-Z0-9_-] for the
// <object_id> level of a discovery topic (mqtt integration docs,
// "Discovery topic"), so a slug is always a valid one. "_" is left out on
// purpose: unique ids are "openhal_<gateway>_<local>", and a gateway id
// without "_" makes them unique across a fleet on one Home Assistant
// (gateway "a_b" with device "c" and gateway "a" with device "b.c" would
// otherwise share one). It is cut to 64 characters; an empty result is
// "gateway".
func Slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			b.WriteRune(r)
			dash = r == '-'
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	s := b.String()
	if len(s) > 64 {
		s = s[:64]
	}
	s = strings.Trim(s, "-")
	if s == "" {
		return "gateway"
	}
	return s
}
