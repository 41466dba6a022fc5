package halhub

import (
	"fmt"

	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// errorData is an error's data object; reason is always there (spec §1).
type errorData map[string]any

// newError builds an error answer with data.reason and any extra data
// fields.
func newError(code int64, reason, msg string, extra errorData) *jsonrpc.Error {
	d := errorData{"reason": reason}
	for k, v := range extra {
		d[k] = v
	}
	return &jsonrpc.Error{Code: code, Message: msg, Data: d}
}

func errorf(code int64, reason, format string, args ...any) *jsonrpc.Error {
	return newError(code, reason, fmt.Sprintf(format, args...), nil)
}

func errNotInitialized() *jsonrpc.Error {
	return errorf(openhal.CodeNotInitialized, "not_initialized", "send hal/initialize first")
}

func errMethodNotFound(method string) *jsonrpc.Error {
	return errorf(openhal.CodeMethodNotFound, "method_not_found", "method %q not found", method)
}

func errForbidden(reason, format string, args ...any) *jsonrpc.Error {
	return errorf(openhal.CodeForbidden, reason, format, args...)
}

func errInvalidParams(reason, format string, args ...any) *jsonrpc.Error {
	return errorf(openhal.CodeInvalidParams, reason, format, args...)
}

func errDeviceNotFound(id string) *jsonrpc.Error {
	return newError(openhal.CodeDeviceNotFound, "device_not_found", fmt.Sprintf("no device %q", id), errorData{"device": id})
}

func errInternal(err error) *jsonrpc.Error {
	return errorf(openhal.CodeInternalError, "internal", "internal error: %v", err)
}

// errParam is INVALID_PARAMS about one param, which data.param names, so
// that a client can point at it without parsing the message.
func errParam(reason, param, format string, args ...any) *jsonrpc.Error {
	return newError(openhal.CodeInvalidParams, reason, fmt.Sprintf(format, args...), errorData{"param": param})
}

// errMissing is INVALID_PARAMS for a required param that is absent, null or
// empty.
func errMissing(param string) *jsonrpc.Error {
	return errParam("missing_param", param, "params.%s is required", param)
}
