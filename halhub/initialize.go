package halhub

import (
	"encoding/json"

	"gateway/jsonrpc"
	"gateway/openhal"
)

// supportedVersions are the protocol versions this Hub speaks, newest
// first.
var supportedVersions = []string{openhal.Version}

// maxInitFailures is how many failed hal/initialize a connection may send
// before the Hub closes it (spec §3).
const maxInitFailures = 3

// initializeParams keeps each param raw, so that the token is checked
// before anything else is looked at (spec §3: an unauthenticated peer
// learns nothing else). Unknown params are ignored here, unlike in other
// methods: a newer client may offer more in its first message.
type initializeParams struct {
	ProtocolVersion json.RawMessage `json:"protocolVersion"`
	ClientInfo      json.RawMessage `json:"clientInfo"`
	Token           json.RawMessage `json:"token"`
}

// initialize answers hal/initialize on the reader's goroutine, so that
// every later request sees its outcome.
func (s *session) initialize(id json.RawMessage, raw json.RawMessage) {
	s.mu.Lock()
	phase := s.phase
	s.mu.Unlock()
	if phase != phaseNew {
		s.replyError(id, errorf(jsonrpc.CodeInvalidRequest, "already_initialized", "hal/initialize was already answered on this connection"))
		return
	}
	res, err := s.checkInitialize(raw)
	if err != nil {
		s.initFailed(id, err)
		return
	}
	s.replyResult(id, res)
}

func (s *session) checkInitialize(raw json.RawMessage) (*openhal.InitializeResult, *jsonrpc.Error) {
	var p initializeParams
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, errInvalidParams("bad_params", "params: %v", err)
		}
	}
	entry, tok, err := s.authenticate(p.Token)
	if err != nil {
		return nil, err
	}
	version, err := checkVersion(p.ProtocolVersion)
	if err != nil {
		return nil, err
	}
	var ci openhal.ClientInfo
	if len(p.ClientInfo) == 0 || json.Unmarshal(p.ClientInfo, &ci) != nil || ci.Name == "" {
		return nil, errInvalidParams("bad_client_info", "params.clientInfo: want {name, version} with a name")
	}
	if s.reserveOnly && entry.Scope != openhal.ScopeAdmin {
		s.hub.stats.refused.Add(1)
		return nil, errForbidden("connection_limit", "all %d connections are taken; the rest are kept for admin tokens", s.hub.opt.Limits.MaxConnections)
	}
	principal := openhal.Principal{Kind: entry.Kind, Name: entry.Name, Scope: entry.Scope}
	s.mu.Lock()
	s.phase, s.token, s.entry, s.principal = phaseInitialized, tok, entry, principal
	s.mu.Unlock()
	h := s.hub
	return &openhal.InitializeResult{
		ProtocolVersion: negotiate(version, supportedVersions),
		HubInfo:         openhal.HubInfo{Name: "openhal", Version: h.opt.Version},
		Conformance:     h.opt.Level,
		Principal:       principal,
		Capabilities:    openhal.Capabilities{Notifications: h.opt.Level.Notifications()},
		BootID:          h.bootID,
	}, nil
}

// initFailed answers a failed hal/initialize; the third failure closes the
// connection, and a connection refused for the admin reserve closes at once.
func (s *session) initFailed(id json.RawMessage, e *jsonrpc.Error) {
	s.mu.Lock()
	s.failures++
	n := s.failures
	s.mu.Unlock()
	s.hub.stats.errors.Add(1)
	msg := jsonrpc.AppendError(nil, id, e)
	if n >= maxInitFailures || s.reserveOnly {
		s.release()
		s.sendThenClose(msg, "hal/initialize failed")
		return
	}
	s.reply(msg)
}
