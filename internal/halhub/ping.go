package halhub

import (
	"context"
	"encoding/json"

	"github.com/openhal/gateway/jsonrpc"
)

// servePing answers hal/ping (spec §6): {}.
func servePing(s *session, _ context.Context, params json.RawMessage) (any, *jsonrpc.Error) {
	var p struct{}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

// quickPing answers hal/ping on the reader: it never waits.
func quickPing(s *session, params json.RawMessage) (any, *jsonrpc.Error, bool) {
	res, err := servePing(s, context.Background(), params)
	return res, err, false
}
