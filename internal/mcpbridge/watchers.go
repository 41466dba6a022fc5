package mcpbridge

import (
	"encoding/json"
	"sync"
)

// watchers hand the Hub's notifications to the tool calls waiting for
// them (wait_for_value, confirmation_status), by key: "value:<device>" or
// "confirmation:<id>". A waiter holds the newest message only: it
// re-checks its condition on each, and an older value than the newest is
// of no use to it. A nil message means the connection was lost.
type watchers struct {
	mu   sync.Mutex
	next int
	subs map[string]map[int]chan json.RawMessage
}

func newWatchers() *watchers {
	return &watchers{subs: map[string]map[int]chan json.RawMessage{}}
}

// add registers a waiter for key; call the returned function when done.
// Register before reading the state a notification would change, so that
// no change falls between the read and the wait.
func (w *watchers) add(key string) (<-chan json.RawMessage, func()) {
	ch := make(chan json.RawMessage, 1)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.next++
	id := w.next
	if w.subs[key] == nil {
		w.subs[key] = map[int]chan json.RawMessage{}
	}
	w.subs[key][id] = ch
	return ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.subs[key], id)
		if len(w.subs[key]) == 0 {
			delete(w.subs, key)
		}
	}
}

// send gives msg to every waiter of key, replacing one it has not taken.
func (w *watchers) send(key string, msg json.RawMessage) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ch := range w.subs[key] {
		offer(ch, msg)
	}
}

// lost wakes every waiter with nil: the connection is gone.
func (w *watchers) lost() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range w.subs {
		for _, ch := range m {
			offer(ch, nil)
		}
	}
}

// offer puts msg in ch, dropping the message it holds if it is full.
// Only send and lost write to ch, under w.mu, so the second send cannot
// find it full again.
func offer(ch chan json.RawMessage, msg json.RawMessage) {
	select {
	case ch <- msg:
		return
	default:
	}
	select {
	case <-ch:
	default:
	}
	ch <- msg
}
