package cli

import (
	"io"
	"maps"
	"slices"
)

// For the tests of package cli_test, which run the commands with the
// gateway's own parts: internal/gatewayd imports this package, so only
// an external test package may import it.

// CommandOf is the command name of a command line run with env.
func CommandOf(env Env, name string) func(args []string, stdout, stderr io.Writer) error {
	return (&app{env: env}).commands()[name].run
}

// CommandNames are the commands of a command line run with env.
func CommandNames(env Env) []string {
	return slices.Sorted(maps.Keys((&app{env: env}).commands()))
}

// CLIPrincipal is who the audit log names for a change made with the
// command line.
var CLIPrincipal = cliPrincipal
