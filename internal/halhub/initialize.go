package halhub

import (
	"encoding/json"

	"github.com/openhal/gateway/internal/halhub/token"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
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
	res, err, closeNow := s.checkInitialize(raw)
	if err != nil {
		s.initFailed(id, err, closeNow)
		return
	}
	s.replyResult(id, res)
}

// checkInitialize checks the params and the token, and takes the
// session's slot (spec §2, §3). closeNow asks for the connection to be
// closed after the error: rate limited, or no slot free.
func (s *session) checkInitialize(raw json.RawMessage) (_ *openhal.InitializeResult, _ *jsonrpc.Error, closeNow bool) {
	var p initializeParams
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, errInvalidParams("bad_params", "params: %v", err), false
		}
	}
	entry, tok, err, closeNow := s.authenticate(p.Token)
	if err != nil {
		return nil, err, closeNow
	}
	version, err := checkVersion(p.ProtocolVersion)
	if err != nil {
		return nil, err, false
	}
	var ci openhal.ClientInfo
	if len(p.ClientInfo) == 0 || json.Unmarshal(p.ClientInfo, &ci) != nil || ci.Name == "" {
		return nil, errInvalidParams("bad_client_info", "params.clientInfo: want {name, version} with a name"), false
	}
	h := s.hub
	principal := openhal.Principal{Kind: entry.Kind, Name: entry.Name, Scope: entry.Scope}
	if reason := h.takeSlot(principal, func() { s.slotted = true }); reason != "" {
		return nil, h.errBusy(reason, principal), true
	}
	s.mu.Lock()
	s.phase, s.token, s.entry, s.principal = phaseInitialized, tok, entry, principal
	s.mu.Unlock()
	s.authenticated()
	return &openhal.InitializeResult{
		ProtocolVersion: negotiate(version, supportedVersions),
		HubInfo:         openhal.HubInfo{Name: "openhal", Version: h.opt.Version},
		Conformance:     h.opt.Level,
		Principal:       principal,
		Capabilities:    openhal.Capabilities{Notifications: h.opt.Level.Notifications()},
		BootID:          h.bootID,
		Stopped:         h.stopInForce(entry),
	}, nil, false
}

// limitRaiser is a transport whose message limit can be raised once the
// peer has authenticated.
type limitRaiser interface{ raiseLimit(maxBytes int) }

// authenticated moves a session that got its slot out of the budget of
// connections not yet authenticated, and lets it send messages up to
// MaxMessageBytes.
func (s *session) authenticated() {
	s.ticket.release()
	s.maxMsgBytes = s.hub.opt.Limits.MaxMessageBytes
	if r, ok := s.tr.(limitRaiser); ok {
		r.raiseLimit(s.maxMsgBytes)
	}
}

// stopInForce is the emergency stop engaged, for the hal/initialize
// answer to token e, or nil: with what its drive could not make safe,
// filtered as hal/stopped is for e. A latch that could not be read at
// start names the Hub.
func (h *Hub) stopInForce(e token.Entry) *openhal.StopInfo { return h.StopInForce(e) }

// StopInForce is the emergency stop engaged now, as a principal of entry e
// learns it at hal/initialize (its failures limited to the devices e
// sees), or nil when none is.
func (h *Hub) StopInForce(e token.Entry) *openhal.StopInfo {
	h.stop.mu.Lock()
	defer h.stop.mu.Unlock()
	if !h.stop.engaged {
		return nil
	}
	rec, o := h.stop.latch, h.stop.outcome
	_, failed := visibleOutcome(e, nil, nonNil(o.failed))
	info := &openhal.StopInfo{Principal: rec.Principal, Reason: rec.Reason, TS: rec.TS,
		Failed: failed, LeftAsIs: visibleLeft(e, nonNil(o.left))}
	if info.Principal.Kind == "" {
		info.Principal = openhal.Principal{Kind: openhal.KindHub, Name: "latched_stop"}
	}
	return info
}

// initFailed answers a failed hal/initialize; the third failure closes the
// connection, and so does one that asks to (closeNow).
func (s *session) initFailed(id json.RawMessage, e *jsonrpc.Error, closeNow bool) {
	s.mu.Lock()
	s.failures++
	n := s.failures
	s.mu.Unlock()
	s.hub.stats.errors.Add(1)
	msg := jsonrpc.AppendError(nil, id, e)
	if n >= maxInitFailures || closeNow {
		s.release()
		s.sendThenClose(msg, "hal/initialize failed")
		return
	}
	s.reply(msg)
}

// nonNil is s, or an empty slice for nil: the lists are sent as [],
// never null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
