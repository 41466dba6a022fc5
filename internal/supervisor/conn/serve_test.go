package conn

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/supervisor/eventq"
	"github.com/openhal/gateway/jsonrpc"
)

// The adapter's requests reach the handler and are answered with their
// own ids; notifications reach it in order; without a handler, -32601.
func TestAdapterRequests(t *testing.T) {
	cfg := seedConfig()
	h := newHandler()
	h.answer = func(method string, params json.RawMessage) (any, *jsonrpc.Error) {
		if method == "device.write" {
			return nil, &jsonrpc.Error{Code: -32003, Message: "denied", Data: map[string]any{"code": "E_ADAPTER_DENIED"}}
		}
		return map[string]any{"devices": []any{}}, nil
	}
	cfg.Handler = h
	f := newFixture(t, cfg)
	f.ready()
	f.peer.send(`{"jsonrpc":"2.0","id":1,"method":"devices.list","params":{}}`)
	if got := f.peer.next(); got != `{"jsonrpc":"2.0","id":1,"result":{"devices":[]}}` {
		t.Fatalf("answer %s", got)
	}
	f.peer.send(`{"jsonrpc":"2.0","id":2,"method":"device.write","params":{"device":"sim.led","value":true}}`)
	if got := f.peer.next(); got != `{"jsonrpc":"2.0","id":2,"error":{"code":-32003,"message":"denied","data":{"code":"E_ADAPTER_DENIED"}}}` {
		t.Fatalf("answer %s", got)
	}
	f.peer.send(`{"jsonrpc":"2.0","method":"value.publish","params":{"device":"t","value":1}}`)
	<-h.noted
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.notes) != 1 || h.notes[0] != `value.publish {"device":"t","value":1}` {
		t.Fatalf("notes %q", h.notes)
	}
}

func TestAdapterRequestWithoutHandler(t *testing.T) {
	f := newFixture(t, seedConfig())
	f.ready()
	f.peer.send(`{"jsonrpc":"2.0","id":5,"method":"devices.list"}`)
	m := f.peer.msg()
	if m.Error == nil || m.Error.Code != jsonrpc.CodeMethodNotFound {
		t.Fatalf("answer %+v, want -32601", m)
	}
}

// Events go out in order with their seq; a full queue drops the newest
// and the next event delivered carries the count.
func TestEvents(t *testing.T) {
	cfg := seedConfig()
	q := eventq.New(2)
	cfg.Events = q
	f := newFixture(t, cfg)
	// Queued before the connection is ready: they wait for initialized.
	q.Push(eventq.Event{Type: "value", Data: json.RawMessage(`{"device":"a","value":1}`)})
	q.Push(eventq.Event{Type: "value", Data: json.RawMessage(`{"device":"a","value":2}`)})
	q.Push(eventq.Event{Type: "value", Data: json.RawMessage(`{"device":"a","value":3}`)}) // dropped
	f.ready()
	// The drop happened before this delivery: it carries the count.
	if got := f.peer.next(); got != `{"jsonrpc":"2.0","method":"event","params":{"seq":1,"type":"value","data":{"device":"a","value":1},"dropped":1}}` {
		t.Fatalf("event %s", got)
	}
	if got := f.peer.next(); got != `{"jsonrpc":"2.0","method":"event","params":{"seq":2,"type":"value","data":{"device":"a","value":2}}}` {
		t.Fatalf("event %s", got)
	}
	q.Push(eventq.Event{Type: "stopped", Data: json.RawMessage(`{"reason":"x"}`)})
	if got := f.peer.next(); got != `{"jsonrpc":"2.0","method":"event","params":{"seq":3,"type":"stopped","data":{"reason":"x"}}}` {
		t.Fatalf("event %s", got)
	}
}

// Shutdown writes the queued events first, then shutdown; its channel
// closes on the reply.
func TestShutdownAfterEvents(t *testing.T) {
	cfg := seedConfig()
	q := eventq.New(16)
	cfg.Events = q
	f := newFixture(t, cfg)
	c := f.ready()
	for i := 0; i < 5; i++ {
		q.Push(eventq.Event{Type: "value", Data: json.RawMessage(`{}`)})
	}
	done := make(chan (<-chan struct{}), 1)
	go func() { done <- c.Shutdown(time.Second) }()
	for i := 1; i <= 5; i++ {
		if m := f.peer.msg(); m.Method != "event" {
			t.Fatalf("frame %d: %s, want event", i, m.Method)
		}
	}
	m := f.peer.msg()
	if m.Method != "shutdown" || string(m.Params) != "{}" {
		t.Fatalf("got %s %s, want shutdown {}", m.Method, m.Params)
	}
	var replied <-chan struct{}
	select {
	case replied = <-done:
	case <-time.After(wait):
		t.Fatal("Shutdown did not return once shutdown was written")
	}
	if q.Push(eventq.Event{Type: "value"}) != true {
		t.Fatal("an event was queued during the stop")
	}
	select {
	case <-replied:
		t.Fatal("replied before the reply")
	default:
	}
	f.peer.answer(m, `{}`)
	select {
	case <-replied:
	case <-time.After(wait):
		t.Fatal("the reply was not seen")
	}
}

// An adapter that does not read: Shutdown returns within its budget.
func TestShutdownBudget(t *testing.T) {
	cfg := seedConfig()
	q := eventq.New(16)
	cfg.Events = q
	f := newFixture(t, cfg)
	c := f.ready()
	// Fill the pipe so that the writer blocks.
	big := make([]byte, 200<<10)
	for i := range big {
		big[i] = 'a'
	}
	q.Push(eventq.Event{Type: "value", Data: json.RawMessage(`"` + string(big) + `"`)})
	done := make(chan (<-chan struct{}), 1)
	go func() { done <- c.Shutdown(time.Second) }()
	f.waitTimers(2) // the ping and the budget
	f.clk.Advance(time.Second)
	select {
	case <-done:
	case <-time.After(wait):
		t.Fatal("Shutdown outlived its budget")
	}
}
