package board

import "time"

// Rules are a device's safety rules (openhal-0.1 §6) as data: the board
// states them, the Hub enforces them. They will come from the
// configuration file's devices too; the sim board states its own.
type Rules struct {
	// Interlock lists conditions that must all hold for the device to
	// leave its safe value.
	Interlock []Condition
	// MaxOn is how long the device may stay away from its safe value; 0
	// means no limit.
	MaxOn time.Duration
}

// Condition is one interlock condition: the value of Device compared with
// Value by Op.
type Condition struct {
	Device string
	Op     string // eq, ne, lt, le, gt or ge
	Value  any    // as encoding/json decodes it: bool, float64, string
}

// Interlock comparison operators.
const (
	OpEq = "eq"
	OpNe = "ne"
	OpLt = "lt"
	OpLe = "le"
	OpGt = "gt"
	OpGe = "ge"
)
