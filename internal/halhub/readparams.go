package halhub

import (
	"bytes"
	"encoding/json"

	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// decodeReadParams is decodeParams for hal/read, the commonest request,
// without encoding/json's reflection and allocations. Params of the
// usual shape — "device", a string without escapes, and "maxAgeMs", an
// integer, each at most once — are taken here; anything else, errors
// included, goes to decodeParams, which stays the reference: both give
// the same answer for every input (FuzzReadParams). lastID, when not
// nil, is the device id this caller decoded last: a device named again
// takes that string rather than a new one, and a new one is kept there.
func decodeReadParams(params json.RawMessage, p *openhal.ReadParams, lastID *string) *jsonrpc.Error {
	if readParamsUsual(params, p, lastID) {
		return nil
	}
	var ref openhal.ReadParams // on the heap (decodeParams takes any): only here
	err := decodeParams(params, &ref)
	*p = ref
	return err
}

// readParamsUsual decodes params into p when they have the usual shape,
// and reports whether they had it. The decoder has validated params as a
// JSON object (UTF-8 included), which the walk relies on.
func readParamsUsual(params []byte, p *openhal.ReadParams, lastID *string) bool {
	if len(params) == 0 {
		return true // missing params mean {}
	}
	var device, maxAge []byte
	usual := true
	jsonrpc.EachMember(params, func(k, v []byte) bool {
		switch {
		case string(k) == "device" && device == nil:
			device = v
		case string(k) == "maxAgeMs" && maxAge == nil:
			maxAge = v
		default:
			usual = false // unknown, repeated: decodeParams explains
		}
		return usual
	})
	if !usual || len(device) < 2 || device[0] != '"' || bytes.IndexByte(device, '\\') >= 0 {
		return usual && device == nil && maxAge == nil // {}: a missing device, which planRead names
	}
	if maxAge != nil {
		n, ok := jsonrpc.ParseInt64(maxAge)
		if !ok {
			return false
		}
		p.MaxAgeMs = &n
	}
	id := device[1 : len(device)-1]
	switch {
	case lastID == nil:
		p.Device = string(id)
	case string(id) == *lastID:
		p.Device = *lastID
	default:
		p.Device = string(id)
		*lastID = p.Device
	}
	return true
}
