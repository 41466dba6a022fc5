package cli_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/openhal/gateway/internal/cli"
)

// usageCases is every command and subcommand, with a command line that
// is wrong for it and the line that must say why. A command added to
// the command line without a row here fails TestEveryCommandHasHelp.
var usageCases = []struct {
	path []string // the command: "token", "add"
	bad  []string // arguments after it that are a usage error
	want string   // the error line
}{
	{[]string{"run"}, []string{"extra"}, `gateway: run: unexpected argument "extra"`},
	{[]string{"check"}, nil, "gateway: check: --config FILE is required"},
	{[]string{"hardware"}, []string{"w1"}, `gateway: hardware: unexpected argument "w1"`},
	{[]string{"modbus"}, nil, "gateway: modbus: missing subcommand (scan)"},
	{[]string{"modbus", "scan"}, []string{"--tcp", "plc", "--units", "1-300"}, `gateway: modbus scan: --units: "1-300": want ids from 0 to 255, the first of a range not above its last`},
	{[]string{"version"}, []string{"--nonesuch"}, "gateway: version: flag provided but not defined: -nonesuch"},
	{[]string{"token"}, nil, "gateway: token: missing subcommand (add, list, revoke)"},
	{[]string{"token", "add"}, []string{"--kind", "agent"}, "gateway: token add: --name is required"},
	{[]string{"token", "list"}, []string{"x"}, `gateway: token list: unexpected argument "x"`},
	{[]string{"token", "revoke"}, nil, "gateway: token revoke: missing token name"},
	{[]string{"status"}, []string{"x"}, `gateway: status: unexpected argument "x"`},
	{[]string{"devices"}, []string{"x"}, `gateway: devices: unexpected argument "x"`},
	{[]string{"read"}, nil, "gateway: read: missing device id"},
	{[]string{"history"}, nil, "gateway: history: missing device id"},
	{[]string{"write"}, []string{"sim.led"}, "gateway: write: missing value"},
	{[]string{"watch"}, []string{"--timeout", "1s"}, "gateway: watch: flag provided but not defined: -timeout"},
	{[]string{"watch"}, []string{"Sim.LED"}, `gateway: watch: "Sim.LED" is not a device id (lower-case letters, digits, '.', '_' and '-')`},
	{[]string{"stop"}, []string{"now"}, `gateway: stop: unexpected argument "now"`},
	{[]string{"resume"}, []string{"--reason", "x"}, "gateway: resume: flag provided but not defined: -reason"},
	{[]string{"confirm"}, []string{"approv"}, `gateway: confirm: unknown subcommand "approv" (want list, approve, reject, cancel)`},
	{[]string{"confirm", "list"}, []string{"--status", "open"}, `gateway: confirm list: --status "open" is not one of pending, approved, rejected, cancelled, expired, failed, superseded`},
	{[]string{"confirm", "approve"}, nil, "gateway: confirm approve: missing confirmation id"},
	{[]string{"confirm", "reject"}, []string{"a", "b"}, `gateway: confirm reject: unexpected argument "b"`},
	{[]string{"confirm", "cancel"}, nil, "gateway: confirm cancel: missing confirmation id"},
	{[]string{"audit"}, []string{"--limit", "x"}, `gateway: audit: invalid value "x" for flag -limit: parse error`},
	{[]string{"mcp"}, []string{"extra"}, `gateway: mcp: unexpected argument "extra"`},
	{[]string{"discover"}, []string{"--timeout", "-1s"}, `gateway: discover: --timeout must be positive, got -1s`},
	{[]string{"adapter"}, []string{"--bogus"}, "gateway: adapter: flag provided but not defined: -bogus"},
	{[]string{"adapter", "install"}, nil, "gateway: adapter install: missing adapter folder"},
	{[]string{"adapter", "list"}, []string{"x"}, `gateway: adapter list: unexpected argument "x"`},
	{[]string{"adapter", "status"}, nil, "gateway: adapter status: missing adapter name"},
	{[]string{"adapter", "logs"}, []string{"demo", "-n", "-1"}, `gateway: adapter logs: invalid value "-1" for flag -n: want 0 or more lines`},
	{[]string{"adapter", "reset"}, nil, "gateway: adapter reset: missing adapter name"},
	{[]string{"adapter", "remove"}, nil, "gateway: adapter remove: missing adapter name"},
}

