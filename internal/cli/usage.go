package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// The command line convention (docs/cli.md), one for every command and
// subcommand, so that a person learns it once:
//
//   - -h, --help and `gateway help COMMAND [SUBCOMMAND]` print the usage to
//     standard output and exit 0;
//   - a usage error (a bad flag, a missing or extra argument, an unknown
//     subcommand) prints `gateway: <what was wrong>` and then the usage to
//     standard error, and exits 2;
//   - any other error prints one line `gateway: <what went wrong>` to
//     standard error and exits 1.
//
// The flag package prints nothing itself (its output is discarded): the
// commands return a *usageError or a *helpRequest, and Run prints. The
// server's commands (Env.Server) follow it with the same functions.

// usageError is a command line that is wrong. errors.Is(err, errUsage)
// holds for it.
type usageError struct {
	msg   string          // what was wrong, with the command's name
	usage func(io.Writer) // the command's usage
}

func (e *usageError) Error() string        { return e.msg }
func (e *usageError) Is(target error) bool { return target == errUsage }

// helpRequest is -h or --help. It unwraps to flag.ErrHelp.
type helpRequest struct {
	usage func(io.Writer)
}

func (e *helpRequest) Error() string { return "help requested" }
func (e *helpRequest) Unwrap() error { return flag.ErrHelp }

// NewFlagSet returns the flag set of `gateway NAME` (NAME may be a
// subcommand, "token add"): it prints nothing by itself, and its usage is
// "usage: gateway NAME SYNOPSIS" followed by its flags.
func NewFlagSet(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, strings.TrimSpace("usage: gateway "+name+" "+synopsis))
		printFlags(w, fs)
	}
	return fs
}

// usageOf returns a function that writes fs's usage to a writer.
func usageOf(fs *flag.FlagSet) func(io.Writer) {
	return func(w io.Writer) {
		fs.SetOutput(w)
		defer fs.SetOutput(io.Discard)
		fs.Usage()
	}
}

// printFlags lists fs's flags the way the documentation writes them:
// --name VALUE, then what it does and its default.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	first := true
	fs.VisitAll(func(f *flag.Flag) {
		if first {
			fmt.Fprintln(w, "\nflags:")
			first = false
		}
		arg, text := flag.UnquoteUsage(f)
		dash := "--"
		if len(f.Name) == 1 {
			dash = "-"
		}
		line := "  " + dash + f.Name
		if arg != "" {
			line += " " + strings.ToUpper(arg)
		}
		if def := f.DefValue; def != "" && def != "false" && def != "0" && !strings.Contains(text, "(default") {
			text += " (default " + def + ")"
		}
		fmt.Fprintf(w, "%s\n      %s\n", line, text)
	})
}

// ParseFlags parses args with fs and turns the flag package's errors into
// the convention's.
func ParseFlags(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		return &helpRequest{usage: usageOf(fs)}
	}
	return Usagef(fs, "%v", err)
}

// Usagef is a usage error of fs's command: "NAME: what was wrong".
func Usagef(fs *flag.FlagSet, format string, args ...any) error {
	return &usageError{msg: fs.Name() + ": " + fmt.Sprintf(format, args...), usage: usageOf(fs)}
}

// WantArgs checks the positional arguments: n of them, named by what
// (what[i] names argument i, "device id") so that a missing one is named.
func WantArgs(fs *flag.FlagSet, pos []string, n int, what ...string) error {
	switch {
	case len(pos) > n:
		return Usagef(fs, "unexpected argument %q", pos[n])
	case len(pos) == n:
		return nil
	case len(pos) < len(what):
		return Usagef(fs, "missing %s", what[len(pos)])
	}
	return Usagef(fs, "want %d %s, got %d", n, plural(uint64(n), "argument", "arguments"), len(pos))
}

// subcommand is one subcommand of a group (token, confirm, adapter).
type subcommand struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

// runGroup runs `gateway NAME SUBCOMMAND ...`: it finds the subcommand,
// or answers -h with the list of subcommands.
func runGroup(name string, subs []subcommand, args []string, stdout, stderr io.Writer) error {
	fs := NewFlagSet(name, "SUBCOMMAND [flags]")
	names := make([]string, len(subs))
	for i, s := range subs {
		names[i] = s.name
	}
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "usage: gateway %s SUBCOMMAND [flags]\n\n", name)
		for _, s := range subs {
			fmt.Fprintf(w, "  %-8s %s\n", s.name, s.summary)
		}
		fmt.Fprintf(w, "\ngateway %s SUBCOMMAND -h shows a subcommand's flags.\n", name)
	}
	switch {
	case len(args) == 0:
		return Usagef(fs, "missing subcommand (%s)", strings.Join(names, ", "))
	case strings.HasPrefix(args[0], "-"):
		if err := ParseFlags(fs, args[:1]); err != nil {
			return err
		}
	}
	for _, s := range subs {
		if s.name == args[0] {
			return s.run(args[1:], stdout, stderr)
		}
	}
	return Usagef(fs, "unknown subcommand %q (want %s)", args[0], strings.Join(names, ", "))
}
