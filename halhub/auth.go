package halhub

import (
	"encoding/json"
	"sync"
	"time"

	"gateway/halhub/token"
	"gateway/jsonrpc"
	"gateway/openhal"
)

// authenticate finds the token's entry. The token comes from the
// transport (a WebSocket's bearer header) or from params.token; both given
// and different is UNAUTHORIZED. Failures are counted per remote address,
// and past the limit answered at once without a lookup.
func (s *session) authenticate(rawToken json.RawMessage) (token.Entry, string, *jsonrpc.Error) {
	h := s.hub
	addr := s.tr.remote()
	if h.auth.limited(addr) {
		h.stats.unauthorized.Add(1)
		return token.Entry{}, "", errorf(openhal.CodeUnauthorized, "rate_limited", "too many failed attempts from %s; try again later", addr)
	}
	fail := func(reason, msg string) (token.Entry, string, *jsonrpc.Error) {
		h.auth.fail(addr)
		h.stats.unauthorized.Add(1)
		return token.Entry{}, "", errorf(openhal.CodeUnauthorized, reason, "%s", msg)
	}
	var param string
	if len(rawToken) > 0 && string(rawToken) != "null" {
		if err := json.Unmarshal(rawToken, &param); err != nil {
			return fail("token_invalid", "params.token must be a string")
		}
	}
	tok := param
	switch {
	case param != "" && s.bearer != "" && param != s.bearer:
		return fail("token_conflict", "the bearer token and params.token differ")
	case tok == "":
		tok = s.bearer
	}
	if tok == "" {
		return fail("token_missing", "a token is required (Authorization: Bearer, or params.token)")
	}
	e, ok := h.tokens.Load().Lookup(tok)
	if !ok {
		return fail("token_unknown", "unknown or revoked token")
	}
	return e, tok, nil
}

// authLimiter counts UNAUTHORIZED answers per remote address over a
// sliding window (spec §3: at most 5 a minute per address).
type authLimiter struct {
	max    int
	window time.Duration
	now    func() time.Time

	mu    sync.Mutex
	fails map[string][]time.Time
}

func newAuthLimiter(max int, window time.Duration, now func() time.Time) *authLimiter {
	return &authLimiter{max: max, window: window, now: now, fails: map[string][]time.Time{}}
}

// limited reports whether addr has used up its failures in the window.
func (l *authLimiter) limited(addr string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.recent(addr)) >= l.max
}

func (l *authLimiter) fail(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fails[addr] = append(l.recent(addr), l.now())
}

// recent drops the failures older than the window and returns the rest.
// An address with none left is forgotten, so the map stays small.
func (l *authLimiter) recent(addr string) []time.Time {
	ts := l.fails[addr]
	cut := l.now().Add(-l.window)
	i := 0
	for i < len(ts) && !ts[i].After(cut) {
		i++
	}
	ts = ts[i:]
	if len(ts) == 0 {
		delete(l.fails, addr)
		return nil
	}
	l.fails[addr] = ts
	return ts
}
