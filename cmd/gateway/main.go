// Command gateway is the edge gateway: `gateway run` serves the board's
// devices over OpenHAL; the other subcommands manage tokens and
// adapters, check a configuration, and talk to a running gateway as a
// client.
//
// main only hands the command line to internal/cli, with the server and
// the gateway's own parts from internal/gatewayd (DESIGN.md, "Layout").
package main

import (
	"os"

	"github.com/openhal/gateway/internal/cli"
	"github.com/openhal/gateway/internal/gatewayd"
)

// Stamped by the Makefile (-ldflags -X).
var (
	version = "dev"
	commit  = "unknown"
)

func main() {
	// The adapter shim first: the gateway starts its adapters through
	// this very binary, with a hidden command.
	if code, ok := gatewayd.Shim(os.Args[1:]); ok {
		os.Exit(code)
	}
	os.Exit(cli.Run(os.Args[1:], os.Stdout, os.Stderr, gatewayd.Env(version, commit)))
}
