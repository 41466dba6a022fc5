package halhub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// method is how the Hub serves one request method.
type method struct {
	scope openhal.Scope // the least scope that may call it (spec §4)
	// serve answers a request. It runs on a goroutine of its own, so that
	// a slow device does not hold up the connection; ctx ends when the
	// connection does.
	serve func(s *session, ctx context.Context, params json.RawMessage) (any, *jsonrpc.Error)
	// prepare, when set, runs on the connection's reader before serve, in
	// the order requests arrive; it may answer at once (an error) or return
	// the serve function to run. hal/write uses it to keep writes to a
	// device in the order they were received.
	prepare func(s *session, params json.RawMessage) (serve func(ctx context.Context) (any, *jsonrpc.Error), err *jsonrpc.Error)
	// quick, when set, answers on the connection's reader a request that
	// needs no wait (no device to ask, no disk, no other connection's
	// turn), so that the commonest requests cost no goroutine and no
	// hand-off to one; waits reports that this one needs serve after all.
	// Only for methods that are not audited: the audit waits for the disk.
	quick func(s *session, params json.RawMessage) (res any, err *jsonrpc.Error, waits bool)
	// extension marks the gateway's own methods (Options.Extensions),
	// which no conformance level names: every level serves them.
	extension bool
}

// methodNames maps each method's name to itself, for the decoder
// (jsonrpc.DecodeHALNamed): a request names its method without a string
// of its own. It is only read once made.
func methodNames(ms map[string]method) map[string]string {
	names := map[string]string{openhal.MethodInitialize: openhal.MethodInitialize, openhal.NotifyInitialized: openhal.NotifyInitialized}
	for name := range ms {
		names[name] = name
	}
	return names
}

// methods are the requests this Hub serves after hal/initialize.
func methods() map[string]method {
	return map[string]method{
		openhal.MethodPing:        {scope: openhal.ScopeRead, serve: servePing, quick: quickPing},
		openhal.MethodDevicesList: {scope: openhal.ScopeRead, serve: serveDevicesList},
		openhal.MethodDevicesGet:  {scope: openhal.ScopeRead, serve: serveDevicesGet},
		openhal.MethodRead:        {scope: openhal.ScopeRead, serve: serveRead, quick: quickRead},
		openhal.MethodWrite:       {scope: openhal.ScopeControlLow, prepare: prepareWrite},
		openhal.MethodStop:        {scope: openhal.ScopeControlLow, serve: serveStop},
		openhal.MethodResume:      {scope: openhal.ScopeAdmin, serve: serveResume},

		openhal.MethodConfirmationsList:   {scope: openhal.ScopeRead, serve: serveConfirmationsList},
		openhal.MethodConfirmationApprove: {scope: openhal.ScopeAdmin, serve: serveConfirmationApprove},
		openhal.MethodConfirmationReject:  {scope: openhal.ScopeAdmin, serve: serveConfirmationReject},
		openhal.MethodConfirmationCancel:  {scope: openhal.ScopeControlLow, serve: serveConfirmationCancel},
		openhal.MethodAuditList:           {scope: openhal.ScopeAdmin, serve: serveAuditList},
	}
}

// handle takes one message from the client.
func (s *session) handle(raw []byte) {
	// Decoded in place: the id and params point into raw, which the next
	// read overwrites. handleRequest takes a copy (Owned) of every request
	// it does not answer before returning.
	m, perr := jsonrpc.DecodeHALView(raw, s.hub.methodNames)
	if perr != nil {
		s.hub.stats.errors.Add(1)
		s.notify(jsonrpc.AppendError(nil, m.ID, perr)) // bounded like a notification
		return
	}
	switch {
	case m.IsNotification():
		s.handleNotification(m.Method)
	case m.IsRequest():
		cost := requestCost(raw)
		if e := s.acquire(m.Method, cost); e != nil {
			s.hub.stats.errors.Add(1)
			s.refuseBusy(m, e)
			return
		}
		s.requests.Add(1)
		if s.hub.closing.Load() {
			busy := errorf(openhal.CodeBusy, "shutting_down", "the gateway is shutting down")
			go s.answer(m.Owned(), cost, func() (any, *jsonrpc.Error) { return nil, busy })
			return
		}
		s.handleRequest(m, cost)
	}
	// A response from a client answers nothing: the Hub sends no requests.
}

