package halhub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/openhal/gateway/internal/atomicfile"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/halhub/audit"
	"github.com/openhal/gateway/internal/halhub/token"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// safeDeadline is how long each device has to reach its safe value at an
// emergency stop (spec §6).
const safeDeadline = 2 * time.Second

// latchFile keeps an engaged stop in the state directory, so that a crash
// or a kill -9 never lifts it.
const latchFile = "stop.json"

// stopState is the emergency stop: engaged or not, and the stop buttons
// held down.
type stopState struct {
	mu      sync.Mutex
	engaged bool
	latch   latchRecord
	held    map[string]bool // stop buttons pressed, by name
	gen     uint64          // stops engaged so far: a resume lifts only the one it saw
	disk    latchDisk
	outcome stopOutcome // what the engaged stop's last drive could not make safe
	loaded  bool        // the latch on disk was read (LatchedStop, Restore)
}

// stopOutcome is what a stop's drive to the safe values could not make
// safe, kept while the stop is engaged for hal/initialize's stopped.
type stopOutcome struct {
	failed []openhal.SafeFailure
	left   []openhal.LeftAsIs
}

// setOutcome keeps the outcome of the drive made for stop gen, unless a
// resume or a later stop came meanwhile: the outcome told is always the
// engaged stop's own.
func (st *stopState) setOutcome(gen uint64, o stopOutcome) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.engaged && st.gen == gen {
		st.outcome = o
	}
}

type latchRecord struct {
	Stopped   bool              `json:"stopped"`
	Principal openhal.Principal `json:"principal"`
	Reason    string            `json:"reason"`
	TS        time.Time         `json:"ts"`
}

func (st *stopState) isEngaged() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.engaged
}

// loadLatch reads an engaged stop left by an earlier run, in the state
// directory or in the copy (LatchCopy): either one engaged is enough, so
// that a state directory removed while stopped does not lift the stop at
// the next start.
func (h *Hub) loadLatch() error {
	h.stop.mu.Lock()
	loaded := h.stop.loaded
	h.stop.mu.Unlock()
	if h.opt.StateDir == "" || loaded {
		return nil
	}
	rec, err := h.readLatch(filepath.Join(h.opt.StateDir, latchFile))
	if err != nil {
		return err
	}
	if !rec.Stopped && h.opt.LatchCopy != "" {
		copyRec, err := h.readLatch(h.opt.LatchCopy)
		if err != nil {
			h.log.Error("stop latch copy unreadable; ignored", "file", h.opt.LatchCopy, "err", err)
		} else if copyRec.Stopped {
			h.log.Warn("stop latch found only in its copy: the state directory lost it; staying stopped", "file", h.opt.LatchCopy)
			rec = copyRec
		}
	}
	h.stop.mu.Lock()
	h.stop.engaged, h.stop.latch, h.stop.loaded = rec.Stopped, rec, true
	h.stop.mu.Unlock()
	return nil
}

// LatchedStop reads the emergency stop an earlier run left latched on
// disk, before the board opens its devices, and reports whether it is
// engaged: the gateway then opens its outputs at their safe values, not
// their initial ones, so that a restart never drives an output away from
// safe, not even until Restore drives the safe values. Restore does not
// read the latch again.
func (h *Hub) LatchedStop() (bool, error) {
	if err := h.loadLatch(); err != nil {
		return false, err
	}
	h.stop.mu.Lock()
	defer h.stop.mu.Unlock()
	return h.stop.engaged, nil
}

// readLatch reads one latch file; a missing one is not stopped.
func (h *Hub) readLatch(path string) (latchRecord, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return latchRecord{}, nil
	}
	if err != nil {
		return latchRecord{}, fmt.Errorf("read stop latch: %w", err)
	}
	var rec latchRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		// A latch that cannot be read is taken as engaged: a damaged file
		// must never lift a stop.
		h.log.Error("stop latch unreadable; staying stopped", "file", path, "err", err)
		rec = latchRecord{Stopped: true, Reason: "unreadable stop latch"}
	}
	return rec, nil
}

