package manifest

import (
	"fmt"
	"strings"
)

// FieldError is one fault in an adapter folder: the path of the manifest
// field (such as "grant.scope[1]" or "devices[0].schema.type") and what is
// wrong with it. Path is empty for a fault of the file as a whole, such as
// a JSON syntax error.
type FieldError struct {
	Path string
	Msg  string
}

func (e FieldError) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// Errors is every fault found in one adapter folder: the spec asks that a
// manifest error names every bad field at once, so that an author fixes
// them in one round. Its Error is one fault a line.
type Errors []FieldError

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

func (es *Errors) add(path, format string, args ...any) {
	*es = append(*es, FieldError{Path: path, Msg: fmt.Sprintf(format, args...)})
}
