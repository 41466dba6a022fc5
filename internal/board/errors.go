package board

import "github.com/openhal/gateway/internal/fielderr"

// FieldError is one fault in a configuration file; Errors is every fault
// of one file, one a line, as `gateway check` prints them.
type (
	FieldError = fielderr.FieldError
	Errors     = fielderr.Errors
)