// saveLatch writes (or, on resume, removes) the latch and syncs it to
// disk before the stop or resume is acted on; then its copy. The copy's
// failure is logged, not returned: the state directory's latch is the
// one the stop's answer reports on.
func (h *Hub) saveLatch(rec latchRecord) error {
	if h.opt.StateDir == "" {
		return nil
	}
	err := writeLatch(h.opt.StateDir, filepath.Join(h.opt.StateDir, latchFile), rec)
	if h.opt.LatchCopy != "" {
		if cerr := writeLatch(filepath.Dir(h.opt.LatchCopy), h.opt.LatchCopy, rec); cerr != nil {
			h.log.Warn("stop latch copy not written", "file", h.opt.LatchCopy, "err", cerr)
		}
	}
	return err
}

// writeLatch writes rec to path, in dir, synced; a lifted stop removes
// the file.
func writeLatch(dir, path string, rec latchRecord) error {
	if !rec.Stopped {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove stop latch: %w", err)
		}
		return atomicfile.SyncDir(dir)
	}
	b, _ := json.Marshal(rec)
	return atomicfile.Write(path, b, 0o600)
}

// Stop engages the emergency stop (spec §6): it is latched on disk first,
// pending confirmations are rejected, every device with a safe value is
// driven to it in parallel, the stop is recorded in the audit log, and
// hal/stopped goes to every client. A repeated stop does all of it again.
// A stop button calls it with a hub principal. The disk never keeps a
// stop from engaging: a latch or an audit entry that cannot be written
// is said in the result (and hal/stopped, and the log), the error is the
// latch's, and the latch is written again when the state directory is
// usable (Relatch).
func (h *Hub) Stop(p openhal.Principal, reason string) (openhal.StopResult, error) {
	return h.engageStop(p, reason, audit.Entry{Reason: reason})
}

// engageStop is Stop, with the audit entry to record (its principal,
// action and outcome are filled in): a client's keeps its whole reason
// (the audit log bounds it, and keeps the hash of what it cuts), a stop
// button's names the button.
func (h *Hub) engageStop(p openhal.Principal, reason string, entry audit.Entry) (openhal.StopResult, error) {
	now := h.clk.Now().UTC()
	rec := latchRecord{Stopped: true, Principal: p, Reason: reason, TS: now}
	h.stop.mu.Lock()
	already := h.stop.engaged
	h.stop.engaged, h.stop.latch = true, rec
	h.stop.gen++
	gen := h.stop.gen
	h.stop.mu.Unlock()
	// Engaged in memory before the disk: from here on, writes are refused
	// even if the disk is slow, failing or gone.
	latchErr := h.persistLatch()
	if latchErr != nil {
		h.log.Error("stop engaged but not latched on disk; written again when the state directory is usable", "err", latchErr)
	}
	h.confirms.rejectAll(h, "emergency_stop")
	applied, failed, safeAuditErr := h.driveAllSafe(p, "emergency stop", h.order.enterAhead)
	left := h.leftAsIs()
	h.stop.setOutcome(gen, stopOutcome{failed: failed, left: left})
	auditErr := h.auditStop(p, entry, latchErr)
	if auditErr == nil && safeAuditErr != nil {
		auditErr = fmt.Errorf("a safe value: %w", safeAuditErr)
	}
	if auditErr != nil {
		h.log.Error("stop engaged but not in the audit log", "principal", p.Name, "err", auditErr)
	}
	trouble := diskTrouble(latchErr, auditErr)
	h.broadcastEach(openhal.NotifyStopped, func(e token.Entry) any {
		a, f := visibleOutcome(e, applied, failed)
		return openhal.StoppedParams{Principal: p, Reason: reason, TS: now, SafeApplied: a, Failed: f, LeftAsIs: visibleLeft(e, left), DiskTrouble: trouble}
	})
	h.log.Warn("emergency stop", "principal", p.Name, "reason", reason, "safe_applied", len(applied), "failed", len(failed), "left_as_is", len(left),
		"latched", latchErr == nil, "audited", auditErr == nil)
	return openhal.StopResult{Stopped: true, AlreadyStopped: already, SafeApplied: applied, Failed: failed, LeftAsIs: left, DiskTrouble: trouble}, latchErr
}

