package board

import "strings"

// FieldError is one fault in a configuration file: the path of the field
// (such as "hub.limits.maxInFlight") and what is wrong with it. Path is
// empty for a fault of the file as a whole, such as a YAML syntax error,
// whose Msg then names the line.
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

// Errors is every fault found in one configuration file. Its Error is one
// fault a line, as `gateway check` prints them.
type Errors []FieldError

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}
