package halhub

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/openhal/gateway/internal/atomicfile"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openhal/gateway/internal/clock"
	"github.com/openhal/gateway/internal/halhub/token"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// DefaultConfirmTTL is how long a Confirmation Request waits for an admin
// unless its device says otherwise (spec §7).
const DefaultConfirmTTL = 120 * time.Second

// keepResolved is how many resolved requests hal/confirmations/list still
// shows.
const keepResolved = 256

// counterFile keeps the last confirmation number, so that ids are never
// reused across restarts (spec §7).
const counterFile = "confirmations.next"

// confirmations is the queue of Confirmation Requests. Every change of
// one request — approval, rejection, cancellation, expiry, supersession —
// takes it out of pending under mu, so that they are serialised: the
// loser finds it closed.
//
// What it holds is bounded (spec §7): at most MaxPendingPerPrincipal
// unresolved requests per principal and MaxPending in all, each with a
// reason of at most MaxReasonBytes and a value of at most
// MaxConfirmValueBytes, and the keepResolved newest resolved ones.
type confirmations struct {
	mu       sync.Mutex
	next     uint64
	byID     map[string]*pendingWrite
	resolved []string // ids of resolved requests, oldest first
	// open counts the requests not yet resolved (pending, or taken and
	// being resolved), in all and per principal (principalKey).
	open   int
	openBy map[string]int
	// openOn counts the requests not yet resolved per device: a write
	// to a device without any looks no further (supersede.go).
	openOn map[string]int
}

// pendingWrite is one request and what approval needs to re-run the write
// as its creator.
type pendingWrite struct {
	c       openhal.Confirmation
	n       uint64 // the number in its id: the list's order
	attempt *writeAttempt
	creator token.Entry
	timer   clock.Timer
	taken   bool // being resolved: out of pending, whatever Status says
	// superseded is set, under mu, when a write is applied to the device
	// (or its creator asks again) before the request is resolved, taken
	// or not: an approval waiting for its turn at the device finds it
	// there and applies nothing (supersede.go).
	superseded *openhal.SupersededBy
	// supersededTaken says that the supersession took it out of pending:
	// it is being resolved as superseded.
	supersededTaken bool
}

func newConfirmations() *confirmations {
	return &confirmations{byID: map[string]*pendingWrite{}, openBy: map[string]int{}, openOn: map[string]int{}}
}

// principalKey names a principal in confirmations.openBy: requests are
// counted per kind and name, as their creator is recognised (cancel).
func principalKey(p openhal.Principal) string { return p.Kind + "\x00" + p.Name }

// reserve counts one more unresolved request of p for device dev, or
// refuses it with BUSY (confirmations_full) when p or the Hub has as
// many as allowed. A request of p for dev waiting for an admin does not
// count: the new one replaces it (supersede.go). A reservation that is
// not used must be given back with unreserve.
func (cs *confirmations) reserve(p openhal.Principal, dev string) *jsonrpc.Error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	key := principalKey(p)
	replaced := cs.replaceableLocked(p, dev)
	switch {
	case cs.openBy[key]-replaced >= openhal.MaxPendingPerPrincipal:
		return newError(openhal.CodeBusy, "confirmations_full",
			fmt.Sprintf("%s %s already has %d confirmation requests waiting for an admin, the most one principal may have; cancel one or wait",
				p.Kind, p.Name, openhal.MaxPendingPerPrincipal),
			errorData{"max": openhal.MaxPendingPerPrincipal, "per": "principal"})
	case cs.open-replaced >= openhal.MaxPending:
		return newError(openhal.CodeBusy, "confirmations_full",
			fmt.Sprintf("%d confirmation requests are waiting for an admin, the most this hub keeps; try again once some are resolved", openhal.MaxPending),
			errorData{"max": openhal.MaxPending, "per": "hub"})
	}
	cs.openBy[key]++
	cs.open++
	return nil
}

// unreserve gives back a reservation; the caller holds mu.
func (cs *confirmations) unreserve(p openhal.Principal) {
	key := principalKey(p)
	if cs.openBy[key]--; cs.openBy[key] <= 0 {
		delete(cs.openBy, key)
	}
	cs.open--
}

// loadCounter reads the last confirmation number of earlier runs.
func (h *Hub) loadCounter() error {
	if h.opt.StateDir == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(h.opt.StateDir, counterFile))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", counterFile, err)
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return fmt.Errorf("read %s: %w", counterFile, err)
	}
	h.confirms.next = n
	return nil
}

