package halhub

import (
	"fmt"

	"github.com/openhal/gateway/internal/halhub/audit"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// Superseded requests (spec §7). A request never outlives its reason: a
// write applied to its device after it was made — by its creator, another
// client, a rule driving the device safe, the approval of another request
// — supersedes it, and so does a newer request of its creator for the
// same device. An approver can then never apply a value its creator has
// since reversed.
//
// Requests are made in their device's turn (writeOrder), and every write
// is applied in its device's turn, so "after it was made" is the turns'
// order. An applied write marks every request of its device not yet
// resolved (pendingWrite.superseded), taken by another resolution or not,
// before its turn ends (commitLater), and resolves those not taken. An
// approval re-runs the write in a turn of its own, behind every write
// that arrived before it, and looks at the mark first thing in that turn
// (writeInTurn): whatever the interleaving, a write applied before the
// approval's turn has marked the request by then, and one applied after
// it comes after the approved value, as it should.
//
// The emergency stop does not supersede: it rejects every request first
// (rejectAll) and refuses the approvals already waiting for their turn.

// supersedeLocked marks the requests for dev not yet resolved that which
// chooses, and not already marked, as superseded by by, and takes out of
// pending those no other resolution holds, for the caller to resolve
// (resolveSuperseded). The caller holds mu and dev's turn.
func (cs *confirmations) supersedeLocked(dev string, by openhal.SupersededBy, which func(*pendingWrite) bool) []*pendingWrite {
	if cs.openOn[dev] == 0 {
		return nil
	}
	var out []*pendingWrite
	for _, pw := range cs.byID {
		if pw.c.Device != dev || pw.c.Status != openhal.ConfirmPending || pw.superseded != nil || !which(pw) {
			continue
		}
		pw.superseded = &by
		if !pw.taken {
			pw.timer.Stop()
			pw.taken, pw.supersededTaken = true, true
			out = append(out, pw)
		}
	}
	return out
}

// replaceableLocked counts p's requests for dev waiting for an admin,
// which p's new request for dev replaces. The caller holds mu.
func (cs *confirmations) replaceableLocked(p openhal.Principal, dev string) int {
	if cs.openOn[dev] == 0 {
		return 0
	}
	n := 0
	for _, pw := range cs.byID {
		if pw.c.Device == dev && !pw.taken && pw.superseded == nil && principalKey(pw.c.RequestedBy) == principalKey(p) {
			n++
		}
	}
	return n
}

// replacedBy is what supersedes a creator's older request when it asks
// again: the new request, which applied nothing.
func replacedBy(c openhal.Confirmation) openhal.SupersededBy {
	return openhal.SupersededBy{Principal: c.RequestedBy, Value: c.Value, TS: c.CreatedAt, Request: c.ID}
}

// supersedeOnWrite supersedes the requests for w's device not yet
// resolved, w having been applied with result out; the request w carries
// out (an approval) is not its own supersessor. It returns the wait for
// their audit entries, nil when the device has none (the common case,
// which costs a look under mu and nothing else). Called in the device's
// turn.
func (h *Hub) supersedeOnWrite(w *writeAttempt, out openhal.WriteResult) (synced func() error) {
	cs := h.confirms
	cs.mu.Lock()
	if cs.openOn[w.f.id] == 0 {
		cs.mu.Unlock()
		return nil
	}
	by := openhal.SupersededBy{
		Principal: w.principal, Value: w.value, TS: out.TS, Seq: out.Seq, DevSeq: out.DevSeq, Confirmation: w.confirmation,
	}
	taken := cs.supersedeLocked(w.f.id, by, func(pw *pendingWrite) bool { return pw.c.ID != w.confirmation })
	cs.mu.Unlock()
	return h.resolveSuperseded(taken)
}

// resolveSuperseded resolves taken requests as superseded, tells every
// client, and hands their audit entries to the log; it returns the wait
// for those.
func (h *Hub) resolveSuperseded(taken []*pendingWrite) (synced func() error) {
	if len(taken) == 0 {
		return func() error { return nil }
	}
	entries := make([]audit.Entry, 0, len(taken))
	for _, pw := range taken {
		h.confirms.mu.Lock()
		by := *pw.superseded
		h.confirms.mu.Unlock()
		c := h.resolve(pw, openhal.ConfirmSuperseded, func(c *openhal.Confirmation) { c.SupersededBy = &by })
		entries = append(entries, audit.Entry{Principal: by.Principal, Action: "supersede", Device: c.Device, Value: c.Value,
			Outcome: openhal.ConfirmSuperseded, Confirmation: c.ID, Reason: supersededWords(by)})
	}
	return h.recordLater(entries...)
}

// supersession is what superseded request id before it was resolved, or
// nil: an approval's look in its turn at the device.
func (cs *confirmations) supersession(id string) *openhal.SupersededBy {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if pw, ok := cs.byID[id]; ok {
		return pw.superseded
	}
	return nil
}

// stillWanted refuses an approved write whose request was superseded
// before the write's turn at the device: CONFIRMATION_CLOSED, nothing
// applied.
func (h *Hub) stillWanted(w *writeAttempt) *jsonrpc.Error {
	by := h.confirms.supersession(w.confirmation)
	if by == nil {
		return nil
	}
	c := openhal.Confirmation{ID: w.confirmation, Device: w.f.id, Value: w.value, Status: openhal.ConfirmSuperseded, SupersededBy: by}
	return errSuperseded(c)
}

// errSuperseded is the answer to a resolution of a superseded request.
func errSuperseded(c openhal.Confirmation) *jsonrpc.Error {
	msg := fmt.Sprintf("confirmation %s is superseded: nothing was applied", c.ID)
	if c.SupersededBy != nil {
		msg = fmt.Sprintf("confirmation %s (%s = %s) is superseded by %s; nothing was applied", c.ID, c.Device, valueText(c.Value), supersededWords(*c.SupersededBy))
	}
	d := errorData{"id": c.ID, "status": openhal.ConfirmSuperseded}
	if c.SupersededBy != nil {
		by := *c.SupersededBy
		by.Seq = 0 // one error for every token: a limited one sees no Hub-wide seq (seqview.go)
		d["supersededBy"] = by
	}
	return newError(openhal.CodeConfirmationClosed, "confirmation_closed", msg, d)
}

// supersededWords says what superseded a request: "agent bench-agent's
// write of false", or "its creator's newer request c-00000043 for true".
// The value's seq is in supersededBy: a token limited to some devices is
// told no Hub-wide seq, and one message goes to every token.
func supersededWords(by openhal.SupersededBy) string {
	who := by.Principal.Kind + " " + by.Principal.Name
	switch {
	case by.Request != "":
		return fmt.Sprintf("its creator's newer request %s for %s", by.Request, valueText(by.Value))
	case by.Confirmation != "":
		return fmt.Sprintf("%s's write of %s, approved as %s", who, valueText(by.Value), by.Confirmation)
	}
	return fmt.Sprintf("%s's write of %s", who, valueText(by.Value))
}

// withCurrent adds the device's value now to a pending request, beside
// the value it asks for.
func (h *Hub) withCurrent(c openhal.Confirmation) openhal.Confirmation {
	if c.Status != openhal.ConfirmPending {
		return c
	}
	if snap, ok := h.reg.Value(c.Device); ok {
		c.Current = &openhal.CurrentValue{Value: snap.Value, TS: snap.TS, Seq: snap.Seq, DevSeq: snap.DevSeq}
	}
	return c
}
