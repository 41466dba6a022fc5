package halhub

import (
	"encoding/json"

	"github.com/openhal/gateway/internal/halhub/audit"
	"github.com/openhal/gateway/internal/halhub/token"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// authenticate finds the token's entry. The token comes from the
// transport (a WebSocket's bearer header) or from params.token; both given
// and different is UNAUTHORIZED. The token is always looked up first (one
// hash): a valid token is admitted whatever its peer did before, so that
// no flood of bad tokens keeps an operator out (spec §3). A failure is
// counted against the peer; past the limit it is answered rate_limited,
// counted rather than recorded, and closeNow asks for the connection to be
// closed.
func (s *session) authenticate(rawToken json.RawMessage) (_ token.Entry, tok string, _ *jsonrpc.Error, closeNow bool) {
	h := s.hub
	tok, reason, msg := s.presentedToken(rawToken)
	if reason == "" {
		if e, ok := h.tokens.Load().Lookup(tok); ok {
			return e, tok, nil, false
		}
		reason, msg = "token_unknown", "unknown or revoked token"
	}
	peer := s.tr.remote()
	h.stats.unauthorized.Add(1)
	if h.auth.fail(peer) {
		h.stats.rateLimited.Add(1)
		// Counted, not recorded one by one: the count entry is written
		// once a window while the flood lasts, and after it.
		h.auditCounted(anonymous(peer), audit.Entry{Action: "initialize", Outcome: "unauthorized",
			Error: &audit.ErrorInfo{Code: openhal.CodeUnauthorized, Reason: "rate_limited"}})
		return token.Entry{}, "", errorf(openhal.CodeUnauthorized, "rate_limited",
			"too many failed attempts from %s; this connection is closed", peer), true
	}
	if err := h.record(audit.Entry{Principal: anonymous(peer), Action: "initialize", Outcome: "unauthorized", Reason: reason}); err != nil {
		return token.Entry{}, "", errAuditFailed(err), false
	}
	return token.Entry{}, "", errorf(openhal.CodeUnauthorized, reason, "%s", msg), false
}

// presentedToken returns the token the client presented, or the reason
// and message of an UNAUTHORIZED answer when it presented none that can
// be looked up.
func (s *session) presentedToken(rawToken json.RawMessage) (tok, reason, msg string) {
	var param string
	if len(rawToken) > 0 && string(rawToken) != "null" {
		if err := json.Unmarshal(rawToken, &param); err != nil {
			return "", "token_invalid", "params.token must be a string"
		}
	}
	switch {
	case param != "" && s.bearer != "" && param != s.bearer:
		return "", "token_conflict", "the bearer token and params.token differ"
	case param != "":
		return param, "", ""
	case s.bearer != "":
		return s.bearer, "", ""
	}
	return "", "token_missing", "a token is required (Authorization: Bearer, or params.token)"
}

// anonymous is the principal of a peer that has not authenticated.
func anonymous(peer string) openhal.Principal {
	return openhal.Principal{Kind: "anonymous", Name: peer}
}
