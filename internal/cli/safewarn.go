package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

// noSafeMark is what `gateway devices` adds to the state of a written
// device that has no safe value: an emergency stop leaves it as it is.
func noSafeMark(d device.Descriptor) string {
	if d.Safe != nil || !d.Access.CanWrite() {
		return ""
	}
	return ", no safe value"
}

// printLeftAsIs says which devices a stop did not touch, and why, on one
// line: "left as they are: sim.meter (a line instrument: ...)".
func printLeftAsIs(w io.Writer, left []openhal.LeftAsIs) {
	if len(left) == 0 {
		return
	}
	parts := make([]string, len(left))
	for i, l := range left {
		parts[i] = l.Device + " (" + l.Reason + ")"
	}
	fmt.Fprintf(w, "left as they are: %s\n", strings.Join(parts, ", "))
}
