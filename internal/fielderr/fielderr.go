// Package fielderr is how the gateway reports a bad file — a configuration,
// an adapter manifest: every fault at once, each with the path of its field,
// so that the author fixes them all in one round.
package fielderr

import (
	"fmt"
	"strings"
)

// FieldError is one fault: the path of the field (such as
// "hub.limits.maxInFlight" or "grant.scope[1]") and what is wrong with it.
// Path is empty for a fault of the file as a whole, such as a syntax
// error, whose Msg then says where.
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

// Errors is every fault found in one file. Its Error is one fault a line,
// as `gateway check` prints them.
type Errors []FieldError

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Add appends a fault.
func (es *Errors) Add(path, format string, args ...any) {
	*es = append(*es, FieldError{Path: path, Msg: fmt.Sprintf(format, args...)})
}
