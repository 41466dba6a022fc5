package mcpbridge

import (
	"strings"
	"testing"
)

// TestConfirmationStatusSuperseded: confirmation_status shows a pending
// request with the device's value now beside the one asked for; once the
// agent turns the heater off itself, the request is superseded — it will
// never be applied — and says by whose write of what.
func TestConfirmationStatusSuperseded(t *testing.T) {
	bench, url := newBench(t)
	c := connect(t, newBridge(t, url, bench.Agent, false), clientOptions{})
	id := pendingHeater(t, c, "preheat for run 7")

	var v confirmationView
	text := c.ok(t, toolConfirmation, map[string]any{"id": id}, &v)
	if v.Status != "pending" || v.Value != true || v.Current != false || !strings.Contains(text, "sim.heater is false now") {
		t.Fatalf("pending: %q %+v, want true asked beside false now", text, v)
	}

	var w writeOut
	c.ok(t, toolWriteHigh, map[string]any{"device": "sim.heater", "value": false, "reason": "changed my mind"}, &w)
	if w.Status != "applied" {
		t.Fatalf("heater off: %+v", w)
	}
	v = confirmationView{}
	text = c.ok(t, toolConfirmation, map[string]any{"id": id}, &v)
	s := v.SupersededBy
	if v.Status != "superseded" || s == nil || s.By != "agent bench-agent" || s.Value != false || s.Request != "" || v.Current != nil ||
		!strings.Contains(text, "never be applied") || !strings.Contains(text, "agent bench-agent's write of false") {
		t.Fatalf("superseded: %q %+v (by %+v)", text, v, s)
	}

	// Asking again replaces the older request.
	first := pendingHeater(t, c, "preheat for run 8")
	second := pendingHeater(t, c, "preheat for run 8, really")
	v = confirmationView{}
	text = c.ok(t, toolConfirmation, map[string]any{"id": first}, &v)
	if v.Status != "superseded" || v.SupersededBy == nil || v.SupersededBy.Request != second || !strings.Contains(text, "Follow "+second) {
		t.Fatalf("replaced: %q %+v", text, v)
	}
}
