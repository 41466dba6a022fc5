// Command gateway is the edge gateway: `gateway run` serves the board's
// devices over OpenHAL; the other subcommands manage tokens, check a
// configuration, and talk to a running gateway as a client.
//
// main only parses the command line and wires packages together; the
// logic lives in the packages (DESIGN.md, "Layout").
package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/openhal/gateway/internal/supervisor/process"
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
		"run":      {cmdRun, "run the gateway (the sim board without --config)"},
		"check":    {cmdCheck, "validate a configuration file without touching hardware"},
		"version":  {cmdVersion, "print the version"},
		"token":    {cmdToken, "add, list or revoke access tokens"},
		"status":   {cmdStatus, "one screen: the stop, devices, confirmations, adapters, clients"},
		"devices":  {cmdDevices, "list the devices of a running gateway"},
		"read":     {cmdRead, "read a device's value"},
		"write":    {cmdWrite, "write a device's value"},
		"watch":    {cmdWatch, "print values and events as they happen"},
		"stop":     {cmdStop, "engage the emergency stop: every device to its safe value"},
		"resume":   {cmdResume, "lift the emergency stop (admin)"},
		"confirm":  {cmdConfirm, "list, approve, reject or cancel confirmation requests"},
		"audit":    {cmdAudit, "print the audit log (admin)"},
		"discover": {cmdDiscover, "list the gateways announced on the LAN (DNS-SD), by name"},
		"mcp":      {cmdMCP, "serve the Model Context Protocol on stdio to an AI agent, as the agent's token"},
		"adapter":  {cmdAdapter, "manage adapters: install DIR | list | status NAME | logs NAME | reset NAME | remove NAME"},
	}
}

func main() {
	os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
}

// runMain runs one command line and returns the exit code: 0, 1 for a
// failure, 2 for a usage error (usage.go has the convention).
func runMain(args []string, stdout, stderr io.Writer) int {
	cmds := commands()
	if len(args) == 0 {
		fmt.Fprintln(stderr, "gateway: missing command")
		usage(stderr, cmds)
		return 2
	}
	switch args[0] {
	case process.ShimCommand: // hidden: the gateway starts its adapters through it
		return process.ShimMain(args[1:])
	case "-h", "-help", "--help":
		usage(stdout, cmds)
		return 0
	case "help":
		return runHelp(args[1:], stdout, stderr)
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "gateway: unknown command %q\n", args[0])
		usage(stderr, cmds)
		return 2
	}
	return report(cmd.run(args[1:], stdout, stderr), stdout, stderr)
}

// runHelp answers `gateway help [COMMAND [SUBCOMMAND]]`: the command's
// own -h.
func runHelp(args []string, stdout, stderr io.Writer) int {
	cmds := commands()
	if len(args) == 0 || args[0] == "help" {
		usage(stdout, cmds)
		return 0
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "gateway: help: unknown command %q\n", args[0])
		usage(stderr, cmds)
		return 2
	}
	rest := append(append([]string{}, args[1:]...), "-h")
	return report(cmd.run(rest, stdout, stderr), stdout, stderr)
}

// report prints what a command's error calls for and returns the exit
// code.
func report(err error, stdout, stderr io.Writer) int {
	var help *helpRequest
	var bad *usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &help):
		help.usage(stdout)
		return 0
	case errors.As(err, &bad):
		fmt.Fprintf(stderr, "gateway: %s\n", oneLine(bad.msg))
		bad.usage(stderr)
		return 2
	case errors.Is(err, errUsage):
		return 2
	case errors.Is(err, errReported):
		return 1
	}
	fmt.Fprintf(stderr, "gateway: %s\n", oneLine(err.Error()))
	return 1
}

// errUsage matches every usage error; errReported is returned after a
// command printed its own error lines.
var (
	errUsage    = errors.New("usage")
	errReported = errors.New("reported")
)

func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprintln(w, "usage: gateway COMMAND [flags]")
	fmt.Fprintln(w)
	// The usual order first; a command missing from it still shows, last.
	names := []string{"run", "check", "version", "token", "status", "devices", "read", "write", "watch", "stop", "resume", "confirm", "audit", "adapter"}
	for _, name := range slices.Sorted(maps.Keys(cmds)) {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	for _, name := range names {
		if _, ok := cmds[name]; !ok {
			continue
		}
		fmt.Fprintf(w, "  %-8s %s\n", name, cmds[name].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "gateway help COMMAND, or gateway COMMAND -h, shows a command's flags.")
}

// oneLine keeps an error to one line: people and scripts read the first.
func oneLine(s string) string {
	return strings.ReplaceAll(strings.TrimSpace(s), "\n", "; ")
}

func cmdVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", "")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := wantArgs(fs, fs.Args(), 0); err != nil {
		return err
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
