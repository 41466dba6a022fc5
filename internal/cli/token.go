package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/user"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/openhal/gateway/openhal"
)

// cmdToken runs `gateway token add|list|revoke ...` (DESIGN.md "Command line contract"):
//
//	gateway token add --state-dir DIR --name NAME --kind KIND --scope SCOPE [--devices PATTERNS]  → prints the new token alone on stdout
//	gateway token list [--state-dir DIR] [--json]   → a table (name, kind, scope, devices, created), never hashes
//	gateway token revoke NAME [--state-dir DIR]
//
// The store is a file in the state directory that a running gateway
// watches, so these work beside it and take effect within a second.
//
// Every token added or revoked is recorded in the audit log of the state
// directory (spec §10), once the token file's change is on disk; see
// auditToken.
func (a *app) cmdToken(args []string, stdout, stderr io.Writer) error {
	return runGroup("token", []subcommand{
		{"add", "add a token and print it", a.tokenAdd},
		{"list", "the tokens: name, kind, scope, devices, created (never the tokens)", a.tokenList},
		{"revoke", "revoke a token by its name", a.tokenRevoke},
	}, args, stdout, stderr)
}

// tokenFlags is a subcommand's FlagSet with its --state-dir.
func tokenFlags(name, synopsis string, _ io.Writer) (*flag.FlagSet, *string) {
	fs := NewFlagSet("token "+name, synopsis)
	dir := fs.String("state-dir", DefaultStateDir(), "the gateway's state `directory`")
	return fs, dir
}

