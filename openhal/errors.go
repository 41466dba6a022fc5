package openhal

// Error codes (spec §9).
const (
	CodeParseError           = -32700
	CodeInvalidRequest       = -32600
	CodeMethodNotFound       = -32601
	CodeInvalidParams        = -32602
	CodeInternalError        = -32603
	CodeNotInitialized       = -32001
	CodeUnauthorized         = -32002
	CodeForbidden            = -32003
	CodeDeviceNotFound       = -32004
	CodeBlocked              = -32005
	CodeStopped              = -32006
	CodeDeviceFault          = -32007
	CodeNotSupported         = -32008
	CodeTimeout              = -32009
	CodeBusy                 = -32010
	CodeConfirmationNotFound = -32011
	CodeConfirmationClosed   = -32012
)

// CodeName returns the spec's name of a code, or "" for an unknown one.
func CodeName(code int64) string {
	return codeNames[code]
}

var codeNames = map[int64]string{
	CodeParseError:           "PARSE_ERROR",
	CodeInvalidRequest:       "INVALID_REQUEST",
	CodeMethodNotFound:       "METHOD_NOT_FOUND",
	CodeInvalidParams:        "INVALID_PARAMS",
	CodeInternalError:        "INTERNAL_ERROR",
	CodeNotInitialized:       "NOT_INITIALIZED",
	CodeUnauthorized:         "UNAUTHORIZED",
	CodeForbidden:            "FORBIDDEN",
	CodeDeviceNotFound:       "DEVICE_NOT_FOUND",
	CodeBlocked:              "BLOCKED",
	CodeStopped:              "STOPPED",
	CodeDeviceFault:          "DEVICE_FAULT",
	CodeNotSupported:         "NOT_SUPPORTED",
	CodeTimeout:              "TIMEOUT",
	CodeBusy:                 "BUSY",
	CodeConfirmationNotFound: "CONFIRMATION_NOT_FOUND",
	CodeConfirmationClosed:   "CONFIRMATION_CLOSED",
}
