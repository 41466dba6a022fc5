package halclient

import (
	"errors"
	"fmt"
	"strings"

	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// HubError is an error answer from the Hub together with what was asked,
// so that it reads as one sentence for a person: `no such device
// "sim.lde"` rather than `jsonrpc error -32004: no device "sim.lde"`.
// errors.As still finds the *jsonrpc.Error inside.
//
// Error appends the code's name and data.reason, "(CONFIRMATION_CLOSED):
// confirmation_closed", for logs and scripts; with Plain set it is the
// sentence alone, which already says what they say, for a person (the
// gateway CLI sets it unless --json).
type HubError struct {
	Method string // the request that failed
	Device string // the device it named, if any
	Err    *jsonrpc.Error
	Plain  bool // the sentence without the code's name and reason
}

// Describe wraps an error answer (a *jsonrpc.Error, as Call returns it) in
// a *HubError naming the method and device; other errors are returned
// unchanged.
func Describe(err error, method, device string) error {
	var e *jsonrpc.Error
	if !errors.As(err, &e) {
		return err
	}
	return &HubError{Method: method, Device: device, Err: withDecodedData(e)}
}

func (e *HubError) Unwrap() error { return e.Err }

// Code returns the error's code.
func (e *HubError) Code() int64 { return e.Err.Code }

// Reason returns data.reason, the error's machine-readable word.
func (e *HubError) Reason() string { return e.field("reason") }

// Param returns data.param, the request param the error is about, if any.
func (e *HubError) Param() string { return e.field("param") }

// field returns data[name] when it is a string.
func (e *HubError) field(name string) string {
	d, _ := e.Err.Data.(map[string]any)
	s, _ := d[name].(string)
	return s
}

func (e *HubError) Error() string {
	code, reason := e.Err.Code, e.Reason()
	dev := e.Device
	if dev == "" {
		dev = e.field("device")
	}
	switch {
	case code == openhal.CodeUnauthorized && reason == "token_missing":
		return e.tagged("the hub wants a token and none was given")
	case code == openhal.CodeUnauthorized && e.Plain && e.Err.Message != "":
		return "the hub refused the token: " + e.Err.Message
	case code == openhal.CodeUnauthorized:
		return e.tagged("the hub refused the token")
	case code == openhal.CodeDeviceNotFound && dev != "":
		return fmt.Sprintf("no such device %q", dev)
	case code == openhal.CodeInvalidParams && reason == "wrong_type" && dev != "" && e.field("param") == "":
		return fmt.Sprintf("value of the wrong type for %s: %s", dev, e.detail(dev))
	case code == openhal.CodeInvalidParams && dev != "" && e.field("param") == "" && e.Method == openhal.MethodWrite:
		return fmt.Sprintf("value not accepted by %s: %s", dev, e.detail(dev))
	case code == openhal.CodeMethodNotFound && e.Method != "":
		return e.tagged(fmt.Sprintf("the hub does not serve %s (unknown to it, or above its conformance level)", e.Method))
	}
	msg := e.Err.Message
	if dev != "" && !strings.Contains(msg, dev) {
		msg = dev + ": " + msg
	}
	return e.tagged(msg)
}

// tagged appends the code's name and the reason: "msg (UNAUTHORIZED):
// token_unknown", unless Plain.
func (e *HubError) tagged(msg string) string {
	if e.Plain && msg != "" {
		return msg
	}
	name := openhal.CodeName(e.Err.Code)
	if name == "" {
		name = fmt.Sprintf("error %d", e.Err.Code)
	}
	if r := e.Reason(); r != "" {
		return fmt.Sprintf("%s (%s): %s", msg, name, r)
	}
	return fmt.Sprintf("%s (%s)", msg, name)
}

// detail is the Hub's explanation of a refused value without the device
// that the sentence already names ("value for sim.led: want a boolean, got
// a string" → "want a boolean, got a string").
func (e *HubError) detail(dev string) string {
	if d := e.field("detail"); d != "" {
		return d
	}
	msg := e.Err.Message
	for _, prefix := range []string{"value for " + dev + ": ", dev + ": "} {
		if rest, ok := strings.CutPrefix(msg, prefix); ok {
			return rest
		}
	}
	return msg
}

// VersionError is a Hub that answered hal/initialize with a protocol
// version this client cannot use (seed 3.1.2, point 5). The client has
// disconnected.
type VersionError struct {
	URL    string
	Hub    string   // the version the Hub answered with
	Client []string // the versions this client supports
}

func (e *VersionError) Error() string {
	vs := make([]string, len(e.Client))
	for i, v := range e.Client {
		vs[i] = "v" + v
	}
	return fmt.Sprintf("the hub at %s speaks OpenHAL v%s; this client speaks only %s", e.URL, e.Hub, strings.Join(vs, ", "))
}
