package cli

import (
	"os"
	"path/filepath"
	"strings"
)

// execHint is what to add to a manifest's "exec: not found in the folder"
// when the folder looks like an adapter's source rather than a built
// adapter: one of this repository's examples (make adapters builds them
// into bin/adapters), or a folder with a Makefile or Go files. Otherwise
// it is "".
func execHint(dir string) string {
	abs, err := filepath.Abs(dir)
	if err == nil && filepath.Base(filepath.Dir(abs)) == "examples" && filepath.Base(filepath.Dir(filepath.Dir(abs))) == "adapters" {
		return "; build it first: make adapters, then gateway adapter install bin/adapters/" + filepath.Base(abs)
	}
	if _, err := os.Stat(filepath.Join(dir, "Makefile")); err == nil {
		return "; build it first (the folder has a Makefile)"
	}
	if gos, _ := filepath.Glob(filepath.Join(dir, "*.go")); len(gos) > 0 {
		return "; build it first (the folder holds Go source: go build -o <exec> .)"
	}
	return ""
}

// withExecHint adds execHint to a fault of the manifest's exec that was
// not found.
func withExecHint(dir string, e FieldError) string {
	s := e.Error()
	if e.Path == "exec" && strings.HasPrefix(e.Msg, "not found") {
		s += execHint(dir)
	}
	return s
}
