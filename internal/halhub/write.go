package halhub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/halhub/audit"
	"github.com/openhal/gateway/internal/halhub/token"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// maxTimeoutMs bounds a client's timeoutMs: a write may wait for an
// instrument, not hold a device for ever.
const maxTimeoutMs = 60_000

// replyTimeout is the default wait for an instrument's answer (spec §6).
const replyTimeout = time.Second

// writeAttempt is one write on its way to the device: a client's
// hal/write, an approved confirmation, or a safe value the Hub drives.
type writeAttempt struct {
	f         found
	principal openhal.Principal
	creator   token.Entry // the writer's token, for a confirmation's approval
	// valid reports whether the writer may still write: its token not
	// revoked, its adapter still running under the same grant.
	valid  func() bool
	value  any
	reason string
	reply  bool
	// replyWithin is how long a serial device waits for an answer that
	// may not come (params.replyWithinMs); 0 for none.
	replyWithin time.Duration
	timeout     time.Duration
	safe        bool // the device's safe value: no stop, rule or risk refuses it
	// driven: a safe value the Hub drives on its own (stop, interlock,
	// maxOnMs, shutdown), which a device must not pace (WriteRequest.Safe).
	driven bool
	// world is an admin playing the outside world on a simulated input
	// (a button pressed or released, a door opened): the stop, which
	// drives outputs, does not refuse it, or a stop button pressed on the
	// sim board could never be released.
	world     bool
	confirmed bool // approved by an admin: the risk step is done
	// confirmation is the id of the approved request this write carries
	// out, for the audit log.
	confirmation string
	// guard follows a write away from safe of a device with an interlock
	// from its check to its answer (interlock.go); nil for others.
	guard *interlockGuard
}

// simInput is a device of a simulated board that plays the outside world:
// an admin may write it although it is an input.
type simInput interface{ SimulatedInput() bool }

// prepareWrite runs the checks of spec §6 that need no turn at the device,
// in the spec's order: (scope, checked by the dispatcher) → params (a
// reason of at most MaxReasonBytes among them) →
// device → writable → schema. It then takes the write's turn at the
// device, so that writes are applied in the order they arrived.
func prepareWrite(s *session, params json.RawMessage) (func(context.Context) (any, *jsonrpc.Error), *jsonrpc.Error) {
	var p openhal.WriteParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.Device == "" {
		return nil, errMissing("device")
	}
	if len(p.Value) == 0 {
		return nil, errMissing("value")
	}
	if err := checkReason(p.Reason); err != nil {
		return nil, err
	}
	if p.TimeoutMs != nil && (*p.TimeoutMs <= 0 || *p.TimeoutMs > maxTimeoutMs) {
		return nil, errParam("out_of_range", "timeoutMs", "params.timeoutMs must be between 1 and %d", maxTimeoutMs)
	}
	if p.ReplyWithinMs != nil && (*p.ReplyWithinMs <= 0 || *p.ReplyWithinMs > maxReplyWithinMs) {
		return nil, errParam("out_of_range", "replyWithinMs", "params.replyWithinMs must be between 1 and %d", maxReplyWithinMs)
	}
	f, err := s.lookup(p.Device)
	if err != nil {
		return nil, err
	}
	principal, entry := s.who()
	if err := s.hub.writable(f, principal); err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(p.Value, &v); err != nil {
		return nil, undecodableValue(f.id, err)
	}
	if err := f.desc.Schema.Validate(v); err != nil {
		return nil, valueError(f.id, err)
	}
	if err := checkDeviceValue(f, v); err != nil {
		return nil, err
	}
	if p.Reply && f.desc.Kind != device.KindSerial {
		return nil, errInvalidParams("reply_unsupported", "params.reply is for serial devices; %s is %s", f.id, f.desc.Kind)
	}
	w := &writeAttempt{
		f: f, principal: principal, creator: entry, valid: s.stillValid, value: v, reason: p.Reason, reply: p.Reply, replyWithin: replyWithin(p),
		timeout: s.hub.writeTimeout(p, f.dev), safe: f.desc.Safe != nil && device.Equal(v, f.desc.Safe), world: !f.desc.Access.CanWrite(),
	}
	t := s.hub.order.enter(f.id)
	return func(context.Context) (any, *jsonrpc.Error) {
		res, err := s.hub.write(w, t)
		if wr, ok := res.(openhal.WriteResult); ok {
			res = writeFor(entry, wr) // no Hub-wide seq for a limited token (seqview.go)
		}
		return res, err
	}, nil
}

// maxReplyWithinMs bounds params.replyWithinMs: an answer is a line,
// which an instrument sends within milliseconds or not at all.
const maxReplyWithinMs = 5000

// replyWithin is params.replyWithinMs as a duration, 0 when absent or when
// reply: true already waits for the answer.
func replyWithin(p openhal.WriteParams) time.Duration {
	if p.ReplyWithinMs == nil || p.Reply {
		return 0
	}
	return time.Duration(*p.ReplyWithinMs) * time.Millisecond
}

