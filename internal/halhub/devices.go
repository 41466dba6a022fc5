package halhub

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/halhub/token"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

func servePing(s *session, _ context.Context, params json.RawMessage) (any, *jsonrpc.Error) {
	var p struct{}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

// quickPing answers hal/ping on the reader: it never waits.
func quickPing(s *session, params json.RawMessage) (any, *jsonrpc.Error, bool) {
	res, err := servePing(s, context.Background(), params)
	return res, err, false
}

func serveDevicesList(s *session, _ context.Context, params json.RawMessage) (any, *jsonrpc.Error) {
	var p openhal.DevicesListParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if slices.Contains(p.Tags, "") {
		// null or "" in tags: no device has such a tag, and an empty
		// answer would hide the client's mistake.
		return nil, errParam("wrong_type", "tags", "params.tags: want an array of non-empty strings, got an empty string or null in the array")
	}
	_, entry := s.who()
	out := []device.Descriptor{}
	for _, d := range s.hub.reg.List() {
		if !entry.Visible(d.ID) || (p.Kind != "" && d.Kind != p.Kind) || !hasTags(d.Tags, p.Tags) {
			continue
		}
		out = append(out, d)
	}
	return openhal.DevicesListResult{Devices: out}, nil
}

// hasTags reports whether have holds every tag of want.
func hasTags(have, want []string) bool {
	for _, t := range want {
		if !slices.Contains(have, t) {
			return false
		}
	}
	return true
}

func serveDevicesGet(s *session, _ context.Context, params json.RawMessage) (any, *jsonrpc.Error) {
	var p openhal.DeviceParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.Device == "" {
		return nil, errMissing("device")
	}
	d, err := s.lookup(p.Device)
	if err != nil {
		return nil, err
	}
	return d.desc, nil
}

// found is a device the session may see.
type found struct {
	id     string
	dev    device.Device
	desc   device.Descriptor
	snap   device.Snapshot // its last value, when cached
	cached bool
}

// lookup finds a device visible to the session's token; others do not
// exist for it (spec §4).
func (s *session) lookup(id string) (found, *jsonrpc.Error) {
	_, entry := s.who()
	return s.hub.lookupFor(entry, id)
}

// lookupFor finds a device visible to a token.
func (h *Hub) lookupFor(entry token.Entry, id string) (found, *jsonrpc.Error) {
	if !entry.Visible(id) {
		return found{}, errDeviceNotFound(id)
	}
	f, ok := h.reg.Lookup(id)
	if !ok {
		return found{}, errDeviceNotFound(id)
	}
	return found{id: id, dev: f.Device, desc: f.Descriptor, snap: f.Value, cached: f.HasValue}, nil
}

// serveRead answers hal/read: a fresh measurement from a device that can
// take one, unless the cached value is younger than maxAgeMs; the value
// last applied for an output.
func serveRead(s *session, ctx context.Context, params json.RawMessage) (any, *jsonrpc.Error) {
	_, entry := s.who()
	r, err := planRead(s, entry, params, nil)
	if err != nil {
		return nil, err
	}
	snap := r.snap
	if r.measure {
		if snap, err = s.hub.measure(ctx, r.f, r.reader); err != nil {
			return nil, err
		}
	}
	return readResult(entry, r.f.id, snap), nil
}

// quickRead answers hal/read on the reader when no device is asked: an
// output's value, or a cached one young enough. A read that measures
// waits for its device, so serveRead takes it on a goroutine of its own.
//
// On the reader, it reuses the session's last device id and answer
// (s.quick), so that a client reading the same devices again and again
// costs no allocation: the answer is encoded before the next request is
// read.
func quickRead(s *session, params json.RawMessage) (any, *jsonrpc.Error, bool) {
	r, err := planRead(s, s.quick.entry, params, &s.quick.device)
	switch {
	case err != nil:
		return nil, err, false
	case r.measure:
		return nil, nil, true
	}
	s.quick.result = readResult(s.quick.entry, r.f.id, r.snap)
	return &s.quick.result, nil, false
}

// readPlan is what a hal/read needs: the device, and either its cached
// value or a measurement (measure) from reader.
type readPlan struct {
	f       found
	snap    device.Snapshot
	reader  device.Reader
	measure bool
}

// planRead checks a hal/read's params and the device, and finds whether
// the cached value answers it. lastID, when not nil, holds the device id
// last read, reused when the params name it again (decodeReadParams).
func planRead(s *session, entry token.Entry, params json.RawMessage, lastID *string) (readPlan, *jsonrpc.Error) {
	var p openhal.ReadParams
	if err := decodeReadParams(params, &p, lastID); err != nil {
		return readPlan{}, err
	}
	if p.Device == "" {
		return readPlan{}, errMissing("device")
	}
	if p.MaxAgeMs != nil && *p.MaxAgeMs < 0 {
		return readPlan{}, errParam("out_of_range", "maxAgeMs", "params.maxAgeMs must not be negative")
	}
	f, err := s.hub.lookupFor(entry, p.Device)
	if err != nil {
		return readPlan{}, err
	}
	if !f.desc.Access.CanRead() {
		return readPlan{}, newError(openhal.CodeNotSupported, "write_only", "device "+f.id+" is write-only", data{"device": f.id})
	}
	h := s.hub
	snap, cached := f.snap, f.cached
	reader, canMeasure := f.dev.(device.Reader)
	fresh := cached && p.MaxAgeMs != nil && youngEnough(h.reg.Now().Sub(snap.At), *p.MaxAgeMs)
	if canMeasure && !fresh {
		return readPlan{f: f, reader: reader, measure: true}, nil
	}
	if !cached {
		return readPlan{}, newError(openhal.CodeDeviceFault, "no_value", "device "+f.id+" has no value yet", data{"device": f.id})
	}
	return readPlan{f: f, snap: snap}, nil
}

// readResult is a read's answer as the session's token is told it.
func readResult(entry token.Entry, id string, snap device.Snapshot) openhal.ValueResult {
	return valueFor(entry, openhal.ValueResult{Device: id, Value: snap.Value, TS: snap.TS, Seq: snap.Seq, DevSeq: snap.DevSeq})
}

// measure takes a fresh reading within the read deadline and publishes it,
// so that the reading has a seq and every client sees it.
func (h *Hub) measure(ctx context.Context, f found, r device.Reader) (device.Snapshot, *jsonrpc.Error) {
	timeout := h.opt.Limits.ReadTimeout
	proxy, isProxy := f.dev.(device.Proxy)
	if isProxy {
		timeout = proxy.Timeout()
	} else if f.desc.State == device.StateOffline {
		return device.Snapshot{}, newError(openhal.CodeDeviceFault, "offline", "device "+f.id+" is offline", data{"device": f.id})
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	rd, err := r.Read(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		// In words, not the context's: what did not answer, and how long
		// it was given.
		words := noAnswer(isProxy, timeout)
		h.reg.SetState(f.id, device.StateFault, words)
		return device.Snapshot{}, newError(openhal.CodeTimeout, "timeout", "device "+f.id+": "+words, data{"device": f.id})
	}
	h.noteOutcome(f, err)
	if err != nil {
		if ctx.Err() != nil { // the client went away
			return device.Snapshot{}, errorf(openhal.CodeDeviceFault, "cancelled", "read cancelled")
		}
		return device.Snapshot{}, deviceFault("read", f.id, err)
	}
	snap, ok := h.reg.Publish(f.id, rd.Value, rd.TS)
	if !ok {
		return device.Snapshot{}, errDeviceNotFound(f.id)
	}
	return snap, nil
}

// noAnswer says that a read got no answer within timeout: from the
// adapter behind a proxy device, else from the device.
func noAnswer(proxy bool, timeout time.Duration) string {
	who := "the device"
	if proxy {
		who = "the adapter"
	}
	return who + " did not answer within " + timeout.String()
}

// noteOutcome keeps a device's state in step with its last operation: a
// failure puts it in fault with the reason, a success after a fault puts
// it back to ok. An offline device stays offline: its provider says when
// it is back.
func (h *Hub) noteOutcome(f found, err error) {
	switch {
	case err != nil && errors.Is(err, context.Canceled):
		// the caller went away; the device did nothing wrong
	case errors.Is(err, device.ErrOffline):
		// the device has said it is offline; that state stays
	case errors.As(err, new(*device.CodedError)):
		// an adapter's answer or its absence: the adapter reports its
		// devices' states itself
	case err != nil:
		h.reg.SetState(f.id, device.StateFault, err.Error())
	case f.desc.State == device.StateFault:
		h.reg.SetState(f.id, device.StateOK, "")
	}
}

// youngEnough reports whether a value of age is at most maxAgeMs old. A
// maxAgeMs too large for a Duration means any age.
func youngEnough(age time.Duration, maxAgeMs int64) bool {
	if maxAgeMs > math.MaxInt64/int64(time.Millisecond) {
		return true
	}
	return age <= time.Duration(maxAgeMs)*time.Millisecond
}

// deviceFault is DEVICE_FAULT for a failed read or write: "offline" for a
// device that says so, the code of a coded error (an adapter's) with its
// error object in data.error, else "device_error" with the detail.
func deviceFault(op, id string, err error) *jsonrpc.Error {
	d := data{"device": id, "detail": err.Error()}
	reason := "device_error"
	var ce *device.CodedError
	switch {
	case errors.As(err, &ce):
		reason, d["code"] = ce.Reason(), ce.Code
		if ce.Object != nil {
			d["error"] = ce.Object
		}
	case errors.Is(err, device.ErrOffline):
		reason = "offline"
	}
	return newError(openhal.CodeDeviceFault, reason, op+" "+id+": "+err.Error(), d)
}
