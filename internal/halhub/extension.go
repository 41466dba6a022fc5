package halhub

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openhal/gateway/internal/halhub/token"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// ExtensionPrefix starts the name of every extension method, so that the
// gateway's own methods can never shadow a protocol method ("hal/...").
const ExtensionPrefix = "gateway/"

// Extension is a request method the gateway adds to the Hub's own, such as
// the adapters' status for `gateway adapter`: it is served like the
// built-in methods, over the same transports and tokens, after the same
// scope check (a token below Scope is answered FORBIDDEN), so that the
// operator's commands need no second way in.
type Extension struct {
	Scope openhal.Scope
	// Serve answers a request on a goroutine of its own; ctx ends with the
	// connection, and CallerOf(ctx) says who asked. Params are as the
	// client sent them (nil when absent): DecodeParams decodes them
	// strictly.
	Serve func(ctx context.Context, params json.RawMessage) (any, *jsonrpc.Error)
	// Unlimited refuses a token limited to some devices (FORBIDDEN
	// device_limited), as hal/resume does: for a method whose answer or
	// effect reaches past any one device's (every adapter's state, an
	// adapter's restart).
	Unlimited bool
}

// Caller is who sent an extension request: a method whose answer could
// tell of devices (an adapter's name does) leaves that out for a token
// limited to some devices, which must learn nothing of the others.
type Caller struct {
	Principal openhal.Principal
	// Limited is set for a token limited to some devices.
	Limited bool
	// Room is how many bytes the answer's result may take so that the
	// whole answer, with this request's id, fits in one message of the
	// Hub's MaxMessageBytes: a method whose answer can grow (a device's
	// history) pages by it, as hal/audit/list does (page.go).
	Room int

	// devices are the token's device patterns, none for every device.
	devices []string
}

// Sees reports whether the caller's token may see the device id: a
// method about one device answers DEVICE_NOT_FOUND (NotFound) for one it
// does not, as hal/read does, so that a limited token cannot tell a
// hidden device from an absent one.
func (c Caller) Sees(id string) bool {
	return token.Entry{Devices: c.devices}.Visible(id)
}

// NotFound is the DEVICE_NOT_FOUND error of hal/read for the device id.
func NotFound(id string) *jsonrpc.Error {
	return errDeviceNotFound(id)
}

// callerKey is the key of an extension request's Caller in its context.
type callerKey struct{}

// CallerOf returns who sent the extension request whose context ctx is;
// false outside one.
func CallerOf(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}

// addExtensions adds exts to methods. A name outside ExtensionPrefix, or
// an extension without Serve, is a programming error of the gateway, not
// something a configuration can cause: it panics.
func addExtensions(methods map[string]method, exts map[string]Extension) {
	for name, ext := range exts {
		if !strings.HasPrefix(name, ExtensionPrefix) || len(name) == len(ExtensionPrefix) || ext.Serve == nil {
			panic(fmt.Sprintf("halhub: extension %q: want a name under %q and a Serve function", name, ExtensionPrefix))
		}
		if _, err := openhal.ParseScope(string(ext.Scope)); err != nil {
			panic(fmt.Sprintf("halhub: extension %q: %v", name, err))
		}
		serve, unlimited := ext.Serve, ext.Unlimited
		methods[name] = method{
			scope:     ext.Scope,
			extension: true,
			serve: func(s *session, ctx context.Context, params json.RawMessage) (any, *jsonrpc.Error) {
				p, entry := s.who()
				if unlimited && len(entry.Devices) > 0 {
					return nil, errForbidden("device_limited", "%s needs a token not limited to some devices; this one is limited to %s", name, strings.Join(entry.Devices, ", "))
				}
				caller := Caller{Principal: p, Limited: len(entry.Devices) > 0, Room: s.pageRoom(ctx, ""), devices: entry.Devices}
				ctx = context.WithValue(ctx, callerKey{}, caller)
				return serve(ctx, params)
			},
		}
	}
}

// DecodeParams decodes an extension's params into the struct v pointed
// to, as strictly as the Hub's own: an unknown or misspelt param is an
// INVALID_PARAMS error naming it, and absent params leave v as it is.
func DecodeParams(params json.RawMessage, v any) *jsonrpc.Error {
	return decodeParams(params, v)
}

// InvalidParams is the error of a request whose params are wrong: msg says
// what, and data (may be nil) carries the details.
func InvalidParams(msg string, data map[string]any) *jsonrpc.Error {
	return newError(openhal.CodeInvalidParams, "invalid_params", msg, data)
}