// writable decides NOT_SUPPORTED: the device takes writes, or it is a
// simulated input and the principal an admin playing the outside world.
func (h *Hub) writable(f found, p openhal.Principal) *jsonrpc.Error {
	_, isWriter := f.dev.(device.Writer)
	if isWriter && f.desc.Access.CanWrite() {
		return nil
	}
	if si, ok := f.dev.(simInput); ok && isWriter && h.opt.SimInputs && si.SimulatedInput() {
		if p.Scope == openhal.ScopeAdmin {
			return nil
		}
		return errForbidden("sim_input", "only an admin may play the outside world on %s", f.id)
	}
	return newError(openhal.CodeNotSupported, "read_only", "device "+f.id+" is read-only", errorData{"device": f.id})
}

// writeTimeout is the write's deadline: the client's timeoutMs, else the
// device's own (an adapter's), else the wait for an instrument's reply or
// the Hub's default.
func (h *Hub) writeTimeout(p openhal.WriteParams, dev device.Device) time.Duration {
	proxy, isProxy := dev.(device.Proxy)
	switch {
	case p.TimeoutMs != nil:
		return time.Duration(*p.TimeoutMs) * time.Millisecond
	case isProxy:
		return proxy.Timeout()
	case p.Reply:
		return replyTimeout
	}
	return h.opt.Limits.WriteTimeout
}

// undecodableValue explains a value that is valid JSON but that no device
// can hold: a number beyond a 64-bit float (1e400, an integer of 400
// digits), which is never rounded to an infinity. A number too small
// (1e-400) rounds to 0 without an error, as in any JSON parser.
func undecodableValue(id string, err error) *jsonrpc.Error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if num, ok := strings.CutPrefix(te.Value, "number "); ok {
			return newError(openhal.CodeInvalidParams, "out_of_range",
				fmt.Sprintf("value for %s: the number %s is beyond the range of a 64-bit float", id, clipNumber(num)), errorData{"device": id})
		}
	}
	return newError(openhal.CodeInvalidParams, "bad_value", "value for "+id+": "+err.Error(), errorData{"device": id})
}

func valueError(id string, err error) *jsonrpc.Error {
	reason := "bad_value"
	var ve *device.ValueError
	if errors.As(err, &ve) {
		reason = ve.Reason
	}
	return newError(openhal.CodeInvalidParams, reason, "value for "+id+": "+err.Error(), errorData{"device": id})
}

// write waits for the attempt's turn, runs the safety checks of spec §6
// in order — emergency stop, rules, risk — and applies it. A device's
// safe value skips all three. The deadline is the write's own: a client
// that goes away does not cancel a write that may already be at the
// hardware (seed 3.1.4). It answers once the write's record is on disk,
// having left the device's turn as soon as the record had its place in
// the log (writeInTurn).
func (h *Hub) write(w *writeAttempt, t *turn) (any, *jsonrpc.Error) {
	res, err, synced := h.writeInTurn(w, t)
	if synced != nil {
		if e := synced(); e != nil {
			return nil, e
		}
	}
	return res, err
}

// writeInTurn is write up to the wait for the disk, which it returns
// (synced, nil when nothing is left to wait for): the next write to the
// device may be applied while this one's record syncs, and the log syncs
// the records of many writes at once, so that audited writes to one
// device are not one sync apart. The log's order is still the writes'
// order: each record takes its place before its turn ends and before its
// value is published. A write guarded by an interlock waits in its turn.
func (h *Hub) writeInTurn(w *writeAttempt, t *turn) (_ any, _ *jsonrpc.Error, synced func() *jsonrpc.Error) {
	ctx, cancel := context.WithTimeout(context.Background(), w.timeout)
	defer cancel()
	if err := t.wait(ctx); err != nil {
		return nil, newError(openhal.CodeTimeout, "device_busy", "earlier writes to "+w.f.id+" did not finish in time", errorData{"device": w.f.id}), nil
	}
	defer t.leave()
	if !w.safe {
		if h.stop.isEngaged() && !w.world {
			return nil, newError(openhal.CodeStopped, "stopped", "the emergency stop is engaged: only safe values may be written until an admin resumes", errorData{"device": w.f.id}), nil
		}
		if w.confirmed {
			// First in the approved write's turn: a write applied to the
			// device since the request was made has marked it (supersede.go).
			if err := h.stillWanted(w); err != nil {
				return nil, err, nil
			}
		}
		// Held from before the rules are checked until after the write is
		// published; the settling, still in the device's turn, drives it
		// back if an interlock broke meanwhile (interlock.go).
		defer h.guardInterlock(w)()
		if err := h.checkRules(w); err != nil {
			h.broadcast(openhal.NotifyBlocked, w.f.id, openhal.BlockedParams{
				Device: w.f.id, Value: w.value, Principal: w.principal, Rule: ruleOf(err), Reason: err.Message, TS: h.clk.Now().UTC(),
			})
			return nil, err, nil
		}
		if !w.confirmed && w.f.desc.Risk == device.RiskHigh && !w.principal.Scope.AtLeast(openhal.ScopeControlHigh) {
			return h.requestConfirmation(w)
		}
	}
	res, err, synced := h.apply(ctx, w)
	if w.guard != nil && synced != nil {
		// A write guarded by an interlock keeps its turn until its record
		// is on disk: a break meanwhile is its own to drive back, before
		// its answer (interlock.go).
		if e := synced(); e != nil {
			res, err = nil, e
		}
		synced = nil
	}
	if err == nil {
		h.safety.accepted(w.f.id)
	}
	return res, err, synced
}

