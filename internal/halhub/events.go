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
	h.eachAudience(e.Device, "notification", func(s *session, _ token.Entry) bool { return s.q.push(msg, nil) })
	h.tellSubscribers(method, e.Device, params)
}

// onValue queues a hal/value on every connection that sees its device,
// without the Hub-wide seq for a token limited to some devices.
func (h *Hub) onValue(e device.Event) {
	params := openhal.ValueResult{Device: e.Device, Value: e.Value, TS: e.TS, Seq: e.Seq, DevSeq: e.DevSeq}
	view := func(entry token.Entry) any { return valueFor(entry, params) }
	msgs := viewMessages{method: openhal.NotifyValue, view: view}
	h.stats.events.Add(1)
	h.eachAudience(e.Device, "value", func(s *session, entry token.Entry) bool {
		msg, err := msgs.encoded(entry)
		if err != nil {
			h.log.Error("encode notification", "method", openhal.NotifyValue, "device", e.Device, "err", err)
			return true
		}
		return s.q.pushValue(e.Device, msg)
	})
	h.tellSubscribersViews(openhal.NotifyValue, e.Device, view)
}

// eachAudience calls queue for every connection that may be sent a
// notification about device ("" for one about no device): it has sent
// hal/initialized (seed 3.1.1, 4: nothing before) and its token sees the
// device. queue runs under the Hub's lock, so it only queues; it reports
// false when the connection's queue had no room for the message, what
// (a "notification", a "value"). Those connections are closed once the
// lock is let go (overflow), never under it: closing one may take the
// Hub's lock itself — a WebSocket on an HTTP connection that holds a slot
// (AdmitHTTP) gives it back — and the registry's lock is held meanwhile
// (locksordering.txt).
func (h *Hub) eachAudience(device, what string, queue func(s *session, entry token.Entry) bool) {
	var full []*session // nil but for a client that stopped reading
	h.mu.RLock()
	for s := range h.sessions {
		s.mu.Lock()
		ready, entry := s.phase == phaseReady, s.entry
		s.mu.Unlock()
		if ready && (device == "" || entry.Visible(device)) && !queue(s, entry) {
			full = append(full, s)
		}
	}
	h.mu.RUnlock()
	for _, s := range full {
		s.overflow(what)
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
	h.eachAudience(device, "notification", func(s *session, _ token.Entry) bool { return s.q.push(msg, nil) })
	h.tellSubscribers(method, device, params)
}

// broadcastViews sends a notification about device whose params differ
// between a token that sees every device and one limited to some (view;
// seqview.go), each of the two encoded once.
func (h *Hub) broadcastViews(method, device string, view func(token.Entry) any) {
	msgs := viewMessages{method: method, view: view}
	h.eachAudience(device, "notification", func(s *session, entry token.Entry) bool {
		msg, err := msgs.encoded(entry)
		if err != nil {
			h.log.Error("encode notification", "method", method, "err", err)
			return true
		}
		return s.q.push(msg, nil)
	})
	h.tellSubscribersViews(method, device, view)
}

// broadcastEach sends a notification whose params depend on what each
// token may see; tokens that see every device share one encoding.
func (h *Hub) broadcastEach(method string, params func(token.Entry) any) {
	var shared []byte
	h.eachAudience("", "notification", func(s *session, entry token.Entry) bool {
		limited := len(entry.Devices) > 0
		msg := shared
		if limited || shared == nil {
			var err error
			if msg, err = jsonrpc.AppendNotification(nil, method, params(entry)); err != nil {
				h.log.Error("encode notification", "method", method, "err", err)
				return true
			}
			if !limited {
				shared = msg
			}
		}
		return s.q.push(msg, nil)
	})
	h.tellSubscribersEach(method, params)
}