// newID numbers a request, and keeps the number on disk before it is used.
func (h *Hub) newConfirmationID() (string, uint64, error) {
	h.confirms.mu.Lock()
	defer h.confirms.mu.Unlock()
	n := h.confirms.next + 1
	if h.opt.StateDir != "" {
		if err := atomicfile.Write(filepath.Join(h.opt.StateDir, counterFile), []byte(strconv.FormatUint(n, 10)+"\n"), 0o600); err != nil {
			return "", 0, err
		}
	}
	h.confirms.next = n
	return confirmationID(n), n, nil
}

func confirmationID(n uint64) string { return fmt.Sprintf("c-%08d", n) }

// requestConfirmation queues a write that needs an admin's approval, in
// the device's turn; it replaces the writer's older request for the
// device, if any, and returns the wait for that one's audit entry (nil
// for none), which the writer waits for after its turn. A value too large
// to be kept is refused, and so is a request past the bounds of spec §7
// (BUSY).
func (h *Hub) requestConfirmation(w *writeAttempt) (any, *jsonrpc.Error, func() *jsonrpc.Error) {
	if !h.opt.Level.Allows(openhal.MethodConfirmationApprove) {
		return nil, errForbidden("confirmation_unavailable",
			"writing %s needs scope control_high, and this hub (conformance %s) cannot confirm writes", w.f.id, h.opt.Level), nil
	}
	if err := confirmableValue(w); err != nil {
		return nil, err, nil
	}
	if err := h.confirms.reserve(w.principal, w.f.id); err != nil {
		return nil, err, nil
	}
	id, n, err := h.newConfirmationID()
	if err != nil {
		h.confirms.mu.Lock()
		h.confirms.unreserve(w.principal)
		h.confirms.mu.Unlock()
		return nil, errInternal(fmt.Errorf("number the confirmation: %w", err)), nil
	}
	ttl := DefaultConfirmTTL
	if h.opt.ConfirmTTL > 0 {
		ttl = h.opt.ConfirmTTL
	}
	if r, _ := h.safety.rulesOf(w.f.id); r.ConfirmTTL > 0 {
		ttl = r.ConfirmTTL
	}
	now := h.clk.Now().UTC()
	pw := &pendingWrite{
		c: openhal.Confirmation{
			ID: id, Device: w.f.id, Value: w.value, Reason: w.reason, Status: openhal.ConfirmPending,
			RequestedBy: openhal.Principal{Kind: w.principal.Kind, Name: w.principal.Name},
			CreatedAt:   now, ExpiresAt: now.Add(ttl),
		},
		n: n, attempt: w, creator: w.creator,
	}
	cs := h.confirms
	cs.mu.Lock()
	cs.byID[id] = pw
	cs.openOn[w.f.id]++
	pw.timer = h.clk.AfterFunc(ttl, func() { h.expire(id) })
	c := pw.c
	older := cs.supersedeLocked(w.f.id, replacedBy(c), func(o *pendingWrite) bool {
		return o != pw && principalKey(o.c.RequestedBy) == principalKey(c.RequestedBy)
	})
	cs.mu.Unlock()
	h.broadcast(openhal.NotifyConfirmationRequested, c.Device, openhal.ConfirmationNotice{Confirmation: c})
	res := openhal.PendingResult{Status: openhal.StatusPending, Confirmation: c}
	if len(older) == 0 {
		return res, nil, nil
	}
	recorded := h.resolveSuperseded(older)
	return res, nil, func() *jsonrpc.Error {
		if err := recorded(); err != nil {
			return errAuditFailed(err)
		}
		return nil
	}
}

// confirmableValue refuses a value too large for a Confirmation Request
// to hold: a pending write is kept for minutes, and one principal may
// leave MaxPendingPerPrincipal of them. The writer may write it directly
// with a token of scope control_high.
func confirmableValue(w *writeAttempt) *jsonrpc.Error {
	b, err := json.Marshal(w.value)
	if err != nil {
		return valueError(w.f.id, err)
	}
	if len(b) <= openhal.MaxConfirmValueBytes {
		return nil
	}
	return newError(openhal.CodeInvalidParams, "too_long",
		fmt.Sprintf("value for %s: %d bytes of JSON, and a write that waits for an admin's confirmation holds at most %d (a token of scope control_high writes it without one)",
			w.f.id, len(b), openhal.MaxConfirmValueBytes),
		errorData{"device": w.f.id, "maxBytes": openhal.MaxConfirmValueBytes})
}