// refuseBusy answers a request past the limits of requests in flight. It
// is not in flight itself, so its answer queues like a notification
// (bounded by the queue, not by the limit it broke). An audited method's
// refusal is recorded first, as every answer to one is (spec §10) — past
// the principal's rate only counted, so that a flood of them costs the
// reader no wait for the disk.
func (s *session) refuseBusy(m jsonrpc.Message, e *jsonrpc.Error) {
	if _, ok := audited[m.Method]; ok && !s.phaseIs(phaseNew) {
		p, _ := s.who()
		e = s.hub.auditAnswer(p, m.Method, m.Params, nil, e)
	}
	s.notify(jsonrpc.AppendError(nil, m.ID, e))
}

func (s *session) handleNotification(name string) {
	if name != openhal.NotifyInitialized {
		return // hal/shutdown: the client closes; unknown ones are ignored
	}
	s.mu.Lock()
	if s.phase == phaseInitialized {
		s.phase = phaseReady
	}
	s.mu.Unlock()
}

// handleRequest serves one request; cost is what it holds in flight
// (requestCost), given back as its answer is queued.
func (s *session) handleRequest(m jsonrpc.Message, cost int64) {
	if m.Method == openhal.MethodInitialize {
		m = m.Owned() // once a connection: nothing to save, nothing to check
		s.initialize(m.ID, m.Params)
		s.unhold(cost)
		return
	}
	phase, p, entry := s.state()
	if phase != phaseInitialized && phase != phaseReady {
		s.replyError(m.ID, errNotInitialized())
		s.unhold(cost)
		return
	}
	meth, ok := s.hub.methods[m.Method]
	if !ok || !(meth.extension || s.hub.opt.Level.Allows(m.Method)) {
		s.replyError(m.ID, errMethodNotFound(m.Method))
		s.unhold(cost)
		return
	}
	if !p.Scope.AtLeast(meth.scope) {
		err := errForbidden("scope", "%s needs scope %s; this token has %s", m.Method, meth.scope, p.Scope)
		go s.answer(m.Owned(), cost, func() (any, *jsonrpc.Error) { return nil, err })
		return
	}
	if meth.quick != nil {
		s.quick.entry = entry
		if res, err, waits := meth.quick(s, m.Params); !waits {
			err = s.hub.auditAnswer(p, m.Method, m.Params, res, err) // records nothing: never waits
			s.unhold(cost)
			s.replyOnReader(s.encodeAnswer(s.scratch, m.ID, res, err))
			return
		}
	}
	// Everything below answers on a goroutine, after the next read has
	// overwritten the line m points into.
	m = m.Owned()
	if meth.prepare != nil {
		serve, err := meth.prepare(s, m.Params)
		go s.answer(m, cost, func() (any, *jsonrpc.Error) {
			if err != nil {
				return nil, err
			}
			return serve(s.ctx)
		})
		return
	}
	go s.answer(m, cost, func() (any, *jsonrpc.Error) { return meth.serve(s, withRequestID(s.ctx, m.ID), m.Params) })
}

// answer serves a request and replies. An audited method's answer goes
// out only once its entry is on disk. The request's cost is given back
// just before the answer is queued, where the answer's own bytes count:
// a client that sends its next request as soon as it reads the answer
// finds the room already made.
func (s *session) answer(m jsonrpc.Message, cost int64, serve func() (any, *jsonrpc.Error)) {
	id := m.ID
	res, err := serve()
	p, _ := s.who()
	err = s.hub.auditAnswer(p, m.Method, m.Params, res, err)
	s.unhold(cost)
	s.replyNow(s.encodeAnswer(nil, id, res, err))
}

// encodeAnswer appends the answer of a request to dst: its error, else
// its result.
func (s *session) encodeAnswer(dst, id []byte, res any, err *jsonrpc.Error) []byte {
	if err != nil {
		return s.encodeError(dst, id, err)
	}
	return s.encodeResult(dst, id, res)
}

