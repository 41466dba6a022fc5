package halhub

import (
	"context"
	"encoding/json"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
	"github.com/openhal/gateway/openhal/gatewayext"
)

// MethodValues gives the last known value of every readable device the
// caller sees, from the Hub's registry, with its age. It reads no device
// and starts no tool: what `gateway devices` shows. hal/read is what
// measures. Every Hub serves it, an extension under ExtensionPrefix
// (openhal-0.1 leaves names outside hal/ to the implementation).
const MethodValues = gatewayext.MethodValues

// valuesExtension serves MethodValues from reg.
func valuesExtension(reg *device.Registry) map[string]Extension {
	return map[string]Extension{
		MethodValues: {Scope: openhal.ScopeRead, Serve: func(ctx context.Context, raw json.RawMessage) (any, *jsonrpc.Error) {
			caller, ok := CallerOf(ctx)
			if !ok {
				return nil, &jsonrpc.Error{Code: openhal.CodeInternalError, Message: MethodValues + " served outside a Hub request"}
			}
			var p struct{}
			if err := DecodeParams(raw, &p); err != nil {
				return nil, err
			}
			return lastValues(reg, caller), nil
		}},
	}
}

func lastValues(reg *device.Registry, caller Caller) gatewayext.ValuesResult {
	out := gatewayext.ValuesResult{Values: []gatewayext.LastValue{}}
	now := reg.Now()
	for _, d := range reg.List() {
		if !caller.Sees(d.ID) || !d.Access.CanRead() {
			continue
		}
		snap, ok := reg.Value(d.ID)
		if !ok {
			continue
		}
		v := gatewayext.LastValue{Device: d.ID, Value: snap.Value, TS: snap.TS, Seq: snap.Seq, AgeMs: now.Sub(snap.At).Milliseconds()}
		if caller.Limited {
			v.Seq = 0
		}
		out.Values = append(out.Values, v)
	}
	return out
}
