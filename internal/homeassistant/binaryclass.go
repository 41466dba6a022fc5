package homeassistant

import (
	"regexp"
	"slices"
	"strings"

	"github.com/openhal/gateway/device"
)

// binaryClasses are the binary_sensor device classes whose "on" is one
// plain word an operator writes in a label as "(true = <word>)". Home
// Assistant shows "on" of class door as Open, of moisture as Wet, and so
// on (binary_sensor integration docs, "Device class").
var binaryClasses = map[string][]string{
	"door":        {"open"},
	"garage_door": {"open"},
	"window":      {"open"},
	"opening":     {"open"},
	"motion":      {"motion", "detected"},
	"occupancy":   {"occupied", "detected"},
	"presence":    {"present", "home"},
	"moisture":    {"wet", "moisture"},
	"smoke":       {"smoke", "detected"},
	"vibration":   {"vibration", "detected"},
	"light":       {"light"},
	"plug":        {"plugged", "connected"},
	"power":       {"power", "powered"},
}

var polarity = regexp.MustCompile(`\(\s*true\s*=\s*([a-z]+)\s*\)`)

// binaryClass is the device class of an input when its descriptor makes
// it certain, else "". Certain means both what it is and which way round:
// a tag or the label's first word names the class, and the label says
// what true means with a word that is that class's "on" ("Door contact
// (true = open)" is a door). A tag alone is not enough: a normally-closed
// contact wired the other way would show Open for closed, which is worse
// than no class.
func binaryClass(d device.Descriptor) string {
	label := strings.ToLower(d.Label)
	m := polarity.FindStringSubmatch(label)
	if m == nil {
		return ""
	}
	names := slices.Clone(d.Tags)
	if f := strings.Fields(label); len(f) > 0 {
		names = append(names, f[0])
	}
	for _, n := range names {
		if on, ok := binaryClasses[strings.ToLower(n)]; ok && slices.Contains(on, m[1]) {
			return strings.ToLower(n)
		}
	}
	return ""
}
