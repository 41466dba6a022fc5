//go:build !unix

package statedir

import (
	"errors"
	"runtime"
)

// Find cannot tell here whether a gateway runs (the gateway runs on Linux;
// this system's client commands reach it by --hub).
func Find(string) (Running, error) {
	return Running{}, errors.New("finding a gateway by its state directory needs Unix (this is " + runtime.GOOS + ")")
}
