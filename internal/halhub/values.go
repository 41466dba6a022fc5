package halhub

import (
	"context"
	"encoding/json"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// MethodValues gives the last known value of every readable device the
// caller sees, from the Hub's registry, with its age. It reads no device
// and starts no tool: what `gateway devices` shows. hal/read is what
// measures. Every Hub serves it, an extension under ExtensionPrefix
// (openhal-0.1 leaves names outside hal/ to the implementation).
const MethodValues = ExtensionPrefix + "values"

// LastValue is one device's last known value. Seq is left out for a
// token limited to some devices, as hal/read leaves it out.
type LastValue struct {
	Device string    `json:"device"`
	Value  any       `json:"value"`
	TS     time.Time `json:"ts"`
	Seq    uint64    `json:"seq,omitempty"`
	// AgeMs is how long ago the Hub took the value, by its monotonic
	// clock (a wall clock that jumps does not age it).
	AgeMs int64 `json:"ageMs"`
}

// ValuesResult is MethodValues' result.
type ValuesResult struct {
	Values []LastValue `json:"values"`
}

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

func lastValues(reg *device.Registry, caller Caller) ValuesResult {
	out := ValuesResult{Values: []LastValue{}}
	now := reg.Now()
	for _, d := range reg.List() {
		if !caller.Sees(d.ID) || !d.Access.CanRead() {
			continue
		}
		snap, ok := reg.Value(d.ID)
		if !ok {
			continue
		}
		v := LastValue{Device: d.ID, Value: snap.Value, TS: snap.TS, Seq: snap.Seq, AgeMs: now.Sub(snap.At).Milliseconds()}
		if caller.Limited {
			v.Seq = 0
		}
		out.Values = append(out.Values, v)
	}
	return out
}
