package sim

import (
	"time"

	"github.com/openhal/gateway/device"
)

// Config tunes the sim board. It is the `sim:` section of the
// configuration file (package board decodes and checks it).
type Config struct {
	// MeterInterval is how often sim.meter sends a reading line.
	MeterInterval time.Duration `yaml:"meterInterval"`
	// PollInterval is how often sim.temperature is sampled: a change is
	// published at the first sample past the threshold.
	PollInterval time.Duration `yaml:"pollInterval"`
	// TemperatureThreshold, in °C, is how far sim.temperature must move
	// from the last published value to be published again.
	TemperatureThreshold float64 `yaml:"temperatureThreshold"`
}

// Override is what a configuration file changes in a sim device's
// descriptor (its `devices:` entry). The zero Override changes nothing.
type Override struct {
	Risk device.Risk // "" keeps the device's own
	Safe any         // nil keeps the device's own
	// NoSafe, when set, takes the device's safe value away and says why
	// (the file's `safe: none`); Safe is then nil.
	NoSafe string
}

// Apply returns d with o's changes. The devices New makes serve exactly
// this descriptor, so that the registry, the Hub's emergency stop and
// `gateway check` all see the same risk and safe value.
func (o Override) Apply(d device.Descriptor) device.Descriptor {
	if o.Risk != "" {
		d.Risk = o.Risk
	}
	switch {
	case o.NoSafe != "":
		d.Safe, d.NoSafeReason = nil, o.NoSafe
	case o.Safe != nil:
		d.Safe, d.NoSafeReason = o.Safe, ""
	}
	return d
}
