// Package cli is the gateway's command line: the commands that talk to
// a running gateway as any OpenHAL client would (status, devices, read,
// write, watch, stop, resume, confirm, audit, adapter status and reset,
// mcp), the admin commands that act on a state directory (token, adapter
// install, list, logs and remove), discover, and the conventions every
// command follows (usage.go: usage, errors, exit codes). Run runs one
// command line.
//
// It imports only the module's public packages (halclient, openhal,
// openhal/gatewayext, jsonrpc, device, ...), so that what the command
// line does is what a third party's client could do, and a test
// (TestImportsOnlyPublic) holds it so: nothing of the gateway's inside
// comes with it but the small helpers halclient keeps its known-gateways
// file with (filelock, atomicfile, tlscert). What some commands need of the
// gateway's own code is given to Run in an Env, which cmd/gateway takes
// from internal/gatewayd:
//
//   - the server's commands, run and check, which are the gateway itself;
//   - the files of a state directory (StateDir): the token file and the
//     audit log, the installed adapters and their logs, and the record
//     of where the gateway running there listens. Their formats and
//     locks are the server's, so the server's packages read and write
//     them, not a second copy here;
//   - the LAN's announcements (LAN), for gateway discover and --hub NAME;
//   - the MCP bridge (MCP) of gateway mcp, which the server serves on /mcp
//     too.
//
// Each comes in this package's own terms (env.go: narrow interfaces,
// Commands, a func), so that the commands' wording, flags and exit codes
// stay in one place, and a test can give a command a fake.
package cli

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// command is one subcommand.
type command struct {
	run     func(args []string, stdout, stderr io.Writer) error
	summary string
}

// app is the command line with what Run was given: its commands are its
// methods.
type app struct {
	env Env
}

func (a *app) commands() map[string]command {
	cmds := map[string]command{
		"version":  {a.cmdVersion, "print the version"},
		"token":    {a.cmdToken, "add, list or revoke access tokens"},
		"status":   {a.cmdStatus, "one screen: the stop, devices, confirmations, adapters, clients"},
		"devices":  {a.cmdDevices, "list the devices of a running gateway"},
		"read":     {a.cmdRead, "read a device's value"},
		"history":  {a.cmdHistory, "print a device's past values (kept on the gateway's disk)"},
		"write":    {a.cmdWrite, "write a device's value"},
		"watch":    {a.cmdWatch, "print values and events as they happen"},
		"stop":     {a.cmdStop, "engage the emergency stop: every device to its safe value"},
		"resume":   {a.cmdResume, "lift the emergency stop (admin)"},
		"confirm":  {a.cmdConfirm, "list, approve, reject or cancel confirmation requests"},
		"audit":    {a.cmdAudit, "print the audit log (admin)"},
		"discover": {a.cmdDiscover, "list the gateways announced on the LAN (DNS-SD), by name"},
		"mcp":      {a.cmdMCP, "serve the Model Context Protocol on stdio to an AI agent, as the agent's token"},
		"adapter":  {a.cmdAdapter, "manage adapters: install DIR | list | status NAME | logs NAME | reset NAME | remove NAME"},
	}
	for _, c := range a.env.Server {
		cmds[c.Name] = command{c.Run, c.Summary}
	}
	return cmds
}

// Run runs one command line (the arguments after the program's name)
// and returns the exit code: 0, 1 for a failure, 2 for a usage error
// (usage.go has the convention).
func Run(args []string, stdout, stderr io.Writer, env Env) int {
	a := &app{env: env}
	cmds := a.commands()
	if len(args) == 0 {
		fmt.Fprintln(stderr, "gateway: missing command")
		usage(stderr, cmds)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help":
		usage(stdout, cmds)
		return 0
	case "help":
		return a.runHelp(args[1:], stdout, stderr)
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
func (a *app) runHelp(args []string, stdout, stderr io.Writer) int {
	cmds := a.commands()
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
	case errors.Is(err, ErrReported):
		return 1
	}
	fmt.Fprintf(stderr, "gateway: %s\n", oneLine(err.Error()))
	return 1
}

// errUsage matches every usage error.
var errUsage = errors.New("usage")

// ErrReported is what a command returns once it printed its own error
// lines: Run prints nothing more and exits 1.
var ErrReported = errors.New("reported")

func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprintln(w, "usage: gateway COMMAND [flags]")
	fmt.Fprintln(w)
	// The usual order first; a command missing from it still shows, last.
	names := []string{"run", "check", "hardware", "modbus", "version", "token", "status", "devices", "read", "write", "watch", "stop", "resume", "confirm", "audit", "adapter"}
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

func (a *app) cmdVersion(args []string, stdout, stderr io.Writer) error {
	fs := NewFlagSet("version", "")
	if err := ParseFlags(fs, args); err != nil {
		return err
	}
	if err := WantArgs(fs, fs.Args(), 0); err != nil {
		return err
	}
	fmt.Fprintln(stdout, versionLine(a.env.Version, a.env.Commit))
	return nil
}

// DefaultStateDir is where the gateway keeps tokens and state when neither
// --state-dir nor the configuration says: systemd's StateDirectory, else
// ./state of the development checkout whose bin/gateway this is
// (checkout.go), else /var/lib/gateway for root, else the user's XDG
// state directory, so that a newcomer's `gateway run` works without root.
func DefaultStateDir() string {
	if d := os.Getenv("STATE_DIRECTORY"); d != "" {
		first, _, _ := strings.Cut(d, ":")
		return first
	}
	if d := checkoutStateDir(); d != "" {
		return d
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
