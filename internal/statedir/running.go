package statedir

import "errors"

// RunningName is the file, beside the lock, where the gateway that holds
// the lock records the addresses it listens on, so that the client
// commands given the state directory reach that gateway, and no other.
const RunningName = "gateway.running"

// ErrNotRunning says that no gateway runs on a state directory: no record,
// or one left by a gateway that is gone.
var ErrNotRunning = errors.New("no gateway runs on this state directory")

// Running is what a running gateway records in its state directory.
type Running struct {
	PID int `json:"pid"`
	// Start is the process's start time (clock ticks after boot, from
	// /proc): with PID it names one process, not a later one given the
	// same pid. Empty where the system has no /proc.
	Start string `json:"start,omitempty"`
	// Hubs are the URLs the gateway listens on, as its log gives them.
	Hubs []string `json:"hubs"`
	// Fingerprint is the SHA-256 fingerprint of its TLS certificate, when
	// it listens with TLS.
	Fingerprint string `json:"fingerprint,omitempty"`
}