// Resume lifts the stop, unless a stop button is still held down. The
// resume is recorded in the audit log before it is acted on: a resume
// that cannot be recorded is refused (audit_failed) and the stop holds.
// A stop engaged while the record was written is not lifted: the answer
// then says stopped.
func (h *Hub) Resume(p openhal.Principal) (openhal.ResumeResult, *jsonrpc.Error) {
	h.stop.mu.Lock()
	var held []string
	for name, down := range h.stop.held {
		if down {
			held = append(held, name)
		}
	}
	was, gen := h.stop.engaged, h.stop.gen
	h.stop.mu.Unlock()
	if len(held) > 0 {
		sort.Strings(held)
		return openhal.ResumeResult{Stopped: true}, newError(openhal.CodeStopped, "stop_button_pressed",
			fmt.Sprintf("stop button %s is still pressed; release it first", held[0]), errorData{"buttons": held})
	}
	entry := audit.Entry{Principal: p, Action: "resume", Outcome: "resumed"}
	if err := h.auditRefusal(p, entry, false); err != nil {
		return openhal.ResumeResult{Stopped: was}, errAuditFailed(err)
	}
	if !was {
		return openhal.ResumeResult{Stopped: false, WasStopped: false}, nil
	}
	h.stop.mu.Lock()
	if h.stop.gen != gen {
		h.stop.mu.Unlock()
		return openhal.ResumeResult{Stopped: true}, nil
	}
	h.stop.engaged, h.stop.latch, h.stop.outcome = false, latchRecord{}, stopOutcome{}
	h.stop.mu.Unlock()
	if err := h.persistLatch(); err != nil {
		// The stop stays latched on disk until Relatch removes it: a
		// restart before that would be stopped, which is the safe side.
		h.log.Error("resume: stop latch not removed", "err", err)
	}
	h.broadcast(openhal.NotifyResumed, "", openhal.ResumedParams{Principal: p, TS: h.clk.Now().UTC()})
	h.log.Info("resumed", "principal", p.Name)
	return openhal.ResumeResult{Stopped: false, WasStopped: true}, nil
}

// SetStopButton is the hook of a GPIO input configured as a stop button:
// pressing it engages the stop with principal {hub, name}; while it is
// held, hal/resume is refused. A button named in Options.StopButtons is
// watched through the registry and needs no call.
func (h *Hub) SetStopButton(name string, pressed bool) {
	if h.stop.setHeld(name, pressed) {
		h.buttonStop(name)
	}
}

// setHeld records a button's position and reports whether it was pressed.
func (st *stopState) setHeld(name string, pressed bool) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.held == nil {
		st.held = map[string]bool{}
	}
	st.held[name] = pressed
	return pressed
}

// buttonStop engages the stop for a pressed button, and audits it.
func (h *Hub) buttonStop(name string) {
	p := openhal.Principal{Kind: openhal.KindHub, Name: name}
	reason := "stop button " + name + " pressed"
	// A disk failure is logged and said in hal/stopped.
	h.engageStop(p, reason, audit.Entry{Device: name, Value: true, Reason: reason})
}

// Stopped reports whether the emergency stop is engaged.
func (h *Hub) Stopped() bool { return h.stop.isEngaged() }

// driveAllSafe drives every device that has a safe value to it, in
// parallel, each within safeDeadline, and returns the ids that got there
// and those that did not, with their errors, both sorted. A device that
// took its safe value counts as applied even when the audit log could not
// record it (its entry is lost, not its value): auditErr says so. enter
// takes each safe value's turn at its device: in line (writeOrder.enter),
// or, for the emergency stop, ahead of the writes queued, which the stop
// refuses anyway (enterAhead).
func (h *Hub) driveAllSafe(p openhal.Principal, why string, enter func(device string) *turn) (applied []string, failed []openhal.SafeFailure, auditErr error) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	applied, failed = []string{}, []openhal.SafeFailure{}
	for _, d := range h.reg.List() {
		if d.Safe == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := h.driveSafeIn(enter(d.ID), d.ID, p, why, safeDeadline)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil && reasonOf(err) == "audit_failed":
				auditErr = fmt.Errorf("%s: %s", d.ID, err.Message)
				applied = append(applied, d.ID)
			case err != nil:
				failed = append(failed, openhal.SafeFailure{Device: d.ID, Error: errorObject(err)})
			default:
				applied = append(applied, d.ID)
			}
		}()
	}
	wg.Wait()
	sort.Strings(applied)
	sort.Slice(failed, func(i, j int) bool { return failed[i].Device < failed[j].Device })
	return applied, failed, auditErr
}

