package mcpbridge

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/internal/halhub/hubtest"
	"github.com/openhal/gateway/openhal"
)

// TestToolErrors: each error of the Hub reaches the model as a tool error
// that names it (its code's name first) and says what to do next.
func TestToolErrors(t *testing.T) {
	fast := hubtest.Configure(func(o *halhub.Options) {
		o.Limits.ReadTimeout = 100 * time.Millisecond
		o.Limits.WriteTimeout = 100 * time.Millisecond
	})
	limit := 50.0
	rules := hubtest.Configure(func(o *halhub.Options) {
		o.Rules = map[string]device.Rules{"test.fan": {Maximum: &limit}}
	})
	noConfirm := hubtest.Configure(func(o *halhub.Options) { o.Level = openhal.LevelControl })
	slow := extra{desc: fan("test.slow").desc, hang: true} // answers nothing

	for _, tc := range []struct {
		name  string
		opts  []hubtest.Option
		setup func(t *testing.T, bench *hubtest.Bench, url string)
		tool  string
		args  map[string]any
		want  []string // the code's name first, then parts of the advice
	}{
		{name: "stopped", setup: stopBench,
			tool: toolWrite, args: map[string]any{"device": "sim.led", "value": true},
			want: []string{"STOPPED", "until a person lifts it", "Do not retry"}},
		{name: "blocked by a rule", opts: []hubtest.Option{rules},
			setup: func(t *testing.T, bench *hubtest.Bench, _ string) { bench.Add(fan("test.fan")) },
			tool:  toolWrite, args: map[string]any{"device": "test.fan", "value": 80},
			want: []string{"BLOCKED", "maximum", "safety rule", "do not work around the rule"}},
		{name: "forbidden", opts: []hubtest.Option{noConfirm},
			tool: toolWriteHigh, args: map[string]any{"device": "sim.heater", "value": true, "reason": "r"},
			want: []string{"FORBIDDEN", "cannot confirm writes", "does not let this agent", "A person decides"}},
		{name: "device fault", setup: func(t *testing.T, bench *hubtest.Bench, _ string) {
			bench.SetState("sim.temperature", device.StateOffline, "unplugged")
		},
			tool: toolRead, args: map[string]any{"device": "sim.temperature"},
			want: []string{"DEVICE_FAULT", "offline", "tell the user"}},
		{name: "read timeout", opts: []hubtest.Option{fast},
			setup: func(t *testing.T, bench *hubtest.Bench, _ string) { bench.Add(slow) },
			tool:  toolRead, args: map[string]any{"device": "test.slow"},
			want: []string{"TIMEOUT", "did not answer in time", "Read it before doing anything else"}},
		{name: "write timeout", opts: []hubtest.Option{fast},
			setup: func(t *testing.T, bench *hubtest.Bench, _ string) { bench.Add(slow) },
			tool:  toolWrite, args: map[string]any{"device": "test.slow", "value": 10},
			want: []string{"TIMEOUT", "state is unknown", "Read it before doing anything else"}},
		{name: "invalid value",
			tool: toolWrite, args: map[string]any{"device": "sim.led", "value": "on"},
			want: []string{"INVALID_PARAMS", "sim.led", "Nothing was changed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bench, url := newBench(t, tc.opts...)
			if tc.setup != nil {
				tc.setup(t, bench, url)
			}
			b := newBridge(t, url, bench.Agent, false)
			c := connect(t, b, clientOptions{})
			got := c.failing(t, tc.tool, tc.args, tc.want...)
			if !strings.HasPrefix(got, tc.want[0]+": ") {
				t.Errorf("tool error %q, want it to start with %s", got, tc.want[0])
			}
		})
	}
}

// stopBench engages the emergency stop as an admin.
func stopBench(t *testing.T, bench *hubtest.Bench, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	if _, err := hubWatcher(t, url, bench.Admin).Stop(ctx, "test"); err != nil {
		t.Fatal(err)
	}
}

// TestDeviceNotFound: a device the bridge does not know is refused by the
// tool's schema before the Hub is asked; one the Hub no longer has (gone
// between the bridge's list and the call) is DEVICE_NOT_FOUND with the
// way to the current list.
func TestDeviceNotFound(t *testing.T) {
	bench, url := newBench(t)
	b := newBridge(t, url, bench.Agent, false)
	c := connect(t, b, clientOptions{})
	c.failing(t, toolRead, map[string]any{"device": "sim.nosuch"}, "device")

	conn, err := b.hub()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	_, err = conn.Read(ctx, "sim.nosuch", -1)
	if err == nil {
		t.Fatal("the Hub read sim.nosuch")
	}
	got := b.toolError(err, openhal.MethodRead, "sim.nosuch").Error()
	for _, want := range []string{"DEVICE_NOT_FOUND: ", "sim.nosuch", "list_devices shows the devices"} {
		if !strings.Contains(got, want) {
			t.Errorf("tool error %q, want it to say %q", got, want)
		}
	}
}
