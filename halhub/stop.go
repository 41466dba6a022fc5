package halhub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/openhal/gateway/atomicfile"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/halhub/token"
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

// loadLatch reads an engaged stop left by an earlier run.
func (h *Hub) loadLatch() error {
	if h.opt.StateDir == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(h.opt.StateDir, latchFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read stop latch: %w", err)
	}
	var rec latchRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		// A latch that cannot be read is taken as engaged: a damaged file
		// must never lift a stop.
		h.log.Error("stop latch unreadable; staying stopped", "file", latchFile, "err", err)
		rec = latchRecord{Stopped: true, Reason: "unreadable stop latch"}
	}
	h.stop.mu.Lock()
	h.stop.engaged, h.stop.latch = rec.Stopped, rec
	h.stop.mu.Unlock()
	return nil
}

// saveLatch writes (or, on resume, removes) the latch and syncs it to
// disk before the stop or resume is acted on.
func (h *Hub) saveLatch(rec latchRecord) error {
	if h.opt.StateDir == "" {
		return nil
	}
	path := filepath.Join(h.opt.StateDir, latchFile)
	if !rec.Stopped {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove stop latch: %w", err)
		}
		return atomicfile.SyncDir(h.opt.StateDir)
	}
	b, _ := json.Marshal(rec)
	return atomicfile.Write(path, b, 0o600)
}

// Stop engages the emergency stop (spec §6): it is latched on disk first,
// pending confirmations are rejected, every device with a safe value is
// driven to it in parallel, and hal/stopped goes to every client. A
// repeated stop does all of it again. A stop button calls it with a hub
// principal.
func (h *Hub) Stop(p openhal.Principal, reason string) (openhal.StopResult, error) {
	now := h.clk.Now().UTC()
	rec := latchRecord{Stopped: true, Principal: p, Reason: reason, TS: now}
	h.stop.mu.Lock()
	already := h.stop.engaged
	h.stop.engaged, h.stop.latch = true, rec
	h.stop.mu.Unlock()
	// Engaged in memory before the disk: from here on, writes are refused
	// even if the disk is slow or failing.
	latchErr := h.saveLatch(rec)
	if latchErr != nil {
		h.log.Error("stop engaged but not latched on disk", "err", latchErr)
	}
	h.confirms.rejectAll(h, "emergency_stop")
	applied, failed := h.driveAllSafe(p, "emergency stop")
	left := h.leftAsIs()
	h.broadcastEach(openhal.NotifyStopped, func(e token.Entry) any {
		a, f := visibleOutcome(e, applied, failed)
		return openhal.StoppedParams{Principal: p, Reason: reason, TS: now, SafeApplied: a, Failed: f, LeftAsIs: visibleLeft(e, left)}
	})
	h.log.Warn("emergency stop", "principal", p.Name, "reason", reason, "safe_applied", len(applied), "failed", len(failed), "left_as_is", len(left))
	return openhal.StopResult{Stopped: true, AlreadyStopped: already, SafeApplied: applied, Failed: failed, LeftAsIs: left}, latchErr
}

// Resume lifts the stop, unless a stop button is still held down.
func (h *Hub) Resume(p openhal.Principal) (openhal.ResumeResult, *jsonrpc.Error) {
	h.stop.mu.Lock()
	var held []string
	for name, down := range h.stop.held {
		if down {
			held = append(held, name)
		}
	}
	if len(held) > 0 {
		h.stop.mu.Unlock()
		sort.Strings(held)
		return openhal.ResumeResult{Stopped: true}, newError(openhal.CodeStopped, "stop_button_pressed",
			fmt.Sprintf("stop button %s is still pressed; release it first", held[0]), data{"buttons": held})
	}
	was := h.stop.engaged
	h.stop.engaged, h.stop.latch = false, latchRecord{}
	h.stop.mu.Unlock()
	if !was {
		return openhal.ResumeResult{Stopped: false, WasStopped: false}, nil
	}
	if err := h.saveLatch(latchRecord{}); err != nil {
		// The stop stays latched on disk: a restart would be stopped,
		// which is the safe side. Tell the admin.
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
	if _, err := h.Stop(p, reason); err != nil {
		h.log.Error("stop button: stop not latched", "button", name, "err", err)
	}
	h.auditHub(p, "stop", name, true, "stopped", "", reason)
}

// Stopped reports whether the emergency stop is engaged.
func (h *Hub) Stopped() bool { return h.stop.isEngaged() }

// driveAllSafe drives every device that has a safe value to it, in
// parallel, each within safeDeadline, and returns the ids that got there
// and those that did not, with their errors, both sorted.
func (h *Hub) driveAllSafe(p openhal.Principal, why string) (applied []string, failed []openhal.SafeFailure) {
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
			err := h.driveSafe(d.ID, p, why, safeDeadline)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed = append(failed, openhal.SafeFailure{Device: d.ID, Error: errorObject(err)})
				return
			}
			applied = append(applied, d.ID)
		}()
	}
	wg.Wait()
	sort.Strings(applied)
	sort.Slice(failed, func(i, j int) bool { return failed[i].Device < failed[j].Device })
	return applied, failed
}

// driveSafe writes a device's safe value on the Hub's own behalf, in its
// turn after any write already at the device, and audits it.
func (h *Hub) driveSafe(id string, p openhal.Principal, why string, deadline time.Duration) *jsonrpc.Error {
	dev, ok := h.reg.Device(id)
	desc, ok2 := h.reg.Describe(id)
	if !ok || !ok2 {
		return errDeviceNotFound(id)
	}
	if _, isWriter := dev.(device.Writer); !isWriter || desc.Safe == nil {
		return newError(openhal.CodeNotSupported, "no_safe_value", "device "+id+" cannot be driven to a safe value", data{"device": id})
	}
	w := &writeAttempt{f: found{id: id, dev: dev, desc: desc}, principal: p, value: desc.Safe, reason: why, timeout: deadline, safe: true}
	res, err := h.write(w, h.order.enter(id))
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
// refused: a long explanation never keeps a stop from engaging.
func serveStop(s *session, _ context.Context, params json.RawMessage) (any, *jsonrpc.Error) {
	var p openhal.StopParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	who, entry := s.who()
	res, err := s.hub.Stop(who, cutReason(p.Reason))
	res.SafeApplied, res.Failed = visibleOutcome(entry, res.SafeApplied, res.Failed)
	res.LeftAsIs = visibleLeft(entry, res.LeftAsIs)
	if err != nil {
		// Engaged and acted on, but not latched: say so, with the result.
		return nil, newError(openhal.CodeInternalError, "latch_failed", "the stop is engaged but could not be latched on disk: "+err.Error(), data{"result": res})
	}
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
