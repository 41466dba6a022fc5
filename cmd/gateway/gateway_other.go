//go:build !unix

package main

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/openhal/gateway/internal/board"
)

// runGateway is never reached here: cmdRun stops at serverOnly first.
// It exists so that the client commands build on every system.
func runGateway(context.Context, *board.Config, string, http.Handler, *slog.Logger) error {
	return serverOnly("run")
}
