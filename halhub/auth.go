package halhub

import (
	"encoding/json"
	"sync"
	"time"

	"gateway/halhub/audit"
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
		// Counted, not recorded one by one: a flood must not flood the
		// audit log. The count is recorded when the address is let in
		// again (spec §10).
		h.stats.unauthorized.Add(1)
		return token.Entry{}, "", errorf(openhal.CodeUnauthorized, "rate_limited", "too many failed attempts from %s; try again later", addr)
	}
	h.recordRateLimited(addr)
	fail := func(reason, msg string) (token.Entry, string, *jsonrpc.Error) {
		h.auth.fail(addr)
		h.stats.unauthorized.Add(1)
		e := errorf(openhal.CodeUnauthorized, reason, "%s", msg)
		if err := h.record(audit.Entry{Principal: anonymous(addr), Action: "initialize", Outcome: "unauthorized", Reason: reason}); err != nil {
			return token.Entry{}, "", errAuditFailed(err)
		}
		return token.Entry{}, "", e
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

// anonymous is the principal of a peer that has not authenticated.
func anonymous(addr string) openhal.Principal {
	return openhal.Principal{Kind: "anonymous", Name: addr}
}

// recordRateLimited records how many answers addr got while it was rate
// limited, once it is let in again.
func (h *Hub) recordRateLimited(addr string) {
	if n := h.auth.takeLimited(addr); n > 0 {
		h.record(audit.Entry{Principal: anonymous(addr), Action: "initialize", Outcome: "unauthorized", Reason: "rate_limited", Count: n})
	}
}

// authLimiter counts UNAUTHORIZED answers per remote address over a
// sliding window (spec §3: at most 5 a minute per address).
type authLimiter struct {
	max    int
	window time.Duration
	now    func() time.Time

	mu       sync.Mutex
	fails    map[string][]time.Time
	limitedN map[string]int // rate-limited answers not yet recorded
}

func newAuthLimiter(max int, window time.Duration, now func() time.Time) *authLimiter {
	return &authLimiter{max: max, window: window, now: now, fails: map[string][]time.Time{}, limitedN: map[string]int{}}
}

// limited reports whether addr has used up its failures in the window,
// and counts the answer if so.
func (l *authLimiter) limited(addr string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.recent(addr)) >= l.max {
		l.limitedN[addr]++
		return true
	}
	return false
}

// takeLimited returns and forgets addr's count of rate-limited answers.
func (l *authLimiter) takeLimited(addr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.limitedN[addr]
	delete(l.limitedN, addr)
	return n
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
