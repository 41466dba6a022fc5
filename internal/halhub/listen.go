package halhub

import (
	"bytes"
	"encoding/json"

	"github.com/openhal/gateway/internal/halhub/token"
)

// listener is an in-process audience of the Hub's notifications.
type listener struct {
	entry token.Entry
	fn    func(method, device string, params json.RawMessage)
}

// Listen calls fn for every notification that entry may see, as a client
// connection with that token would get it (hal/value, hal/deviceState,
// hal/blocked, hal/stopped, ...): a supervised service adapter's events.
// device is the device the notification is about, "" for none.
// fn runs under the Hub's locks, in seq order for values, so it must only
// queue; params are shared between listeners and must not be changed.
// The returned function ends the subscription.
func (h *Hub) Listen(entry token.Entry, fn func(method, device string, params json.RawMessage)) (cancel func()) {
	l := &listener{entry: entry, fn: fn}
	h.mu.Lock()
	if h.listeners == nil {
		h.listeners = map[*listener]struct{}{}
	}
	h.listeners[l] = struct{}{}
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		delete(h.listeners, l)
		h.mu.Unlock()
	}
}

// tellListeners hands a notification about device ("" for none) to every
// listener that may see it, encoding its params once.
func (h *Hub) tellListeners(method, device string, params any) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	var raw json.RawMessage
	for l := range h.listeners {
		if device != "" && !l.entry.Visible(device) {
			continue
		}
		if raw == nil {
			var err error
			if raw, err = encodeParams(params); err != nil {
				h.log.Error("encode notification", "method", method, "err", err)
				return
			}
		}
		l.fn(method, device, raw)
	}
}

// tellListenersEach is tellListeners for a notification whose params
// depend on what each entry may see (hal/stopped).
func (h *Hub) tellListenersEach(method string, params func(token.Entry) any) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	for l := range h.listeners {
		raw, err := encodeParams(params(l.entry))
		if err != nil {
			h.log.Error("encode notification", "method", method, "err", err)
			return
		}
		l.fn(method, "", raw)
	}
}

// tellListenersViews is tellListeners for params that differ between a
// token that sees every device and one limited to some (view; values:
// seqview.go), each of the two encoded once.
func (h *Hub) tellListenersViews(method, device string, view func(token.Entry) any) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	var raws [2]json.RawMessage // [0]: every device, [1]: limited
	for l := range h.listeners {
		if device != "" && !l.entry.Visible(device) {
			continue
		}
		i := 0
		if limitedView(l.entry) {
			i = 1
		}
		if raws[i] == nil {
			var err error
			if raws[i], err = encodeParams(view(l.entry)); err != nil {
				h.log.Error("encode notification", "method", method, "err", err)
				return
			}
		}
		l.fn(method, device, raws[i])
	}
}

// encodeParams encodes as the wire does: no HTML escaping, no newline.
func encodeParams(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