// apply hands the value to the device, records it in the audit log and
// publishes it — in that order, so that the log shows a write before
// anything it sets off (an interlock reacting to the new value). A guarded
// write is checked against its interlock again as soon as the device has
// it, before the record's sync (interlock.go).
func (h *Hub) apply(ctx context.Context, w *writeAttempt) (any, *jsonrpc.Error, func() *jsonrpc.Error) {
	res, err := h.toDevice(ctx, w)
	h.catchBreak(w)
	if err != nil {
		return nil, err, nil
	}
	return h.commitLater(w, res)
}

// auditedWrite is the wait for an applied write's record, and for the
// records of the requests it superseded (nil for none): once synced the
// answer stands; a record that could not be written replaces it with
// INTERNAL_ERROR.
func auditedWrite(recorded, superseded func() error) func() *jsonrpc.Error {
	return func() *jsonrpc.Error {
		err := recorded()
		if superseded != nil {
			if err2 := superseded(); err == nil {
				err = err2
			}
		}
		if err != nil {
			// Applied and published — the device changed — but without a
			// record the client is not told "applied".
			return errAuditFailed(err)
		}
		return nil
	}
}

// toDevice hands the value to the device. A timeout leaves the device in
// fault: the outcome is unknown.
func (h *Hub) toDevice(ctx context.Context, w *writeAttempt) (device.WriteResult, *jsonrpc.Error) {
	f := w.f
	res, err := f.dev.(device.Writer).Write(ctx, device.WriteRequest{Value: w.value, Reply: w.reply, ReplyWithin: w.replyWithin, Safe: w.driven})
	if err != nil && (errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil) {
		h.reg.SetState(f.id, device.StateFault, "write timed out: outcome unknown")
		return res, newError(openhal.CodeTimeout, "timeout", "device "+f.id+" did not answer in time; its state is unknown", errorData{"device": f.id})
	}
	h.noteOutcome(f, err)
	if err != nil {
		return res, deviceFault("write", f.id, err)
	}
	return res, nil
}

// commit records a write the device took in the audit log, then publishes
// its value (unless the device publishes its own: Keep), and builds the
// answer, once the record is on disk.
func (h *Hub) commit(w *writeAttempt, res device.WriteResult) (any, *jsonrpc.Error) {
	out, err, synced := h.commitLater(w, res)
	if e := synced(); e != nil {
		return nil, e
	}
	return out, err
}

// commitLater is commit up to the wait for the disk, which it returns:
// the record has its place in the log before the value is published.
// The requests for the device waiting for an admin are superseded once
// it is published, still in the device's turn (supersede.go). Once
// synced the answer stands; a record that could not be written replaces
// it with INTERNAL_ERROR.
func (h *Hub) commitLater(w *writeAttempt, res device.WriteResult) (any, *jsonrpc.Error, func() *jsonrpc.Error) {
	f := w.f
	recorded := h.recordLater(audit.Entry{Principal: w.principal, Action: "write", Device: f.id, Value: w.value,
		Outcome: "applied", Confirmation: w.confirmation, Reason: w.reason})
	out := openhal.WriteResult{Status: openhal.StatusApplied, Device: f.id, Value: w.value}
	if res.Keep {
		snap, _ := h.reg.Value(f.id)
		out.TS, out.Seq, out.DevSeq = snap.TS, snap.Seq, snap.DevSeq
		if out.TS.IsZero() {
			out.TS = h.clk.Now().UTC()
		}
	} else {
		snap, ok := h.reg.Publish(f.id, w.value, time.Time{})
		if !ok {
			return nil, errDeviceNotFound(f.id), auditedWrite(recorded, nil)
		}
		out.TS, out.Seq, out.DevSeq = snap.TS, snap.Seq, snap.DevSeq
	}
	synced := auditedWrite(recorded, h.supersedeOnWrite(w, out))
	if res.Reply != nil {
		out.Reply = res.Reply.Value
	}
	return out, nil, synced
}
