package mcpbridge

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// asker is a client's elicitation handler whose answers the test gives:
// each question comes on asked, and waits for its action on answer.
type asker struct {
	asked     chan *mcp.ElicitRequest
	answer    chan string
	withdrawn chan struct{} // a question the server took back
}

func newAsker() *asker {
	return &asker{asked: make(chan *mcp.ElicitRequest, 10), answer: make(chan string), withdrawn: make(chan struct{}, 10)}
}

func (a *asker) handle(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	a.asked <- r
	select {
	case action := <-a.answer:
		return &mcp.ElicitResult{Action: action, Content: map[string]any{}}, nil
	case <-ctx.Done():
		a.withdrawn <- struct{}{}
		return nil, ctx.Err()
	}
}

// pendingHeater asks to switch the heater on, which a control_low agent
// may not do alone, and returns the request's id.
func pendingHeater(t *testing.T, c *client, reason string) string {
	t.Helper()
	var w writeOut
	text := c.ok(t, toolWriteHigh, map[string]any{"device": "sim.heater", "value": true, "reason": reason}, &w)
	if w.Status != "pending" || w.Confirmation == nil || !strings.Contains(text, "NOT APPLIED") {
		t.Fatalf("heater write: %q %+v, want pending", text, w)
	}
	return w.Confirmation.ID
}

// confirmationStatus is a request's status as confirmation_status says
// it, after waiting up to wait seconds for it to be resolved.
func confirmationStatus(t *testing.T, c *client, id string, wait int) string {
	t.Helper()
	var v confirmationView
	c.ok(t, toolConfirmation, map[string]any{"id": id, "waitSeconds": wait}, &v)
	return v.Status
}

// TestElicitation: over 2025-06-18, a pending high-risk write makes the
// bridge ask the user in their client, naming the device and where a
// person approves; a decline there withdraws the request, an accept
// approves nothing.
func TestElicitation(t *testing.T) {
	bench, url := newBench(t)
	b := newBridge(t, url, bench.Agent, false)
	a := newAsker()
	c := connect(t, b, clientOptions{version: proto0618, elicit: a.handle})

	declined := pendingHeater(t, c, "preheat for run 7")
	q := within(t, a.asked, "the question of a pending write")
	for _, want := range []string{"sim.heater", "true", "preheat for run 7", "http://bench.example/", "gateway confirm approve " + declined, "approves nothing"} {
		if !strings.Contains(q.Params.Message, want) {
			t.Errorf("question %q, want it to say %q", q.Params.Message, want)
		}
	}
	a.answer <- "decline"
	if got := confirmationStatus(t, c, declined, 30); got != "cancelled" {
		t.Fatalf("request %s after a decline: %s, want cancelled", declined, got)
	}

	accepted := pendingHeater(t, c, "preheat for run 8")
	within(t, a.asked, "the question of the second write")
	a.answer <- "accept"
	// A third request declined, as far as the bridge goes: by the time it
	// is cancelled, the bridge has long done whatever it does with the
	// accept before it. Asking again for the heater, it replaced the
	// accepted request: superseded, never approved.
	third := pendingHeater(t, c, "preheat for run 9")
	within(t, a.asked, "the question of the third write")
	a.answer <- "decline"
	if got := confirmationStatus(t, c, third, 30); got != "cancelled" {
		t.Fatalf("request %s after a decline: %s, want cancelled", third, got)
	}
	if got := confirmationStatus(t, c, accepted, 0); got != "superseded" {
		t.Fatalf("request %s after an accept: %s, want superseded by the third, not approved", accepted, got)
	}
	var v valueOut
	c.ok(t, toolRead, map[string]any{"device": "sim.heater"}, &v)
	if v.Value != false {
		t.Fatalf("sim.heater %v after an accept, want false: nothing approved", v.Value)
	}
}

// TestElicitationResolvedElsewhere: a question whose request a person
// resolves elsewhere (an admin approves it) is taken back from the
// client, and the write is applied.
func TestElicitationResolvedElsewhere(t *testing.T) {
	bench, url := newBench(t)
	b := newBridge(t, url, bench.Agent, false)
	a := newAsker()
	c := connect(t, b, clientOptions{version: proto0618, elicit: a.handle})
	id := pendingHeater(t, c, "preheat")
	within(t, a.asked, "the question of a pending write")
	admin := hubWatcher(t, url, bench.Admin)
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	if _, err := admin.Approve(ctx, id); err != nil {
		t.Fatalf("an admin approves %s: %v", id, err)
	}
	within(t, a.withdrawn, "the question taken back once approved")
	if got := confirmationStatus(t, c, id, 0); got != "approved" {
		t.Fatalf("request %s: %s, want approved", id, got)
	}
}

// TestElicitationNewest: over the newest revision the bridge asks nothing
// (the SDK sends it no elicitation there), and the pending write and its
// follow-up work as without.
func TestElicitationNewest(t *testing.T) {
	bench, url := newBench(t)
	b := newBridge(t, url, bench.Agent, false)
	a := newAsker()
	c := connect(t, b, clientOptions{version: protoNewest, elicit: a.handle})
	id := pendingHeater(t, c, "preheat")
	if got := confirmationStatus(t, c, id, 0); got != "pending" {
		t.Fatalf("request %s: %s, want pending", id, got)
	}
	select {
	case q := <-a.asked:
		t.Fatalf("asked %q over %s", q.Params.Message, protoNewest)
	case <-time.After(quiet):
	}
}
