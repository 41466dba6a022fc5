package halhub

import (
	"sync"
	"sync/atomic"

	"github.com/openhal/gateway/internal/halhub/audit"
	"github.com/openhal/gateway/openhal"
)

// latchDisk keeps the stop latch on disk in step with memory. A write that
// fails (the state directory removed, unwritable, full) leaves the stop
// engaged in memory and the failure noted; Relatch writes it again once
// the directory is usable. Writes are one at a time, and each writes the
// state memory has when it starts, so the last one always leaves the
// latest state on disk, whatever the order of stops, resumes and retries.
type latchDisk struct {
	mu     sync.Mutex                 // held across one write of the latch
	failed atomic.Pointer[latchError] // nil: the disk says what memory says
}

type latchError struct{ err error }

// persistLatch writes the stop as memory has it (stop.json, or its
// removal) and notes the outcome.
func (h *Hub) persistLatch() error {
	if h.opt.StateDir == "" {
		return nil
	}
	d := &h.stop.disk
	d.mu.Lock()
	defer d.mu.Unlock()
	h.stop.mu.Lock()
	rec := h.stop.latch
	h.stop.mu.Unlock()
	err := h.saveLatch(rec)
	if err != nil {
		d.failed.Store(&latchError{err})
		return err
	}
	if d.failed.Swap(nil) != nil {
		h.log.Info("stop latch written again", "stopped", rec.Stopped)
	}
	return nil
}

// Relatch writes the emergency stop's state to the state directory again:
// the latch when the stop is engaged, its removal when not. The gateway
// calls it when the state directory comes back after it was removed or
// turned unwritable (a latch written before is gone with it), and while a
// latch write is pending (see LatchFailed).
func (h *Hub) Relatch() error { return h.persistLatch() }

// LatchFailed returns why the stop's state in the state directory is not
// the one in memory (its last write failed), or nil when it is.
func (h *Hub) LatchFailed() error {
	if f := h.stop.disk.failed.Load(); f != nil {
		return f.err
	}
	return nil
}

// auditStop records an engaged stop. A client's stops are counted past
// the principal's rate, as its other stops and resumes are; a stop
// button's are each recorded.
func (h *Hub) auditStop(p openhal.Principal, entry audit.Entry, latchErr error) error {
	entry.Principal, entry.Action, entry.Outcome = p, "stop", "stopped"
	if latchErr != nil {
		entry.Error = &audit.ErrorInfo{Code: openhal.CodeInternalError, Message: "not latched on disk: " + latchErr.Error(), Reason: "latch_failed"}
	}
	if p.Kind == openhal.KindHub {
		return h.record(entry)
	}
	return h.auditRefusal(p, entry, false)
}

// diskTrouble is what a stop's answer and hal/stopped say of the disk.
func diskTrouble(latchErr, auditErr error) openhal.DiskTrouble {
	var t openhal.DiskTrouble
	if latchErr != nil {
		t.LatchFailed = latchErr.Error()
	}
	if auditErr != nil {
		t.AuditFailed = auditErr.Error()
	}
	return t
}
