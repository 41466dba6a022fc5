package halhub

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/halhub/token"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// serveDevicesList answers hal/devices/list: the descriptors of the
// devices the token sees, of kind and with every tag of tags when given.
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

// serveDevicesGet answers hal/devices/get: one descriptor.
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

// deviceFault is DEVICE_FAULT for a failed read or write: "offline" for a
// device that says so, the code of a coded error (an adapter's) with its
// error object in data.error, else "device_error" with the detail.
func deviceFault(op, id string, err error) *jsonrpc.Error {
	d := errorData{"device": id, "detail": err.Error()}
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
