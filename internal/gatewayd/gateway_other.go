//go:build !unix

package gatewayd

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/openhal/gateway/internal/board"
	"github.com/openhal/gateway/internal/cli"
)

// runGateway is never reached here: cmdRun stops at cli.ServerOnly first.
// It exists so that the client commands build on every system.
func runGateway(context.Context, build, *board.Config, configSource, http.Handler, *slog.Logger) error {
	return cli.ServerOnly("run")
}