// take moves a pending request out of pending for one resolution; the
// loser of a race gets CONFIRMATION_CLOSED.
func (cs *confirmations) take(id string) (*pendingWrite, *jsonrpc.Error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	pw, ok := cs.byID[id]
	switch {
	case !ok:
		return nil, newError(openhal.CodeConfirmationNotFound, "confirmation_not_found", fmt.Sprintf("no confirmation %q", id), errorData{"id": id})
	case pw.taken && (pw.c.Status == openhal.ConfirmSuperseded || pw.supersededTaken):
		c := pw.c // superseded, or about to be: the loser is told so now
		c.SupersededBy = pw.superseded
		return nil, errSuperseded(c)
	case pw.taken:
		return nil, newError(openhal.CodeConfirmationClosed, "confirmation_closed", fmt.Sprintf("confirmation %s is already %s", id, closedWord(pw.c.Status)), errorData{"id": id, "status": pw.c.Status})
	}
	pw.timer.Stop()
	pw.taken = true
	return pw, nil
}

// resolve records the outcome of a taken request and tells every client.
func (h *Hub) resolve(pw *pendingWrite, status string, set func(*openhal.Confirmation)) openhal.Confirmation {
	cs := h.confirms
	cs.mu.Lock()
	now := h.clk.Now().UTC()
	pw.c.Status, pw.c.ResolvedAt = status, &now
	if set != nil {
		set(&pw.c)
	}
	c := pw.c
	cs.unreserve(pw.c.RequestedBy)
	if cs.openOn[c.Device]--; cs.openOn[c.Device] <= 0 {
		delete(cs.openOn, c.Device)
	}
	cs.resolved = append(cs.resolved, c.ID)
	if len(cs.resolved) > keepResolved {
		delete(cs.byID, cs.resolved[0])
		cs.resolved = cs.resolved[1:]
	}
	cs.mu.Unlock()
	h.broadcastViews(openhal.NotifyConfirmationResolved, c.Device, func(e token.Entry) any {
		return openhal.ConfirmationNotice{Confirmation: confirmationFor(e, c)}
	})
	return c
}

// expire closes a request nobody resolved in time.
func (h *Hub) expire(id string) {
	pw, err := h.confirms.take(id)
	if err != nil {
		return // resolved a moment earlier
	}
	c := h.resolve(pw, openhal.ConfirmExpired, nil)
	h.auditHub(openhal.Principal{Kind: openhal.KindHub, Name: "confirmations"}, "expire", c.Device, c.Value, openhal.ConfirmExpired, c.ID, "")
}

// rejectAll rejects every pending request (an emergency stop).
func (cs *confirmations) rejectAll(h *Hub, reason string) {
	cs.mu.Lock()
	var ids []string
	for id, pw := range cs.byID {
		if !pw.taken {
			ids = append(ids, id)
		}
	}
	cs.mu.Unlock()
	sort.Strings(ids)
	p := openhal.Principal{Kind: openhal.KindHub, Name: "emergency_stop"}
	for _, id := range ids {
		pw, err := cs.take(id)
		if err != nil {
			continue
		}
		c := h.resolve(pw, openhal.ConfirmRejected, func(c *openhal.Confirmation) { c.RejectedBy, c.ResolveReason = &p, reason })
		h.auditHub(p, "reject", c.Device, c.Value, openhal.ConfirmRejected, c.ID, reason)
	}
}

// approve applies a request's write as its creator: every check again
// but the risk step, with a revoked token refused (spec §7). A request
// superseded before the write's turn at the device applies nothing: it
// is resolved superseded, and the approver told CONFIRMATION_CLOSED.
func (h *Hub) approve(id string, by openhal.Principal) (openhal.Confirmation, *jsonrpc.Error) {
	pw, err := h.confirms.take(id)
	if err != nil {
		return openhal.Confirmation{}, err
	}
	res, werr := h.reapply(pw)
	if werr != nil && werr.Code == openhal.CodeConfirmationClosed {
		// Only the turn's own look (writeInTurn) answers that.
		if err := h.resolveSuperseded([]*pendingWrite{pw})(); err != nil {
			return openhal.Confirmation{}, errAuditFailed(err)
		}
		return openhal.Confirmation{}, werr
	}
	status := openhal.ConfirmApproved
	if werr != nil {
		status = openhal.ConfirmFailed
	}
	return h.resolve(pw, status, func(c *openhal.Confirmation) {
		c.ApprovedBy = &by
		if werr != nil {
			eo := errorObject(werr)
			c.Error = &eo
		} else if wr, ok := res.(openhal.WriteResult); ok {
			c.Result = &wr
		}
	}), nil
}