// parseArgs parses flags and positional arguments in any order, so that
// `revoke NAME --state-dir DIR` works as well as the other way round.
func parseArgs(fs *flag.FlagSet, args []string) (positional []string, err error) {
	for {
		if err := ParseFlags(fs, args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func (a *app) openStore(fs *flag.FlagSet, dir string) (Tokens, error) {
	if err := ServerOnly(fs.Name()); err != nil {
		return nil, err
	}
	if dir == "" {
		return nil, Usagef(fs, "no state directory: pass --state-dir")
	}
	if err := asStateOwner(dir); err != nil {
		return nil, err
	}
	return a.env.StateDir.Tokens(dir), nil
}

func (a *app) tokenAdd(args []string, stdout, stderr io.Writer) error {
	fs, dir := tokenFlags("add", "--name NAME --kind KIND --scope SCOPE [--devices PATTERNS] [--state-dir DIR]", stderr)
	name := fs.String("name", "", "the token's `name` (required)")
	kind := fs.String("kind", "", "principal `kind`: agent, operator or service (required)")
	scope := fs.String("scope", "", "`scope`: read, control_low, control_high or admin (required)")
	devices := fs.String("devices", "", "comma-separated device ids and prefix.* `patterns` (default: every device)")
	init := fs.Bool("init", false, "make the state directory when it is not one yet (before the gateway's first start)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := WantArgs(fs, pos, 0); err != nil {
		return err
	}
	for _, f := range []struct{ flag, val string }{{"name", *name}, {"kind", *kind}, {"scope", *scope}} {
		if f.val == "" {
			return Usagef(fs, "--%s is required", f.flag)
		}
	}
	patterns, err := splitPatterns(*devices)
	if err != nil {
		return Usagef(fs, "%v", err)
	}
	s, err := a.openStore(fs, *dir)
	if err != nil {
		return err
	}
	if err := s.Check(*name, *kind, openhal.Scope(*scope), patterns); err != nil {
		return Usagef(fs, "%v", err)
	}
	if err := checkStateDir(s, *dir, *init, initHint); err != nil {
		return err
	}
	tok, err := s.Add(*name, *kind, openhal.Scope(*scope), patterns)
	if err != nil {
		return err
	}
	devs := "all devices"
	if len(patterns) > 0 {
		devs = "devices " + strings.Join(patterns, ",")
	}
	why := fmt.Sprintf("token %q: %s, scope %s, %s", *name, *kind, *scope, devs)
	if err := a.auditToken(*dir, "token.add", "created", why); err != nil {
		// A token that was never shown is harmless; one in use without
		// a record is what the audit log exists to prevent.
		if rerr := s.Revoke(*name); rerr != nil {
			return fmt.Errorf("token add: %w; and the unrecorded token could not be removed again: %w", err, rerr)
		}
		return fmt.Errorf("token add: %w; the token was removed again", err)
	}
	_, err = fmt.Fprintln(stdout, tok)
	return err
}

// splitPatterns splits --devices; an empty flag means every device.
func splitPatterns(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	patterns := strings.Split(s, ",")
	for i, p := range patterns {
		patterns[i] = strings.TrimSpace(p)
		if patterns[i] == "" {
			return nil, fmt.Errorf("--devices %q has an empty pattern", s)
		}
	}
	return patterns, nil
}

func (a *app) tokenList(args []string, stdout, stderr io.Writer) error {
	fs, dir := tokenFlags("list", "[--state-dir DIR] [--json]", stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	init := fs.Bool("init", false, "list a directory that is not a state directory yet (as empty)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := WantArgs(fs, pos, 0); err != nil {
		return err
	}
	s, err := a.openStore(fs, *dir)
	if err != nil {
		return err
	}
	if err := checkStateDir(s, *dir, *init, initHint); err != nil {
		return err
	}
	entries, err := s.List()
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(entries)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tSCOPE\tDEVICES\tCREATED")
	for _, e := range entries {
		devices := strings.Join(e.Devices, ",")
		if devices == "" {
			devices = "all"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.Name, e.Kind, e.Scope, devices, e.Created.UTC().Format(time.RFC3339))
	}
	return tw.Flush()
}

func (a *app) tokenRevoke(args []string, stdout, stderr io.Writer) error {
	fs, dir := tokenFlags("revoke", "NAME [--state-dir DIR]", stderr)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := WantArgs(fs, pos, 1, "token name"); err != nil {
		return err
	}
	s, err := a.openStore(fs, *dir)
	if err != nil {
		return err
	}
	if err := checkStateDir(s, *dir, false, ""); err != nil {
		return err
	}
	what := revokedText(s, pos[0])
	if err := s.Revoke(pos[0]); err != nil {
		return err
	}
	if err := a.auditToken(*dir, "token.revoke", "revoked", fmt.Sprintf("token %q", pos[0])); err != nil {
		return fmt.Errorf("token revoke: the token %q is revoked, but %w", pos[0], err)
	}
	_, err = fmt.Fprintf(stdout, "revoked %s; a running gateway refuses it within a second\n", what)
	return err
}

// revokedText says which token a revoke removes: its name, kind, scope
// and devices, as `token list` shows them.
func revokedText(s Tokens, name string) string {
	what := fmt.Sprintf("token %q", name)
	entries, err := s.List()
	if err != nil {
		return what
	}
	for _, e := range entries {
		if e.Name == name {
			devices := "all devices"
			if len(e.Devices) > 0 {
				devices = "devices " + strings.Join(e.Devices, ",")
			}
			return fmt.Sprintf("%s (%s, scope %s, %s)", what, e.Kind, e.Scope, devices)
		}
	}
	return what
}

// auditToken appends one entry for a token change to the audit log in the
// state directory. The running gateway appends to the same log; the two
// take turns under its lock, so seqs stay in order. The entry names the
// token, never holds it.
func (a *app) auditToken(stateDir, action, outcome, reason string) error {
	if err := a.env.StateDir.Audit(stateDir, cliPrincipal(), action, outcome, reason); err != nil {
		return fmt.Errorf("the audit log could not record it: %w", err)
	}
	return nil
}

// cliPrincipal is who the audit log names for a change made with the CLI:
// an operator, named by the login that ran the command. Run as root
// through sudo (the usual way on a Pi, whose state directory is root's),
// that is the login that ran sudo, as $SUDO_USER says: "root" alone would
// tell an auditor nothing.
func cliPrincipal() openhal.Principal {
	name := "uid " + strconv.Itoa(os.Getuid())
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if su := os.Getenv("SUDO_USER"); su != "" && os.Geteuid() == 0 {
		name = su
	}
	return openhal.Principal{Kind: openhal.KindOperator, Name: name}
}
