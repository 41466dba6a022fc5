package halhub

import (
	"gateway/device"
	"gateway/halhub/token"
	"gateway/jsonrpc"
	"gateway/openhal"
)

// onEvent turns one registry event into a notification, encoded once, and
// queues it on every connection that may see it. It runs under the
// registry's lock (events arrive in seq order), so it only queues.
func (h *Hub) onEvent(e device.Event) {
	h.noteSafety(e)
	method, params := notificationOf(e)
	msg, err := jsonrpc.AppendNotification(nil, method, params)
	if err != nil {
		h.log.Error("encode notification", "method", method, "device", e.Device, "err", err)
		return
	}
	h.stats.events.Add(1)
	h.mu.RLock()
	defer h.mu.RUnlock()
	for s := range h.sessions {
		if !s.ready() {
			continue // seed 3.1.1, 4: nothing before hal/initialized
		}
		if _, entry := s.who(); !entry.Visible(e.Device) {
			continue
		}
		if e.Kind == device.EventValue {
			s.q.pushValue(e.Device, msg)
		} else {
			s.notify(msg)
		}
	}
}

func notificationOf(e device.Event) (string, any) {
	switch e.Kind {
	case device.EventValue:
		return openhal.NotifyValue, openhal.ValueResult{Device: e.Device, Value: e.Value, TS: e.TS, Seq: e.Seq}
	case device.EventState:
		return openhal.NotifyDeviceState, openhal.DeviceStateParams{Device: e.Device, State: e.State, Fault: e.Fault}
	case device.EventAdded:
		return openhal.NotifyDeviceAdded, openhal.DeviceAddedParams{Device: e.Descriptor}
	default:
		return openhal.NotifyDeviceRemoved, openhal.DeviceRemovedParams{Device: e.Device, Reason: e.Reason}
	}
}

// broadcast sends a notification that is not a registry event (hal/blocked,
// hal/stopped, confirmations) to every ready connection that may see
// device ("" for all).
func (h *Hub) broadcast(method, device string, params any) {
	msg, err := jsonrpc.AppendNotification(nil, method, params)
	if err != nil {
		h.log.Error("encode notification", "method", method, "err", err)
		return
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	for s := range h.sessions {
		if !s.ready() {
			continue
		}
		if _, entry := s.who(); device != "" && !entry.Visible(device) {
			continue
		}
		s.notify(msg)
	}
}

// broadcastEach sends a notification whose params depend on what each
// token may see; tokens that see every device share one encoding.
func (h *Hub) broadcastEach(method string, params func(token.Entry) any) {
	var shared []byte
	h.mu.RLock()
	defer h.mu.RUnlock()
	for s := range h.sessions {
		if !s.ready() {
			continue
		}
		_, entry := s.who()
		msg := shared
		if len(entry.Devices) > 0 || shared == nil {
			var err error
			if msg, err = jsonrpc.AppendNotification(nil, method, params(entry)); err != nil {
				h.log.Error("encode notification", "method", method, "err", err)
				return
			}
			if len(entry.Devices) == 0 {
				shared = msg
			}
		}
		s.notify(msg)
	}
}
