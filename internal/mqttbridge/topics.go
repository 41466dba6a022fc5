package mqttbridge

import (
	"strings"

	"github.com/openhal/gateway/internal/homeassistant"
)

// setDevice returns the device a command topic names, "<base>/<device>/set"
// with a device id that has no '/', or false when topic is not one. The
// gateway's own topics (<base>/_stop/set) start with '_', which no device
// id can.
func setDevice(t homeassistant.Topics, gw, topic string) (string, bool) {
	rest, ok := strings.CutPrefix(topic, t.Base(gw)+"/")
	if !ok {
		return "", false
	}
	dev, ok := strings.CutSuffix(rest, "/set")
	if !ok || dev == "" || strings.Contains(dev, "/") || strings.HasPrefix(dev, "_") {
		return "", false
	}
	return dev, true
}
