//go:build !unix

package statedir

import (
	"errors"
	"runtime"
)

// ErrNotRunning says that no gateway runs on a state directory.
var ErrNotRunning = errors.New("no gateway runs on this state directory")

// Running is what a running gateway records in its state directory.
type Running struct {
	PID         int      `json:"pid"`
	Start       string   `json:"start,omitempty"`
	Hubs        []string `json:"hubs"`
	Fingerprint string   `json:"fingerprint,omitempty"`
}

// Find cannot tell here whether a gateway runs (the gateway runs on Linux;
// this system's client commands reach it by --hub).
func Find(string) (Running, error) {
	return Running{}, errors.New("finding a gateway by its state directory needs Unix (this is " + runtime.GOOS + ")")
}
