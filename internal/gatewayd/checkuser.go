package gatewayd

import (
	"fmt"
	"io"

	"github.com/openhal/gateway/internal/board"
	"github.com/openhal/gateway/internal/cli"
	"github.com/openhal/gateway/internal/supervisor"
)

// checkAdapterUser makes `gateway check` refuse what `gateway run` would
// refuse at start: enabled adapters with an adapters.user that does not
// exist or is root, when this process may switch users as run does (root,
// or the installed service's capabilities). Checked by a user who may
// not, it is a warning: run as that user starts the adapters as itself,
// but the service would refuse the file.
func checkAdapterUser(file string, cfg *board.Config, stderr io.Writer) error {
	if len(cfg.Adapters.Enabled) == 0 {
		return nil
	}
	_, err := supervisor.AdapterUser(cfg.Adapters.User)
	switch {
	case err == nil:
		return nil
	case supervisor.CanSwitchUsers():
		fmt.Fprintf(stderr, "gateway: %s: adapters.user: %v\n", file, err)
		return cli.ErrReported
	}
	fmt.Fprintf(stderr, "gateway: warning: adapters.user: %v; `gateway run` refuses this when it may switch users (as root, or as the installed service)\n", err)
	return nil
}
