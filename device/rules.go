package device

import (
	"fmt"
	"reflect"
	"time"
)

// Rules are a device's safety rules (openhal-0.1 §6), as data: the board
// and the configuration state them, the Hub enforces them.
type Rules struct {
	// Minimum and Maximum bound a number more tightly than its schema.
	Minimum *float64 `json:"minimum,omitempty"`
	Maximum *float64 `json:"maximum,omitempty"`
	// RateLimit is the most accepted writes in any 1 s window, across all
	// principals; 0 means no limit.
	RateLimit int `json:"rateLimit,omitempty"`
	// Interlock lists conditions that must all hold for the device to
	// leave its safe value, and to stay away from it.
	Interlock []Condition `json:"interlock,omitempty"`
	// MaxOn is how long the device may stay away from its safe value; 0
	// means no limit.
	MaxOn time.Duration `json:"maxOnMs,omitempty"`
	// ConfirmTTL is how long a Confirmation Request for this device waits
	// for an admin; 0 means the Hub's default.
	ConfirmTTL time.Duration `json:"confirmTtl,omitempty"`
}

// Empty reports whether r constrains nothing.
func (r Rules) Empty() bool { return reflect.DeepEqual(r, Rules{}) }

// Condition is one interlock condition: the value of Device compared with
// Value by Op.
type Condition struct {
	Device string `json:"device"`
	Op     string `json:"op"`    // eq, ne, lt, le, gt or ge
	Value  any    `json:"value"` // as encoding/json decodes it: bool, float64, string
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

func (c Condition) String() string { return fmt.Sprintf("%s %s %v", c.Device, c.Op, c.Value) }

// Holds reports whether the condition holds for the other device's current
// value. A device that is not ok (offline, faulty) or has no value yet
// fails every condition: an interlock must never rest on a value nobody
// can vouch for.
func (c Condition) Holds(state State, v any, hasValue bool) bool {
	if state != StateOK || !hasValue {
		return false
	}
	switch c.Op {
	case OpEq:
		return Equal(v, c.Value)
	case OpNe:
		return !Equal(v, c.Value)
	}
	a, ok1 := v.(float64)
	b, ok2 := normalize(c.Value).(float64)
	if !ok1 || !ok2 {
		return false
	}
	switch c.Op {
	case OpLt:
		return a < b
	case OpLe:
		return a <= b
	case OpGt:
		return a > b
	case OpGe:
		return a >= b
	}
	return false
}

// CheckCondition says what is wrong with a condition on a device of the
// given schema, or "" when it fits: a known op, and a value of the other
// device's type (lt..ge only on numbers).
func CheckCondition(c Condition, other Schema) string {
	switch c.Op {
	case OpEq, OpNe:
	case OpLt, OpLe, OpGt, OpGe:
		if other.Type != TypeNumber && other.Type != TypeInteger {
			return fmt.Sprintf("op %s needs a number, but %s is %s", c.Op, c.Device, other.Type)
		}
	default:
		return fmt.Sprintf("unknown op %q (want eq, ne, lt, le, gt or ge)", c.Op)
	}
	if err := (Schema{Type: other.Type, Properties: other.Properties}).Validate(normalize(c.Value)); err != nil {
		return fmt.Sprintf("value %v does not fit %s: %v", c.Value, c.Device, err)
	}
	return ""
}

// Equal compares two values as encoding/json decodes them.
func Equal(a, b any) bool { return reflect.DeepEqual(normalize(a), normalize(b)) }