// decodeParams decodes params strictly: a param the method does not know
// is an error, and names must match exactly (encoding/json alone would
// take "timeoutMS" for timeoutMs, or ignore "timeout"): a misspelt param
// must never be ignored silently on a gateway that moves things. Missing
// params mean {}.
func decodeParams(params json.RawMessage, v any) *jsonrpc.Error {
	if len(params) == 0 {
		return nil
	}
	known := paramNames(reflect.TypeOf(v).Elem())
	var unknown string
	jsonrpc.EachMember(params, func(k, _ []byte) bool {
		if !known[string(k)] {
			unknown = string(k)
			return false
		}
		return true
	})
	if unknown != "" {
		return newError(openhal.CodeInvalidParams, "unknown_param", fmt.Sprintf("params: unknown param %q", unknown), errorData{"param": unknown})
	}
	if err := json.Unmarshal(params, v); err != nil {
		return paramsError(reflect.TypeOf(v).Elem(), err)
	}
	return nil
}

// paramNames returns the JSON names of a params struct's fields, cached
// per type.
func paramNames(t reflect.Type) map[string]bool {
	if m, ok := paramNameCache.Load(t); ok {
		return m.(map[string]bool)
	}
	m := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			m[name] = true
		}
	}
	paramNameCache.Store(t, m)
	return m
}

var paramNameCache sync.Map // reflect.Type → map[string]bool; a pure cache

// paramsError explains a param of the wrong type, naming the param, what
// it must be and what it was. An integer literal too large for its param
// (a 400-digit maxAgeMs, a negative since) is out_of_range, not a wrong
// type: the client sent an integer.
func paramsError(params reflect.Type, err error) *jsonrpc.Error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return errInvalidParams("bad_params", "params: %v", err)
	}
	want, got := te.Type, describeJSON(te.Value)
	if f, ok := paramField(params, te.Field); ok && f.Kind() == reflect.Slice && f.Elem() == te.Type {
		want, got = f, got+" in the array" // te is about an element
	}
	if num, ok := strings.CutPrefix(te.Value, "number "); ok && isIntegerKind(te.Type) && isIntegerLiteral(num) {
		return errParam("out_of_range", te.Field, "params.%s: %s is out of range for %s", te.Field, clipNumber(num), jsonType(te.Type))
	}
	return errParam("wrong_type", te.Field, "params.%s: want %s, got %s", te.Field, jsonType(want), got)
}

// paramField returns the type of the params struct's field named name in
// JSON.
func paramField(t reflect.Type, name string) (reflect.Type, bool) {
	for i := 0; i < t.NumField(); i++ {
		if n, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); n == name {
			return t.Field(i).Type, true
		}
	}
	return nil, false
}

// describeJSON names what encoding/json found ("string", "number 1.5") as
// a client reads it ("a string", "the number 1.5").
func describeJSON(v string) string {
	if num, ok := strings.CutPrefix(v, "number "); ok {
		return "the number " + clipNumber(num)
	}
	switch v {
	case "bool":
		return "a boolean"
	case "array", "object":
		return "an " + v
	}
	return "a " + v
}

// clipNumber shortens a number quoted in a message: a client that sent
// 400 digits does not need them back.
func clipNumber(s string) string {
	if len(s) > 24 {
		return s[:20] + fmt.Sprintf("... (%d characters)", len(s))
	}
	return s
}

func isIntegerKind(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint, reflect.Uint64, reflect.Uint32:
		return true
	}
	return false
}

// isIntegerLiteral reports whether a JSON number has neither a fraction
// nor an exponent.
func isIntegerLiteral(s string) bool { return !strings.ContainsAny(s, ".eE") }

// jsonType names a Go type as a client sees it.
func jsonType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Uint, reflect.Uint64, reflect.Uint32:
		return "a non-negative integer"
	case reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.String {
			return "an array of strings"
		}
		return "an array"
	case reflect.Pointer:
		return jsonType(t.Elem())
	}
	return "an object"
}
