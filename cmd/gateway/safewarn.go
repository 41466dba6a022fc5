package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/board"
	"github.com/openhal/gateway/openhal"
)

// printConfigWarnings prints what a valid configuration should still make
// its author look at (an output with `safe: none`), one line each on
// standard error, for `gateway check`: the file is accepted all the same.
func printConfigWarnings(stderr io.Writer, cfg *board.Config) {
	for _, w := range cfg.Warnings() {
		fmt.Fprintf(stderr, "gateway: warning: %s\n", w.Error())
	}
}

// logConfigWarnings logs the same warnings when the gateway starts, so
// that the journal says which outputs a stop will not touch.
func logConfigWarnings(log *slog.Logger, cfg *board.Config) {
	for _, w := range cfg.Warnings() {
		log.Warn("configuration: "+w.Msg, "field", w.Path)
	}
}

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
