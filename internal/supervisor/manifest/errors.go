package manifest

import "github.com/openhal/gateway/internal/fielderr"

// FieldError is one fault in an adapter folder (a manifest field's path,
// such as "grant.scope[1]", and what is wrong); Errors is every fault
// found at once: the spec asks that a manifest error names every bad
// field, so that an author fixes them in one round.
type (
	FieldError = fielderr.FieldError
	Errors     = fielderr.Errors
)
