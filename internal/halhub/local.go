package halhub

import (
	"context"
	"encoding/json"
	"sync/atomic"

	"github.com/openhal/gateway/internal/halhub/token"
	"github.com/openhal/gateway/jsonrpc"
)

// Local is a principal inside the gateway — a supervised adapter — that
// calls the Hub's methods without a connection, under a token entry that
// stands for its grant (scope level and device patterns). Every check
// applies as for a client over a socket: the method's scope, the devices
// the entry sees, the rules, the emergency stop, confirmations and the
// audit log. It receives no notifications (see Subscribe).
type Local struct {
	s      *session
	closed atomic.Bool
}

// Local returns a principal for entry. Close it when the principal goes
// away: its pending confirmations then fail as a revoked token's do.
func (h *Hub) Local(entry token.Entry) *Local {
	l := &Local{}
	s := newSession(h, localTransport{name: entry.Kind + ":" + entry.Name}, "")
	s.phase, s.entry, s.principal = phaseReady, entry, entry.Principal()
	s.local = l
	l.s = s
	return l
}

// Call serves one request as the principal and returns its result or
// error, with the same answer a client would get. ctx bounds a read; a
// write runs to its own deadline, as a client's does.
func (l *Local) Call(ctx context.Context, method string, params json.RawMessage) (any, *jsonrpc.Error) {
	s, h := l.s, l.s.hub
	if l.closed.Load() {
		return nil, errorf(jsonrpc.CodeInternalError, "closed", "this principal has gone away")
	}
	meth, ok := h.methods[method]
	if !ok || !h.opt.Level.Allows(method) {
		return nil, errMethodNotFound(method)
	}
	p := s.principal
	if !p.Scope.AtLeast(meth.scope) {
		return nil, errForbidden("scope", "%s needs scope %s; this principal has %s", method, meth.scope, p.Scope)
	}
	var res any
	var err *jsonrpc.Error
	if meth.prepare != nil {
		var serve func(context.Context) (any, *jsonrpc.Error)
		if serve, err = meth.prepare(s, params); err == nil {
			res, err = serve(ctx)
		}
	} else {
		res, err = meth.serve(s, ctx, params)
	}
	return res, h.auditAnswer(p, method, params, res, err)
}

// Close ends the principal: its calls in flight see their context
// cancelled, new calls are refused, its pending confirmations can no
// longer be approved.
func (l *Local) Close() {
	l.closed.Store(true)
	l.s.cancel()
}

// stillValid reports whether the session's principal may still write: a
// client's token not revoked, a local principal not closed.
func (s *session) stillValid() bool {
	if s.local != nil {
		return !s.local.closed.Load()
	}
	tok, _ := s.tokenInUse()
	_, ok := s.hub.tokens.Load().Lookup(tok)
	return ok
}

// localTransport is the connection a Local does not have.
type localTransport struct{ name string }

func (localTransport) read(ctx context.Context) ([]byte, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}
func (localTransport) write(context.Context, [][]byte) error { return nil }
func (localTransport) close() error                          { return nil }
func (t localTransport) remote() string                      { return t.name }
func (t localTransport) shutdown() error                     { return t.close() }
