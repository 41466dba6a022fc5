package halhub

import (
	"bytes"
	"encoding/json"

	"github.com/openhal/gateway/internal/halhub/token"
)

// subscriber is an in-process audience of the Hub's notifications.
type subscriber struct {
	entry token.Entry
	fn    func(method, device string, params json.RawMessage)
}

// Subscribe calls fn for every notification that entry may see, as a client
// connection with that token would get it (hal/value, hal/deviceState,
// hal/blocked, hal/stopped, ...): a supervised service adapter's events.
// device is the device the notification is about, "" for none.
// fn runs under the Hub's lock and the registry's (locksordering.txt), in
// seq order for values, so it must only queue: never call the Hub or the
// registry. params are shared between subscribers and must not be
// changed.
// The returned function ends the subscription.
func (h *Hub) Subscribe(entry token.Entry, fn func(method, device string, params json.RawMessage)) (cancel func()) {
	sub := &subscriber{entry: entry, fn: fn}
	h.mu.Lock()
	if h.subscribers == nil {
		h.subscribers = map[*subscriber]struct{}{}
	}
	h.subscribers[sub] = struct{}{}
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		delete(h.subscribers, sub)
		h.mu.Unlock()
	}
}

// tellSubscribers hands a notification about device ("" for none) to every
// subscriber that may see it, encoding its params once.
func (h *Hub) tellSubscribers(method, device string, params any) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	var raw json.RawMessage
	for sub := range h.subscribers {
		if device != "" && !sub.entry.Visible(device) {
			continue
		}
		if raw == nil {
			var err error
			if raw, err = encodeParams(params); err != nil {
				h.log.Error("encode notification", "method", method, "err", err)
				return
			}
		}
		sub.fn(method, device, raw)
	}
}

// tellSubscribersEach is tellSubscribers for a notification whose params
// depend on what each entry may see (hal/stopped).
func (h *Hub) tellSubscribersEach(method string, params func(token.Entry) any) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	for sub := range h.subscribers {
		raw, err := encodeParams(params(sub.entry))
		if err != nil {
			h.log.Error("encode notification", "method", method, "err", err)
			return
		}
		sub.fn(method, "", raw)
	}
}

// tellSubscribersViews is tellSubscribers for params that differ between a
// token that sees every device and one limited to some (view; values:
// seqview.go), each of the two encoded once.
func (h *Hub) tellSubscribersViews(method, device string, view func(token.Entry) any) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	var raws [2]json.RawMessage // [0]: every device, [1]: limited
	for sub := range h.subscribers {
		if device != "" && !sub.entry.Visible(device) {
			continue
		}
		i := 0
		if limitedView(sub.entry) {
			i = 1
		}
		if raws[i] == nil {
			var err error
			if raws[i], err = encodeParams(view(sub.entry)); err != nil {
				h.log.Error("encode notification", "method", method, "err", err)
				return
			}
		}
		sub.fn(method, device, raws[i])
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
