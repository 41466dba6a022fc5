package gatewayd

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/internal/board"
	"github.com/openhal/gateway/internal/cli"
	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/internal/mcpbridge"
)

// newMCPHandler is /mcp (hub.mcp.enabled, or `gateway run --mcp`): each
// token's bridge reaches the Hub through an in-memory connection that the
// Hub serves as a TCP one, so that an agent on /mcp is an ordinary client
// (docs/mcp.md).
func newMCPHandler(cfg *board.Config, hub *halhub.Hub, stateDir, version string, log *slog.Logger) *mcpbridge.Handler {
	dial := func(ctx context.Context, token, peer string) (*halclient.Conn, error) {
		opt := halclient.Options{Token: token, ClientName: "mcp", ClientVersion: version}
		return halclient.DialConn(ctx, hub.Pipe(peer), "mcp://"+peer, opt)
	}
	name, err := os.Hostname()
	if err != nil {
		name = "localhost"
	}
	log.Info("mcp: serving /mcp on the HTTP listeners", "gateway", name)
	return mcpbridge.NewHandler(mcpbridge.HTTPOptions{
		Dial:        dial,
		CheckOrigin: hub.CheckOrigin,
		Admit:       hub.AdmitHTTP,
		IdleTimeout: cfg.Hub.MCP.IdleTimeout,
		Gateway:     name, // resource URIs: openhal://<name>/devices/<id>
		Version:     version,
		// A pending result's approval line names the state directory
		// unless the CLI finds it by itself (the same default, as the
		// same user), so that it works as written on this machine.
		StateDirFlag: approveStateDir(stateDir),
		Logger:       log,
	})
}

// approveStateDir is stateDir as the approval line's --state-dir: "" when
// it is the CLI's default, else absolute.
func approveStateDir(stateDir string) string {
	abs, err := filepath.Abs(stateDir)
	if err != nil {
		abs = stateDir
	}
	if def, err := filepath.Abs(cli.DefaultStateDir()); err == nil && def == abs {
		return ""
	}
	return abs
}
