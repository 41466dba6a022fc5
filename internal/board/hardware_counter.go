package board

import (
	"strings"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/hw/counter"
	"github.com/openhal/gateway/internal/hw/gpioevent"
)

// KindCounter is the configuration's kind of a pulse counter on a GPIO
// input (issue 30, point 6). It is a kind of the file only: the device
// is served as a sensor whose value is {count, rate}, with chip "counter"
// in its descriptor (CounterChip).
const KindCounter = "counter"

// CounterChip is the descriptor's chip of a counter: it tells a client
// (Home Assistant's discovery) that its count only grows, a total rather
// than a measurement.
const CounterChip = "counter"

// The SenML units (RFC 8428) of a counter without perPulse: "count" is
// its counter value, "1/s" its event rate. Not "Hz": RFC 8428 keeps that
// for the frequency of something periodic, and pulses need not be.
const (
	countUnit = "count"
	rateUnit  = "1/s"
)

// counterEdges and counterBias are the words of a counter's edge: and
// pull:.
var (
	counterEdges = map[string]gpioevent.Edge{"rising": gpioevent.Rising, "falling": gpioevent.Falling, "both": gpioevent.Both}
	counterBias  = map[string]gpioevent.Bias{"none": gpioevent.BiasDisabled, "up": gpioevent.PullUp, "down": gpioevent.PullDown}
)

// counterDescriptor describes a counter: a low-risk read-only sensor on a
// pin, its value {count, rate} in the file's unit (count in unit, rate in
// unit per second) or in pulses.
func (dc DeviceConfig) counterDescriptor(d device.Descriptor) device.Descriptor {
	count, rate := countUnit, rateUnit
	if u := strings.TrimSpace(dc.Unit); u != "" {
		count, rate = u, u+"/s"
	}
	zero := 0.0
	d.Kind, d.Access, d.Risk = device.KindSensor, device.AccessRead, device.RiskLow
	d.Pin, d.Chip = strings.TrimSpace(dc.Pin), CounterChip
	d.Schema = device.Schema{Type: device.TypeObject, Properties: map[string]device.Schema{
		"count": {Type: device.TypeNumber, Unit: count, Minimum: &zero},
		"rate":  {Type: device.TypeNumber, Unit: rate, Minimum: &zero},
	}}
	return d
}

// CounterLine is how a counter's line is requested: its edges (rising
// unless the file says otherwise), its pull (none: bias disabled), the
// kernel's debounce, the gateway's buffer of events.
func (dc DeviceConfig) CounterLine(id string) gpioevent.Config {
	c := gpioevent.Config{Edge: gpioevent.Rising, Bias: gpioevent.BiasDisabled, Buffer: counter.LineBuffer}
	if e, ok := counterEdges[dc.Edge]; ok {
		c.Edge = e
	}
	if b, ok := counterBias[dc.Pull]; ok {
		c.Bias = b
	}
	if dc.Debounce != nil {
		c.Debounce = *dc.Debounce
	}
	c.Consumer = id
	if len(c.Consumer) > 31 { // the uAPI's consumer label holds 31 bytes
		c.Consumer = c.Consumer[:31]
	}
	return c
}

// CounterOpts is a counter's scaling and timing as counter.Device takes
// them (its file is the builder's: it knows the state directory).
func (dc DeviceConfig) CounterOpts() counter.Opts {
	var o counter.Opts
	if dc.PerPulse != nil {
		o.PerPulse = *dc.PerPulse
	}
	if dc.Interval != nil {
		o.Interval = *dc.Interval
	}
	if dc.Window != nil {
		o.Window = *dc.Window
	}
	return o
}
