//go:build !unix

package main

import (
	"context"
	"log/slog"

	"github.com/openhal/gateway/board"
)

// runGateway is never reached here: cmdRun stops at serverOnly first.
// It exists so that the client commands build on every system.
func runGateway(context.Context, *board.Config, string, *slog.Logger) error {
	return serverOnly("run")
}
