// Package sensor is the seam between sensor drivers (hw/i2c/...) and the
// gateway: a driver measures, and a polled Device (in this package) turns
// its measurements into values, change thresholds and fault states.
package sensor

import "context"

// Quantity is one quantity a sensor measures: its property name in the
// device's object value and its SenML unit (RFC 8428: "Cel", "%RH",
// "Pa", "V", ...).
type Quantity struct {
	Name string
	Unit string
}

// Sensor is a driver for one sensor. Sense takes one measurement of every
// quantity, by name. A driver honours ctx where its bus lets it; a bus
// that hangs regardless is the poller's to contain.
type Sensor interface {
	Quantities() []Quantity
	Sense(ctx context.Context) (map[string]float64, error)
}
