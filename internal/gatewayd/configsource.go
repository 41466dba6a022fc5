package gatewayd

import (
	"github.com/openhal/gateway/internal/board"
	"github.com/openhal/gateway/internal/cli"
)

// configSource is where the running configuration came from, so that a
// reload (SIGHUP, reload.go) reads it again the same way: the file, and
// what the command line set over it (listeners, the state directory).
type configSource struct {
	path      string              // "" for the embedded sim configuration: nothing to reload
	adjust    func(*board.Config) // the command line's listeners over the file's
	stateFlag string              // --state-dir
}

// stateDirOf is the state directory cfg runs with: --state-dir, else
// the configuration's, else the default.
func (s configSource) stateDirOf(cfg *board.Config) string {
	return firstNonEmpty(s.stateFlag, cfg.StateDir, cli.DefaultStateDir())
}
