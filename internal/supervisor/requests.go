package supervisor

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/openhal/gateway/adapterproto"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// handler serves an adapter's requests (section 5). Requests about the
// Hub's devices go to the Hub as the adapter's own principal, after the
// grant check; devices.add and devices.remove change the adapter's own.
type handler struct{ a *adapter }

// halMethod is the Hub method that serves each adapter method, and the
// least grant level it needs.
var halMethods = map[string]struct {
	hal   string
	level openhal.Scope
}{
	adapterproto.MethodDevicesList: {openhal.MethodDevicesList, openhal.ScopeRead},
	adapterproto.MethodDeviceRead:  {openhal.MethodRead, openhal.ScopeRead},
	adapterproto.MethodDeviceWrite: {openhal.MethodWrite, openhal.ScopeControlLow},
	adapterproto.MethodHubStop:     {openhal.MethodStop, openhal.ScopeControlLow},
	// hal/confirmations/list answers the requests of the devices the
	// grant sees (the adapter's entry).
	adapterproto.MethodHubConfirmations: {openhal.MethodConfirmationsList, openhal.ScopeRead},
}

func (h *handler) Request(ctx context.Context, method string, params json.RawMessage) (any, *jsonrpc.Error) {
	a := h.a
	switch method {
	case adapterproto.MethodDevicesAdd:
		return a.addRuntime(params)
	case adapterproto.MethodDevicesRemove:
		return a.removeRuntime(params)
	case adapterproto.MethodHubStopped:
		// The stop as a client learns it at hal/initialize, with the
		// failures of the devices the grant sees.
		return struct {
			Stopped *openhal.StopInfo `json:"stopped"`
		}{a.s.opt.Hub.StopInForce(a.entry())}, nil
	}
	m, ok := halMethods[method]
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + method}
	}
	entry := a.entry()
	if !entry.Scope.AtLeast(m.level) {
		return nil, denied("", "%s needs a grant of %s; adapter %s has %s", method, m.level, a.name, entry.Scope)
	}
	if method == adapterproto.MethodDeviceRead || method == adapterproto.MethodDeviceWrite {
		var p struct {
			Device string `json:"device"`
		}
		_ = json.Unmarshal(params, &p) // a malformed request is the Hub's to explain
		if p.Device != "" && !entry.Visible(p.Device) {
			return nil, denied(p.Device, "%s is outside the grant of adapter %s", p.Device, a.name)
		}
	}
	if len(params) == 0 {
		params = json.RawMessage(`{}`)
	}
	return a.local.Call(ctx, m.hal, params)
}

// Notify takes the adapter's notifications: value.publish; others are
// ignored, as the protocol says of unknown notifications.
func (h *handler) Notify(method string, params json.RawMessage) {
	if method == adapterproto.MethodValuePublish {
		h.a.publish(params)
	}
}

// denied is section 5's refusal: -32003 with E_ADAPTER_DENIED.
func denied(device, format string, args ...any) *jsonrpc.Error {
	data := map[string]any{"code": adapterproto.EAdapterDenied, "reason": "denied"}
	if device != "" {
		data["device"] = device
	}
	return &jsonrpc.Error{Code: adapterproto.CodeDenied, Message: fmt.Sprintf(format, args...), Data: data}
}

func invalidParams(format string, args ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...),
		Data: map[string]any{"reason": "bad_params"}}
}
