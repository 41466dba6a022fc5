// Package gatewayd is the gateway itself: `gateway run` (start-up, the
// listeners, the Hub's extension methods, systemd's status and watchdog,
// the shutdown) and `gateway check`, given to the command line as its
// server commands. It also gives the command line (internal/cli, which
// imports only the module's public packages) what some of its commands
// need of the gateway's own packages: the files of a state directory,
// the LAN's announcements and the MCP bridge. Env has them all; cmd/gateway
// passes it to cli.Run.
package gatewayd

import (
	"github.com/openhal/gateway/internal/cli"
	"github.com/openhal/gateway/internal/supervisor/process"
)

// build is what the binary was built as: the version and commit the
// Makefile stamps into cmd/gateway.
type build struct{ version, commit string }

// Env is the command line's environment for a binary built as version at
// commit: the server's commands, run and check, and the gateway's state
// directory, LAN and MCP bridge for the others (cliparts.go).
func Env(version, commit string) cli.Env {
	b := build{version: version, commit: commit}
	return cli.Env{
		Version: version,
		Commit:  commit,
		Server: []cli.Command{
			{Name: "run", Summary: "run the gateway (the sim board without --config)", Run: b.cmdRun},
			{Name: "check", Summary: "validate a configuration file without touching hardware", Run: cmdCheck},
			{Name: "hardware", Summary: "list the 1-Wire, IIO, hwmon, I2C and SPI hardware of this machine, with configuration entries", Run: cmdHardware},
			{Name: "modbus", Summary: "scan a Modbus line (RS-485 or TCP) for the unit ids that answer", Run: cmdModbus},
		},
		StateDir: stateDirs{},
		LAN:      lan{},
		MCP:      startMCP,
	}
}

// Shim runs the adapter shim, the hidden command through which the
// gateway starts each of its adapters (package process), when args are
// its command line, and reports whether they were.
func Shim(args []string) (code int, ok bool) {
	if len(args) == 0 || args[0] != process.ShimCommand {
		return 0, false
	}
	return process.ShimMain(args[1:]), true
}
