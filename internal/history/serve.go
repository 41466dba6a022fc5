package history

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
	"github.com/openhal/gateway/openhal/gatewayext"
)

// Method is the extension method that serves the history.
const Method = gatewayext.MethodHistory

// Params are gateway/history's params.
type Params = gatewayext.HistoryParams

// Extensions are the Hub methods of h: gateway/history, with hal/read's
// scope and device limits. known says whether a device is registered, so
// that a visible device that has no value yet answers an empty page, and
// one that never was answers DEVICE_NOT_FOUND.
func (h *History) Extensions(known func(id string) bool) map[string]halhub.Extension {
	return map[string]halhub.Extension{
		Method: {Scope: openhal.ScopeRead, Serve: func(ctx context.Context, raw json.RawMessage) (any, *jsonrpc.Error) {
			return h.serve(ctx, raw, known)
		}},
	}
}

func (h *History) serve(ctx context.Context, raw json.RawMessage, known func(string) bool) (any, *jsonrpc.Error) {
	caller, ok := halhub.CallerOf(ctx)
	if !ok {
		return nil, &jsonrpc.Error{Code: openhal.CodeInternalError, Message: Method + " served outside a Hub request"}
	}
	var p Params
	if err := halhub.DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	q, jerr := queryOf(p)
	if jerr != nil {
		return nil, jerr
	}
	if !caller.Sees(p.Device) {
		return nil, halhub.NotFound(p.Device)
	}
	if _, kept := h.Fields(p.Device); !kept && !known(p.Device) {
		return nil, halhub.NotFound(p.Device)
	}
	q.Room = caller.Room
	page, err := h.Query(q)
	var ferr *FieldError
	switch {
	case errors.As(err, &ferr):
		return nil, halhub.InvalidParams(err.Error(), map[string]any{"param": "field", "fields": ferr.Fields})
	case errors.Is(err, ErrNoRoom):
		return nil, halhub.InvalidParams(err.Error(), nil)
	case err != nil:
		return nil, &jsonrpc.Error{Code: openhal.CodeInternalError, Message: "read history: " + err.Error()}
	}
	return page, nil
}

// queryOf checks p and turns it into a Query; Limit is 0 when p has none.
func queryOf(p Params) (Query, *jsonrpc.Error) {
	bad := func(param, msg string) *jsonrpc.Error {
		return halhub.InvalidParams(msg, map[string]any{"param": param})
	}
	q := Query{Device: p.Device, Field: p.Field, Resolution: p.Resolution, Since: p.Since, Until: p.Until, FromDisk: p.From != nil || p.Since != nil}
	switch {
	case p.Device == "":
		return q, bad("device", "params.device is required")
	case p.Resolution != "" && p.Resolution != Full && p.Resolution != Minute:
		return q, bad("resolution", `params.resolution must be "full" or "minute", got "`+string(p.Resolution)+`"`)
	case p.Limit != nil && *p.Limit < 1:
		return q, bad("limit", "params.limit must be at least 1")
	case p.Since != nil && p.Until != nil && *p.Until < *p.Since:
		return q, bad("until", "params.until must not be before params.since")
	}
	if p.From != nil {
		q.From = *p.From
	}
	if p.Limit != nil {
		q.Limit = *p.Limit
	}
	return q, nil
}
