package device

import (
	"strings"
	"time"
)

// Proxy is a device whose requests go to another program: a device that a
// supervised adapter provides. The Hub treats it as any device, except that
// it takes the device's own deadline when the client names none (an
// adapter's request_ms, plus its handshake for a tool that must first be
// started), and that it lets the device answer while offline, so that the
// error says why (the adapter is not running: E_ADAPTER_FAILED).
type Proxy interface {
	Device
	// Timeout is the default deadline of a read or write.
	Timeout() time.Duration
}

// CodedError is a device failure with a machine-readable code, which the
// Hub passes to the client in data.code beside its DEVICE_FAULT (openhal
// §1: "an error that an adapter caused also has data.code"). Object, when
// set, is passed on whole in data.error: an adapter's own error object.
type CodedError struct {
	Code   string // E_ADAPTER_CRASHED, E_ADAPTER_FAILED, E_ADAPTER_ERROR, ...
	Msg    string
	Object any
}

func (e *CodedError) Error() string { return e.Msg }

// Reason is the code as a data.reason word: E_ADAPTER_ERROR → adapter_error.
func (e *CodedError) Reason() string {
	return strings.ToLower(strings.TrimPrefix(e.Code, "E_"))
}
