package halhub

import (
	"context"
	"encoding/json"
	"time"

	"github.com/openhal/gateway/internal/halhub/audit"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// auditTimeout bounds the wait for the audit log's disk. Past it the
// request is answered INTERNAL_ERROR: an answer never goes out before its
// entry is on disk (spec §10).
const auditTimeout = 10 * time.Second

// audited are the methods whose every answer is recorded (spec §10).
var audited = map[string]string{
	openhal.MethodWrite:               "write",
	openhal.MethodStop:                "stop",
	openhal.MethodResume:              "resume",
	openhal.MethodConfirmationApprove: "approve",
	openhal.MethodConfirmationReject:  "reject",
	openhal.MethodConfirmationCancel:  "cancel",
}

// record appends entries and waits until they are on disk.
func (h *Hub) record(entries ...audit.Entry) error { return h.recordLater(entries...)() }

// recordLater hands entries to the audit log, which places them after
// everything handed before, and returns the wait for their sync: a write
// leaves its device's turn in between, so that the writes behind it need
// not wait for its sync, and the log syncs theirs together.
func (h *Hub) recordLater(entries ...audit.Entry) (synced func() error) {
	if h.opt.Audit == nil || len(entries) == 0 {
		return func() error { return nil }
	}
	p, err := h.opt.Audit.Hand(entries...)
	return func() error {
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), auditTimeout)
			defer cancel()
			_, err = p.Wait(ctx)
		}
		if err != nil {
			h.log.Error("audit log append failed", "err", err, "entries", len(entries))
		}
		return err
	}
}

// auditAnswer records a client's audited request and its answer. When the
// entry cannot be written, the answer becomes INTERNAL_ERROR: what was done
// is done, but the client must not be told "applied" without a record.
func (h *Hub) auditAnswer(p openhal.Principal, method string, params json.RawMessage, res any, e *jsonrpc.Error) *jsonrpc.Error {
	action, ok := audited[method]
	if !ok {
		return e
	}
	if e == nil {
		switch res.(type) {
		case openhal.WriteResult:
			return nil // recorded by apply, before the value was published
		case openhal.StopResult, openhal.ResumeResult:
			return nil // recorded by the Hub: a stop before hal/stopped, a resume before it is acted on
		}
	}
	var req struct {
		Device string          `json:"device"`
		Value  json.RawMessage `json:"value"`
		ID     string          `json:"id"`
		Reason string          `json:"reason"`
	}
	json.Unmarshal(params, &req) // best effort: a refused request may have bad params
	entry := audit.Entry{Principal: p, Action: action, Device: req.Device, Confirmation: req.ID, Reason: req.Reason}
	if len(req.Value) > 0 {
		var v any
		if json.Unmarshal(req.Value, &v) == nil {
			entry.Value = v
		}
	}
	describeOutcome(&entry, res, e)
	if err := h.auditRefusal(p, entry, e != nil); err != nil {
		return errAuditFailed(err)
	}
	return e
}

// auditRefusal records a client's entry — refused is whether it records an
// error answer — or, past the principal's rate for its group, counts it
// into the count entry written when the principal's window ends (see
// coalescer). An entry the rate never applies to is recorded.
func (h *Hub) auditRefusal(p openhal.Principal, entry audit.Entry, refused bool) error {
	if group, ok := auditGroup(&entry, refused); ok && !h.coalesce.admit(p, group, entry) {
		return nil // counted
	}
	return h.record(entry)
}

// auditCounted counts entry into p's window of its group without
// recording it on its own: its count entry is written when the window
// ends. It is for failures that are only ever counted (spec §3: the
// rate-limited UNAUTHORIZED answers of one address, as principal
// anonymous(addr)). Once the Hub is closing, entry is recorded instead.
func (h *Hub) auditCounted(p openhal.Principal, entry audit.Entry) error {
	group, _ := auditGroup(&entry, true)
	if h.coalesce.count(p, group, entry) {
		return nil
	}
	return h.record(entry)
}

// recordCount writes a count entry when its window ends.
func (h *Hub) recordCount(e audit.Entry) {
	if err := h.record(e); err != nil {
		h.log.Error("audit count entry lost", "principal", e.Principal.Name, "count", e.Count, "err", err)
	}
}

func errAuditFailed(err error) *jsonrpc.Error {
	return errorf(openhal.CodeInternalError, "audit_failed", "the audit log could not record this request: %v", err)
}

// describeOutcome fills an entry's outcome from an answer.
func describeOutcome(entry *audit.Entry, res any, e *jsonrpc.Error) {
	if e != nil {
		entry.Outcome, entry.Rule = outcomeOf(e), ruleOf(e)
		entry.Error = &audit.ErrorInfo{Code: e.Code, Message: e.Message, Reason: reasonOf(e)}
		return
	}
	switch r := res.(type) {
	case openhal.WriteResult:
		entry.Outcome, entry.Value = "applied", r.Value
	case openhal.PendingResult:
		entry.Outcome, entry.Confirmation = "pending", r.Confirmation.ID
		entry.Device, entry.Value = r.Confirmation.Device, r.Confirmation.Value
	case openhal.StopResult:
		entry.Outcome = "stopped"
	case openhal.ResumeResult:
		entry.Outcome = "resumed"
	case openhal.Confirmation:
		entry.Outcome, entry.Device, entry.Value = r.Status, r.Device, r.Value
		if r.Error != nil {
			entry.Error = &audit.ErrorInfo{Code: r.Error.Code, Message: r.Error.Message}
		}
	default:
		entry.Outcome = "ok"
	}
}

// outcomeOf names what an error answer means for the audit.
func outcomeOf(e *jsonrpc.Error) string {
	switch e.Code {
	case openhal.CodeBlocked:
		return "blocked"
	case openhal.CodeDeviceFault, openhal.CodeTimeout, openhal.CodeInternalError:
		return "failed"
	case openhal.CodeUnauthorized:
		return "unauthorized"
	}
	return "refused"
}

func reasonOf(e *jsonrpc.Error) string {
	if d, ok := e.Data.(errorData); ok {
		r, _ := d["reason"].(string)
		return r
	}
	return ""
}

func ruleOf(e *jsonrpc.Error) string {
	if d, ok := e.Data.(errorData); ok {
		r, _ := d["rule"].(string)
		return r
	}
	return ""
}

// auditWrite records a write the Hub made on its own behalf (a safe value
// at a stop, an interlock, a maxOnMs) that did not apply; apply records
// those that did.
func (h *Hub) auditWrite(w *writeAttempt, res any, e *jsonrpc.Error) {
	if e == nil || reasonOf(e) == "audit_failed" {
		return
	}
	entry := audit.Entry{Principal: w.principal, Action: "write", Device: w.f.id, Value: w.value, Reason: w.reason}
	describeOutcome(&entry, res, e)
	h.record(entry)
}

// auditHub records one event of the Hub's own.
func (h *Hub) auditHub(p openhal.Principal, action, device string, value any, outcome, confirmation, reason string) {
	h.record(audit.Entry{Principal: p, Action: action, Device: device, Value: value, Outcome: outcome, Confirmation: confirmation, Reason: reason})
}
