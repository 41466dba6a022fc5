package mcpbridge

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/internal/halhub/hubtest"
)

// TestConditionHolds: wait_for_value's conditions on the values a device
// has (JSON-decoded: bool, string, float64, map), and the ones that cannot
// be decided at all.
func TestConditionHolds(t *testing.T) {
	two := map[string]any{"temperature": 20.5, "humidity": 40.0}
	for _, tc := range []struct {
		name  string
		cond  condition
		value any
		want  bool
		err   string // a part of the error, when the condition cannot be decided
	}{
		{"eq bool", condition{op: "eq", want: true}, true, true, ""},
		{"eq bool not", condition{op: "eq", want: true}, false, false, ""},
		{"ne bool", condition{op: "ne", want: true}, false, true, ""},
		{"eq string", condition{op: "eq", want: "idle"}, "idle", true, ""},
		{"ne string", condition{op: "ne", want: "idle"}, "idle", false, ""},
		{"eq number is not a string", condition{op: "eq", want: "1"}, 1.0, false, ""},
		{"lt", condition{op: "lt", want: 10.0}, 9.5, true, ""},
		{"lt at", condition{op: "lt", want: 10.0}, 10.0, false, ""},
		{"le at", condition{op: "le", want: 10.0}, 10.0, true, ""},
		{"gt", condition{op: "gt", want: 10.0}, 10.5, true, ""},
		{"gt at", condition{op: "gt", want: 10.0}, 10.0, false, ""},
		{"ge at", condition{op: "ge", want: 10.0}, 10.0, true, ""},
		{"ge below", condition{op: "ge", want: 10.0}, 9.0, false, ""},
		{"quantity named", condition{op: "ge", want: 40.0, quantity: "humidity"}, two, true, ""},
		{"quantity named, not met", condition{op: "gt", want: 21.0, quantity: "temperature"}, two, false, ""},
		{"the only quantity", condition{op: "gt", want: 20.0}, map[string]any{"temperature": 20.5}, true, ""},
		{"quantity not named of two", condition{op: "gt", want: 20.0}, two, false, "name the quantity to compare: one of humidity, temperature"},
		{"quantity it has not", condition{op: "gt", want: 20.0, quantity: "pressure"}, two, false, "one of humidity, temperature"},
		{"quantity of a plain value", condition{op: "gt", want: 20.0, quantity: "temperature"}, 21.0, false, `has no quantity "temperature"`},
		{"order on a boolean", condition{op: "lt", want: true}, false, false, "lt compares numbers"},
		{"order against a string", condition{op: "ge", want: "10"}, 12.0, false, "ge compares numbers"},
		{"unknown op", condition{op: "about", want: 1.0}, 1.0, false, `unknown op "about"`},
		{"changes: same", condition{op: "changes", base: false}, false, false, ""},
		{"changes: new", condition{op: "changes", base: false}, true, true, ""},
		{"changes: same object", condition{op: "changes", base: map[string]any{"t": 1.0}}, map[string]any{"t": 1.0}, false, ""},
		{"changes: new object", condition{op: "changes", base: map[string]any{"t": 1.0}}, map[string]any{"t": 2.0}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.cond.holds(tc.value)
			switch {
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("holds(%v): %v, want an error saying %q", tc.value, err, tc.err)
			case tc.err == "" && err != nil:
				t.Fatalf("holds(%v): %v", tc.value, err)
			case got != tc.want:
				t.Fatalf("holds(%v) = %v, want %v", tc.value, got, tc.want)
			}
		})
	}
}

// waitResult is wait_for_value's structured content.
type waitResult struct {
	Met    bool `json:"met"`
	Value  any  `json:"value"`
	Device string
}

// startWait calls wait_for_value in the background; its result comes on
// the channel (nil for a protocol error).
func startWait(c *client, args map[string]any) <-chan *mcp.CallToolResult {
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		r, _ := c.CallTool(context.Background(), &mcp.CallToolParams{Name: toolWait, Arguments: args})
		done <- r
	}()
	return done
}

