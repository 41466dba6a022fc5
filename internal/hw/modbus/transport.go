package modbus

import (
	"context"
	"errors"
	"fmt"
)

// Transport carries one request at a time to a unit and brings its
// reply back. Callers serialise their requests (a Transport takes a lock
// for each, so a second waits for the first); Close may be called at any
// time, and ends a request in flight with a link error.
type Transport interface {
	// Do sends the request PDU (function code first) to unit and returns
	// the reply PDU (function code first, the request's function). An
	// exception reply is returned as an *Exception error. Do returns
	// when ctx is done: an error wrapping ErrTimeout when its deadline
	// passed, ctx.Err() when it was cancelled (within ~20 ms either way).
	Do(ctx context.Context, unit byte, pdu []byte) ([]byte, error)
	// Close closes the port or connection under the transport.
	Close() error
}

// doneErr is the error of a request whose ctx is done: ErrTimeout
// wrapped with what was seen when its deadline passed, ctx.Err() when
// it was cancelled. A deadline passed by the clock before ctx's own
// timer fired (ctx.Err() still nil) is a timeout too.
func doneErr(ctx context.Context, seen string) error {
	if err := ctx.Err(); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%w: %s", ErrTimeout, seen)
}
