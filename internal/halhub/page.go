package halhub

import (
	"context"
	"encoding/json"

	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// Lists that can outgrow one message (hal/confirmations/list,
// hal/audit/list) answer in pages, each of which fits in one message of
// MaxMessageBytes, so that a client with the same limit reads it (spec
// §2, §8); the client asks for the next page after the last item it got.

// pageBuilders is how many pages, each up to a whole message, are built
// at once, Hub-wide: building one takes a few times its size for a
// moment, and a client asking for hundreds on many connections must not
// have them all built together. Building is CPU and disk work: two keep
// both cores of a Pi busy.
const pageBuilders = 2

// buildPage runs build once this connection builds no other page and one
// of the Hub's page builders is free, so that a client's pages wait
// behind its own and a connection waits behind at most one page of each
// other connection. It gives up when ctx ends first (the connection
// closed: nobody would read the page).
func (s *session) buildPage(ctx context.Context, build func() (any, *jsonrpc.Error)) (any, *jsonrpc.Error) {
	gone := errorf(openhal.CodeInternalError, "cancelled", "the connection ended")
	select {
	case s.pageTurn <- struct{}{}:
	case <-ctx.Done():
		return nil, gone
	}
	defer func() { <-s.pageTurn }()
	select {
	case s.hub.pages <- struct{}{}:
	case <-ctx.Done():
		return nil, gone
	}
	defer func() { <-s.hub.pages }()
	if ctx.Err() != nil {
		return nil, gone
	}
	return build()
}

// pageRoom is how many bytes a page's items may take in the answer to the
// request served under ctx: MaxMessageBytes less the answer without them
// — the JSON-RPC envelope with the request's own id, envelope (the result
// with an empty list and its other members at their longest), and the
// line's newline.
func (s *session) pageRoom(ctx context.Context, envelope string) int {
	id := requestID(ctx)
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	around := len(`{"jsonrpc":"2.0","id":,"result":}`) + len(id) + len(envelope) + 1
	return s.hub.opt.Limits.MaxMessageBytes - around
}

// requestIDKey carries a request's id to its serve function, for an
// answer that must size itself (pageRoom).
type requestIDKey struct{}

func withRequestID(ctx context.Context, id json.RawMessage) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// requestID is the id withRequestID set, or nil (an in-process call).
func requestID(ctx context.Context) json.RawMessage {
	id, _ := ctx.Value(requestIDKey{}).(json.RawMessage)
	return id
}