// driveSafe writes a device's safe value on the Hub's own behalf, in its
// turn after the writes queued for the device, and audits it.
func (h *Hub) driveSafe(id string, p openhal.Principal, why string, deadline time.Duration) *jsonrpc.Error {
	return h.driveSafeIn(h.order.enter(id), id, p, why, deadline)
}

// driveSafeIn is driveSafe in the turn t, which the caller took.
func (h *Hub) driveSafeIn(t *turn, id string, p openhal.Principal, why string, deadline time.Duration) *jsonrpc.Error {
	dev, ok := h.reg.Device(id)
	desc, ok2 := h.reg.Describe(id)
	if !ok || !ok2 {
		t.leave()
		return errDeviceNotFound(id)
	}
	if _, isWriter := dev.(device.Writer); !isWriter || desc.Safe == nil {
		t.leave()
		return newError(openhal.CodeNotSupported, "no_safe_value", "device "+id+" cannot be driven to a safe value", errorData{"device": id})
	}
	w := &writeAttempt{f: found{id: id, dev: dev, desc: desc}, principal: p, value: desc.Safe, reason: why, timeout: deadline, safe: true, driven: true}
	res, err := h.write(w, t)
	h.auditWrite(w, res, err)
	return err
}

// errorObject turns an error answer into the object carried in results
// and notifications.
func errorObject(e *jsonrpc.Error) openhal.ErrorObject {
	d, _ := json.Marshal(e.Data)
	return openhal.ErrorObject{Code: e.Code, Message: e.Message, Data: d}
}

// serveStop answers hal/stop. A reason past MaxReasonBytes is cut, not
// refused: a long explanation never keeps a stop from engaging. Nor does
// the disk: a stop that could not be latched or recorded is answered with
// its result all the same, saying so (latchFailed, auditFailed).
func serveStop(s *session, _ context.Context, params json.RawMessage) (any, *jsonrpc.Error) {
	var p openhal.StopParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	who, entry := s.who()
	res, _ := s.hub.engageStop(who, cutReason(p.Reason), audit.Entry{Reason: p.Reason})
	res.SafeApplied, res.Failed = visibleOutcome(entry, res.SafeApplied, res.Failed)
	res.LeftAsIs = visibleLeft(entry, res.LeftAsIs)
	return res, nil
}

// serveResume answers hal/resume.
func serveResume(s *session, _ context.Context, params json.RawMessage) (any, *jsonrpc.Error) {
	who, tok := s.who()
	if len(tok.Devices) > 0 {
		// Spec §4: lifting the stop acts on every device; a token that
		// may see only some of them may not.
		return nil, errForbidden("device_limited", "hal/resume needs a token not limited to some devices; this one is limited to %s", strings.Join(tok.Devices, ", "))
	}
	var p struct{}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	res, err := s.hub.Resume(who)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// visibleOutcome keeps what a token may see of a stop's outcome: a token
// limited to some devices does not learn the others' names.
func visibleOutcome(e token.Entry, applied []string, failed []openhal.SafeFailure) ([]string, []openhal.SafeFailure) {
	if len(e.Devices) == 0 {
		return applied, failed
	}
	a, f := []string{}, []openhal.SafeFailure{}
	for _, id := range applied {
		if e.Visible(id) {
			a = append(a, id)
		}
	}
	for _, x := range failed {
		if e.Visible(x.Device) {
			f = append(f, x)
		}
	}
	return a, f
}
