package board

import (
	"maps"
	"slices"
	"time"

	"gateway/board/sim"
	"gateway/device"
)

// DeviceConfig is one entry of `devices:`, keyed by device id. For the sim
// board it changes a device the board already has; devices of real
// hardware will be declared by the same entry, with the fields that say
// what they are (kind, pin, bus...) next to these. A nil pointer is a
// field the file leaves out: the board's own setting stays.
type DeviceConfig struct {
	// Risk overrides the device's risk: low or high.
	Risk *device.Risk `yaml:"risk"`
	// Safe overrides the device's safe value (nil: keep the board's). It
	// is a value as encoding/json would decode it: bool, float64, string
	// or map[string]any.
	Safe any `yaml:"safe"`
	// ConfirmTTL is the lifetime of Confirmation Requests to write this
	// device.
	ConfirmTTL *time.Duration `yaml:"confirmTtl"`
	Rules      RulesConfig    `yaml:"rules"`
}

// RulesConfig is a device's safety rules as the file states them
// (openhal-0.1 §6). Rules merges them with the board's own.
type RulesConfig struct {
	Minimum   *float64 `yaml:"minimum"`
	Maximum   *float64 `yaml:"maximum"`
	RateLimit *int     `yaml:"rateLimit"` // accepted writes per sliding second
	MaxOnMs   *int64   `yaml:"maxOnMs"`   // milliseconds away from safe
	// Interlock replaces the board's interlock of the device when it is
	// not nil; an empty list (`interlock: []`) removes it.
	Interlock []Condition `yaml:"interlock"`
}

// Condition is one interlock condition as the file states it.
type Condition struct {
	Device string `yaml:"device"`
	Op     string `yaml:"op"`    // eq, ne, lt, le, gt or ge
	Value  any    `yaml:"value"` // bool, float64, string or map[string]any
}

// builtin returns the devices of c's board and their own rules, before
// the file changes anything; none for a board this version does not run.
func (c *Config) builtin() ([]device.Descriptor, map[string]device.Rules) {
	if c.Board != "sim" {
		return nil, nil
	}
	return sim.Descriptors(c.Sim), sim.DefaultRules()
}

// Overrides returns the risks and safe values the file sets, by device
// id, for sim.New: the sim devices then serve them as their own.
func (c *Config) Overrides() map[string]sim.Override {
	out := map[string]sim.Override{}
	for id, dc := range c.Devices {
		var o sim.Override
		if dc.Risk != nil {
			o.Risk = *dc.Risk
		}
		o.Safe = dc.Safe
		if o.Risk != "" || o.Safe != nil {
			out[id] = o
		}
	}
	return out
}

// Descriptors returns the descriptors of the board's devices with the
// file's overrides applied: what the registry serves once the board runs.
// It starts nothing, so `gateway check` can judge rules against them.
func (c *Config) Descriptors() []device.Descriptor {
	descs, _ := c.builtin()
	over := c.Overrides()
	for i, d := range descs {
		descs[i] = over[d.ID].Apply(d)
	}
	return descs
}

// Rules returns every device's effective safety rules, for the Hub: the
// board's own merged with the file's, where each field the file sets
// wins and an interlock list in the file replaces the board's. Devices
// left without any rule are not in the map.
func (c *Config) Rules() map[string]device.Rules {
	_, rules := c.builtin()
	if rules == nil {
		rules = map[string]device.Rules{}
	}
	for _, id := range slices.Sorted(maps.Keys(c.Devices)) {
		r := c.Devices[id].merge(rules[id])
		if r.Empty() {
			delete(rules, id)
		} else {
			rules[id] = r
		}
	}
	return rules
}

// merge returns r with dc's settings in place of its own.
func (dc DeviceConfig) merge(r device.Rules) device.Rules {
	f := dc.Rules
	if f.Minimum != nil {
		r.Minimum = ptr(*f.Minimum)
	}
	if f.Maximum != nil {
		r.Maximum = ptr(*f.Maximum)
	}
	if f.RateLimit != nil {
		r.RateLimit = *f.RateLimit
	}
	if f.MaxOnMs != nil {
		r.MaxOn = time.Duration(*f.MaxOnMs) * time.Millisecond
	}
	if f.Interlock != nil {
		r.Interlock = nil // an empty list leaves none
		for _, cond := range f.Interlock {
			r.Interlock = append(r.Interlock, cond.device())
		}
	}
	if dc.ConfirmTTL != nil {
		r.ConfirmTTL = *dc.ConfirmTTL
	}
	return r
}

func (c Condition) device() device.Condition {
	return device.Condition{Device: c.Device, Op: c.Op, Value: c.Value}
}

// StopButton returns the id of the input configured as the emergency stop
// button, or "".
func (c *Config) StopButton() string { return c.StopButtonID }

func ptr[T any](v T) *T { return &v }
