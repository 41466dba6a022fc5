package gatewayext

import "time"

// ValuesResult is the answer of MethodValues: a value for each readable
// device the token sees that has one yet.
type ValuesResult struct {
	Values []LastValue `json:"values"`
}

// LastValue is one device's last known value, with hal/read's ts and seq.
// Seq is left out for a token limited to some devices, as hal/read leaves
// it out.
type LastValue struct {
	Device string    `json:"device"`
	Value  any       `json:"value"`
	TS     time.Time `json:"ts"`
	Seq    uint64    `json:"seq,omitempty"`
	// AgeMs is how long ago the Hub took the value, by its monotonic
	// clock (a wall clock that jumps does not age it).
	AgeMs int64 `json:"ageMs"`
}
