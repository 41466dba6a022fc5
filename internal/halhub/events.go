package halhub

import (
	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/halhub/token"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// onEvent turns one registry event into a notification, encoded once (a
// value once per view: seqview.go), and queues it on every connection
// that may see it. It runs under the registry's lock (events arrive in
// seq order), so it only queues.
func (h *Hub) onEvent(e device.Event) {
	h.noteSafety(e)
	if e.Kind == device.EventValue {
		h.onValue(e)
		return
	}
	method, params := notificationOf(e)
	msg, err := jsonrpc.AppendNotification(nil, method, params)
	if err != nil {
		h.log.Error("encode notification", "method", method, "device", e.Device, "err", err)
		return
	}
	h.stats.events.Add(1)
	h.eachAudience(e.Device, func(s *session, _ token.Entry) { s.notify(msg) })
	h.tellListeners(method, e.Device, params)
}

// onValue queues a hal/value on every connection that sees its device,
// without the Hub-wide seq for a token limited to some devices.
func (h *Hub) onValue(e device.Event) {
	params := openhal.ValueResult{Device: e.Device, Value: e.Value, TS: e.TS, Seq: e.Seq, DevSeq: e.DevSeq}
	view := func(entry token.Entry) any { return valueFor(entry, params) }
	msgs := viewMessages{method: openhal.NotifyValue, view: view}
	h.stats.events.Add(1)
	h.eachAudience(e.Device, func(s *session, entry token.Entry) {
		msg, err := msgs.encoded(entry)
		if err != nil {
			h.log.Error("encode notification", "method", openhal.NotifyValue, "device", e.Device, "err", err)
			return
		}
		s.notifyValue(e.Device, msg)
	})
	h.tellListenersViews(openhal.NotifyValue, e.Device, view)
}

// eachAudience calls fn for every connection that may be sent a
// notification about device ("" for one about no device): it has sent
// hal/initialized (seed 3.1.1, 4: nothing before) and its token sees the
// device. fn runs under the Hub's lock, so it only queues.
func (h *Hub) eachAudience(device string, fn func(s *session, entry token.Entry)) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	for s := range h.sessions {
		s.mu.Lock()
		ready, entry := s.phase == phaseReady, s.entry
		s.mu.Unlock()
		if ready && (device == "" || entry.Visible(device)) {
			fn(s, entry)
		}
	}
}

func notificationOf(e device.Event) (string, any) {
	switch e.Kind {
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
	h.eachAudience(device, func(s *session, _ token.Entry) { s.notify(msg) })
	h.tellListeners(method, device, params)
}

// broadcastViews sends a notification about device whose params differ
// between a token that sees every device and one limited to some (view;
// seqview.go), each of the two encoded once.
func (h *Hub) broadcastViews(method, device string, view func(token.Entry) any) {
	msgs := viewMessages{method: method, view: view}
	h.eachAudience(device, func(s *session, entry token.Entry) {
		msg, err := msgs.encoded(entry)
		if err != nil {
			h.log.Error("encode notification", "method", method, "err", err)
			return
		}
		s.notify(msg)
	})
	h.tellListenersViews(method, device, view)
}

// broadcastEach sends a notification whose params depend on what each
// token may see; tokens that see every device share one encoding.
func (h *Hub) broadcastEach(method string, params func(token.Entry) any) {
	var shared []byte
	h.eachAudience("", func(s *session, entry token.Entry) {
		limited := len(entry.Devices) > 0
		msg := shared
		if limited || shared == nil {
			var err error
			if msg, err = jsonrpc.AppendNotification(nil, method, params(entry)); err != nil {
				h.log.Error("encode notification", "method", method, "err", err)
				return
			}
			if !limited {
				shared = msg
			}
		}
		s.notify(msg)
	})
	h.tellListenersEach(method, params)
}