// reapply runs the approved write through the checks again, as its
// creator.
func (h *Hub) reapply(pw *pendingWrite) (any, *jsonrpc.Error) {
	if !pw.attempt.valid() {
		return nil, errorf(openhal.CodeUnauthorized, "token_revoked", "the token of %s was revoked", pw.c.RequestedBy.Name)
	}
	w := *pw.attempt
	f, err := h.lookupFor(pw.creator, w.f.id)
	if err != nil {
		return nil, err
	}
	if err := h.writable(f, w.principal); err != nil {
		return nil, err
	}
	if err := f.desc.Schema.Validate(w.value); err != nil {
		return nil, valueError(f.id, err)
	}
	if err := checkDeviceValue(f, w.value); err != nil {
		return nil, err
	}
	w.f, w.confirmed, w.confirmation = f, true, pw.c.ID
	return h.write(&w, h.order.enter(f.id))
}

// confirmationParams decodes the params of a request about one
// confirmation, whose id (a field of p) must name one the session may see.
func (s *session) confirmationParams(params json.RawMessage, p any, id *string) *jsonrpc.Error {
	if err := decodeParams(params, p); err != nil {
		return err
	}
	if *id == "" {
		return errMissing("id")
	}
	return s.visibleConfirmation(*id)
}

func serveConfirmationApprove(s *session, _ context.Context, params json.RawMessage) (any, *jsonrpc.Error) {
	var p openhal.ConfirmationParams
	if err := s.confirmationParams(params, &p, &p.ID); err != nil {
		return nil, err
	}
	who, entry := s.who()
	c, err := s.hub.approve(p.ID, who)
	if err != nil {
		return nil, err
	}
	return confirmationFor(entry, c), nil
}

func serveConfirmationReject(s *session, _ context.Context, params json.RawMessage) (any, *jsonrpc.Error) {
	var p openhal.RejectParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.ID == "" {
		return nil, errMissing("id")
	}
	if err := checkReason(p.Reason); err != nil {
		return nil, err
	}
	if err := s.visibleConfirmation(p.ID); err != nil {
		return nil, err
	}
	who, _ := s.who()
	pw, err := s.hub.confirms.take(p.ID)
	if err != nil {
		return nil, err
	}
	return s.hub.resolve(pw, openhal.ConfirmRejected, func(c *openhal.Confirmation) { c.RejectedBy, c.ResolveReason = &who, p.Reason }), nil
}

// serveConfirmationCancel lets a request's creator withdraw it.
func serveConfirmationCancel(s *session, _ context.Context, params json.RawMessage) (any, *jsonrpc.Error) {
	var p openhal.ConfirmationParams
	if err := s.confirmationParams(params, &p, &p.ID); err != nil {
		return nil, err
	}
	who, _ := s.who()
	cs := s.hub.confirms
	cs.mu.Lock()
	pw, ok := cs.byID[p.ID]
	mine := ok && pw.c.RequestedBy.Kind == who.Kind && pw.c.RequestedBy.Name == who.Name
	cs.mu.Unlock()
	if ok && !mine {
		return nil, errForbidden("not_creator", "only %s may cancel confirmation %s", pw.c.RequestedBy.Name, p.ID)
	}
	pw, err := cs.take(p.ID)
	if err != nil {
		return nil, err
	}
	return s.hub.resolve(pw, openhal.ConfirmCancelled, nil), nil
}

func closedWord(status string) string {
	if status == openhal.ConfirmPending {
		return "being resolved"
	}
	return status
}

// visibleConfirmation checks that a request exists for this session: a
// token limited to some devices does not see requests for the others.
func (s *session) visibleConfirmation(id string) *jsonrpc.Error {
	_, entry := s.who()
	cs := s.hub.confirms
	cs.mu.Lock()
	pw, ok := cs.byID[id]
	cs.mu.Unlock()
	if !ok || !entry.Visible(pw.c.Device) {
		return newError(openhal.CodeConfirmationNotFound, "confirmation_not_found", fmt.Sprintf("no confirmation %q", id), errorData{"id": id})
	}
	return nil
}

// pending counts the requests waiting for an admin.
func (cs *confirmations) pending() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	n := 0
	for _, pw := range cs.byID {
		if !pw.taken {
			n++
		}
	}
	return n
}