// hubWatcher is the test's own connection to the Hub, on which it sees
// every value the Hub publishes, in order and none coalesced.
func hubWatcher(t *testing.T, url, tok string) *halclient.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	conn, err := halclient.Dial(ctx, url, halclient.Options{Token: tok, ClientName: "watcher"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	// The Hub sends values to a connection once it has read its
	// hal/initialized; an answer to a later request shows it has.
	if _, err := conn.Devices(ctx); err != nil {
		t.Fatal(err)
	}
	return conn
}

// nextValue waits for the next hal/value of device id on conn.
func nextValue(t *testing.T, conn *halclient.Conn, id string) {
	t.Helper()
	for {
		n := within(t, conn.Notifications(), "a value of "+id)
		var p struct{ Device string }
		if n.Method == "hal/value" && json.Unmarshal(n.Params, &p) == nil && p.Device == id {
			return
		}
	}
}

// waitStarted waits until a wait on sim.door has read the door: its read
// measures the sensor, and the Hub publishes the measurement. From then
// on, only a notification can meet the condition.
func waitStarted(t *testing.T, watcher *halclient.Conn) {
	t.Helper()
	nextValue(t, watcher, "sim.door")
}

// TestWaitForValue: the tool answers at once when the value already
// meets the condition, on a later value when one does, with met=false
// (not an error) at its timeout, and with a tool error for a condition
// that cannot be decided.
func TestWaitForValue(t *testing.T) {
	bench, url := newBench(t)
	b := newBridge(t, url, bench.Agent, false)
	c := connect(t, b, clientOptions{})
	watcher := hubWatcher(t, url, bench.Admin)

	var w waitResult
	c.ok(t, toolWait, map[string]any{"device": "sim.temperature", "op": "lt", "value": 21, "timeoutSeconds": 1}, &w)
	if !w.Met {
		t.Fatalf("sim.temperature lt 21 (it is 20.5): %+v", w)
	}

	for _, tc := range []struct {
		op    string
		value any
	}{
		{"eq", true},
		{"changes", nil},
	} {
		args := map[string]any{"device": "sim.door", "op": tc.op, "timeoutSeconds": 30}
		if tc.value != nil {
			args["value"] = tc.value
		}
		done := startWait(c, args)
		waitStarted(t, watcher)
		bench.Set("sim.door", true)
		r := within(t, done, "wait_for_value sim.door "+tc.op)
		if r == nil || r.IsError {
			t.Fatalf("wait_for_value sim.door %s: %+v", tc.op, r)
		}
		decode(t, r, &w)
		if !w.Met || w.Value != true {
			t.Fatalf("wait_for_value sim.door %s after it opened: %+v", tc.op, w)
		}
		nextValue(t, watcher, "sim.door") // the door opening
		bench.Set("sim.door", false)
		nextValue(t, watcher, "sim.door") // and closing
	}

	text := c.ok(t, toolWait, map[string]any{"device": "sim.led", "op": "eq", "value": true, "timeoutSeconds": 1}, &w)
	if w.Met || w.Value != false || !strings.Contains(text, "Not met within the timeout") || !strings.Contains(text, "Nothing failed") {
		t.Fatalf("wait_for_value sim.led eq true, never met: %q %+v", text, w)
	}

	c.failing(t, toolWait, map[string]any{"device": "sim.led", "op": "ge", "value": 1}, "ge compares numbers")
	c.failing(t, toolWait, map[string]any{"device": "sim.led", "op": "eq"}, `op "eq" needs a value`)
	c.failing(t, toolWait, map[string]any{"device": "sim.temperature", "op": "gt", "value": 1, "quantity": "humidity"}, "name the quantity")
}

// TestWaitLostConnection: a wait ends with a tool error when the
// connection to the Hub is lost, not at its timeout.
func TestWaitLostConnection(t *testing.T) {
	cut := &cutter{}
	bench, url := newBench(t, hubtest.WrapListener(cut.wrap))
	b := newBridge(t, url, bench.Agent, true)
	c := connect(t, b, clientOptions{})
	watcher := hubWatcher(t, url, bench.Admin)

	done := startWait(c, map[string]any{"device": "sim.door", "op": "eq", "value": true, "timeoutSeconds": 55})
	waitStarted(t, watcher)
	// A read on the same connection, answered after the wait's own read:
	// the wait has its answer and waits for notifications.
	c.ok(t, toolRead, map[string]any{"device": "sim.led"}, nil)
	cut.cut()
	r := within(t, done, "the wait to end with the connection")
	if r == nil || !r.IsError || !strings.Contains(text(r), "lost while waiting") {
		t.Fatalf("wait_for_value when the connection was lost: %+v", r)
	}
}