// -h, --help and `gateway help COMMAND` print the usage to stdout and
// exit 0, for every command and subcommand.
func TestEveryCommandHasHelp(t *testing.T) {
	t.Setenv("GATEWAY_HUB", "")
	for _, tc := range usageCases {
		name := strings.Join(tc.path, " ")
		wantUsage := regexp.MustCompile(`^usage: gateway ` + regexp.QuoteMeta(name) + `[ \n]`)
		for _, args := range [][]string{
			append(slices.Clone(tc.path), "-h"),
			append(slices.Clone(tc.path), "--help"),
			append([]string{"help"}, tc.path...),
		} {
			out, errOut, code := cliRun(args...)
			if code != 0 || !wantUsage.MatchString(out) || errOut != "" {
				t.Errorf("gateway %s: exit %d, stdout %q, stderr %q; want the usage on stdout, exit 0", strings.Join(args, " "), code, out, errOut)
			}
		}
	}
	for _, name := range cli.CommandNames(env) {
		if !slices.ContainsFunc(usageCases, func(c struct {
			path []string
			bad  []string
			want string
		}) bool {
			return c.path[0] == name
		}) {
			t.Errorf("command %s has no row in usageCases", name)
		}
	}
}

// A usage error prints one line that says what was wrong, then the
// command's usage, on stderr, and exits 2.
func TestUsageErrors(t *testing.T) {
	t.Setenv("GATEWAY_HUB", "")
	for _, tc := range usageCases {
		args := append(slices.Clone(tc.path), tc.bad...)
		out, errOut, code := cliRun(args...)
		first, rest, _ := strings.Cut(errOut, "\n")
		if code != 2 || out != "" || first != tc.want || !regexp.MustCompile(`^usage: gateway `+regexp.QuoteMeta(strings.Join(tc.path, " "))+`[ \n]`).MatchString(rest) {
			t.Errorf("gateway %s: exit %d, stdout %q, stderr %q\nwant exit 2, %q then the usage", strings.Join(args, " "), code, out, errOut, tc.want)
		}
	}
}

// The top level: --help and help to stdout, exit 0; nothing or an
// unknown command to stderr, exit 2.
func TestTopLevelUsage(t *testing.T) {
	tests := []struct {
		args      []string
		code      int
		out, errs string // prefixes of stdout and stderr
	}{
		{[]string{"--help"}, 0, "usage: gateway COMMAND", ""},
		{[]string{"-h"}, 0, "usage: gateway COMMAND", ""},
		{[]string{"help"}, 0, "usage: gateway COMMAND", ""},
		{nil, 2, "", "gateway: missing command\nusage: gateway COMMAND"},
		{[]string{"frob"}, 2, "", "gateway: unknown command \"frob\"\nusage: gateway COMMAND"},
		{[]string{"help", "frob"}, 2, "", "gateway: help: unknown command \"frob\"\nusage: gateway COMMAND"},
		{[]string{"help", "token", "mint"}, 2, "", "gateway: token: unknown subcommand \"mint\""},
	}
	for _, tt := range tests {
		out, errOut, code := cliRun(tt.args...)
		if code != tt.code || !strings.HasPrefix(out, tt.out) || !strings.HasPrefix(errOut, tt.errs) || (tt.out == "") != (out == "") || (tt.errs == "") != (errOut == "") {
			t.Errorf("gateway %q: exit %d, stdout %q, stderr %q", tt.args, code, out, errOut)
		}
	}
	out, _, _ := cliRun("help")
	for _, name := range cli.CommandNames(env) {
		if !strings.Contains(out, "\n  "+name+" ") {
			t.Errorf("gateway help does not list %s:\n%s", name, out)
		}
	}
}

// The flags are listed as the documentation writes them, --name, with
// their defaults; a group lists its subcommands.
func TestUsageText(t *testing.T) {
	out, _, _ := cliRun("read", "-h")
	for _, want := range []string{"usage: gateway read ID [-v] [flags]\n", "\n  --hub URL\n", "\n  -v\n", "(default 10s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("read -h lacks %q:\n%s", want, out)
		}
	}
	out, _, _ = cliRun("token", "-h")
	for _, want := range []string{"usage: gateway token SUBCOMMAND [flags]\n", "\n  add ", "\n  revoke ", "gateway token SUBCOMMAND -h"} {
		if !strings.Contains(out, want) {
			t.Errorf("token -h lacks %q:\n%s", want, out)
		}
	}
}
