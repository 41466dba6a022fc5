// Command gateway is the edge gateway: `gateway run` serves the board's
// devices over OpenHAL; the other subcommands manage tokens, check a
// configuration, and talk to a running gateway as a client.
//
// main only parses the command line and wires packages together; the
// logic lives in the packages (DESIGN.md, "Layout").
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Stamped by the Makefile (-ldflags -X).
var (
	version = "dev"
	commit  = "unknown"
)

// command is one subcommand.
type command struct {
	run     func(args []string, stdout, stderr io.Writer) error
	summary string
}

func commands() map[string]command {
	return map[string]command{
		"run":     {cmdRun, "run the gateway (the sim board without --config)"},
		"check":   {cmdCheck, "validate a configuration file without touching hardware"},
		"version": {cmdVersion, "print the version"},
		"token":   {cmdToken, "add, list or revoke access tokens"},
		"status":  {cmdStatus, "one screen: the stop, devices, confirmations, adapters, clients"},
		"devices": {cmdDevices, "list the devices of a running gateway"},
		"read":    {cmdRead, "read a device's value"},
		"write":   {cmdWrite, "write a device's value"},
		"watch":   {cmdWatch, "print values and events as they happen"},
		"stop":    {cmdStop, "engage the emergency stop: every device to its safe value"},
		"resume":  {cmdResume, "lift the emergency stop (admin)"},
		"confirm": {cmdConfirm, "list, approve, reject or cancel confirmation requests"},
		"audit":   {cmdAudit, "print the audit log (admin)"},
		"adapter": {cmdAdapter, "manage adapters: install DIR | list | status NAME | logs NAME | reset NAME | remove NAME"},
	}
}

func main() {
	os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
}

// runMain runs one command line and returns the exit code: 0, 1 for a
// failure, 2 for a usage error.
func runMain(args []string, stdout, stderr io.Writer) int {
	cmds := commands()
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stderr, cmds)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "gateway: unknown command %q (gateway help lists them)\n", args[0])
		return 2
	}
	err := cmd.run(args[1:], stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	case errors.Is(err, errReported):
		return 1
	}
	fmt.Fprintf(stderr, "gateway: %s\n", oneLine(err.Error()))
	return 1
}

// errUsage is returned after a flag error, which the flag package has
// already printed; errReported after a command printed its own errors.
var (
	errUsage    = errors.New("usage")
	errReported = errors.New("reported")
)

func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprintln(w, "usage: gateway COMMAND [flags]")
	fmt.Fprintln(w)
	for _, name := range []string{"run", "check", "version", "token", "status", "devices", "read", "write", "watch", "stop", "resume", "confirm", "audit", "adapter"} {
		fmt.Fprintf(w, "  %-8s %s\n", name, cmds[name].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "gateway COMMAND -h shows a command's flags.")
}

// oneLine keeps an error to one line: people and scripts read the first.
func oneLine(s string) string {
	return strings.ReplaceAll(strings.TrimSpace(s), "\n", "; ")
}

func cmdVersion(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	fmt.Fprintf(stdout, "gateway %s (commit %s)\n", version, commit)
	return nil
}

// defaultStateDir is where the gateway keeps tokens and state when neither
// --state-dir nor the configuration says: systemd's StateDirectory, else
// /var/lib/gateway for root, else the user's XDG state directory, so that
// a newcomer's `gateway run` works without root.
func defaultStateDir() string {
	if d := os.Getenv("STATE_DIRECTORY"); d != "" {
		first, _, _ := strings.Cut(d, ":")
		return first
	}
	if os.Geteuid() == 0 {
		return "/var/lib/gateway"
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "gateway")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "gateway-state")
	}
	return filepath.Join(home, ".local", "state", "gateway")
}
