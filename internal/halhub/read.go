package halhub

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/halhub/token"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

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
		return readPlan{}, newError(openhal.CodeNotSupported, "write_only", "device "+f.id+" is write-only", errorData{"device": f.id})
	}
	h := s.hub
	snap, cached := f.snap, f.cached
	reader, canMeasure := f.dev.(device.Reader)
	fresh := cached && p.MaxAgeMs != nil && youngEnough(h.reg.Now().Sub(snap.At), *p.MaxAgeMs)
	if canMeasure && !fresh {
		return readPlan{f: f, reader: reader, measure: true}, nil
	}
	if !cached {
		return readPlan{}, newError(openhal.CodeDeviceFault, "no_value", "device "+f.id+" has no value yet", errorData{"device": f.id})
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
		return device.Snapshot{}, newError(openhal.CodeDeviceFault, "offline", "device "+f.id+" is offline", errorData{"device": f.id})
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	rd, err := r.Read(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		// In words, not the context's: what did not answer, and how long
		// it was given.
		words := noAnswer(isProxy, timeout)
		h.reg.SetState(f.id, device.StateFault, words)
		return device.Snapshot{}, newError(openhal.CodeTimeout, "timeout", "device "+f.id+": "+words, errorData{"device": f.id})
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

// youngEnough reports whether a value of age is at most maxAgeMs old. A
// maxAgeMs too large for a Duration means any age.
func youngEnough(age time.Duration, maxAgeMs int64) bool {
	if maxAgeMs > math.MaxInt64/int64(time.Millisecond) {
		return true
	}
	return age <= time.Duration(maxAgeMs)*time.Millisecond
}
