package gatewayd

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/openhal/gateway/internal/board"
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
