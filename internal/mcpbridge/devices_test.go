package mcpbridge

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/halhub/hubtest"
)

// extra is a device a test adds to the bench: writable when its access
// says so, and read as 0, or (hang) never answering a read or a write
// until the Hub's deadline.
type extra struct {
	desc device.Descriptor
	hang bool
}

func (d extra) Descriptor() device.Descriptor { return d.desc }

func (d extra) Read(ctx context.Context) (device.Reading, error) {
	if d.hang {
		<-ctx.Done()
		return device.Reading{}, ctx.Err()
	}
	return device.Reading{Value: 0.0, TS: hubtest.Time}, nil
}

func (d extra) Write(ctx context.Context, _ device.WriteRequest) (device.WriteResult, error) {
	if d.hang {
		<-ctx.Done()
		return device.WriteResult{}, ctx.Err()
	}
	return device.WriteResult{}, nil
}

// fan is a low-risk number output of 0 to 100 %.
func fan(id string) extra {
	lo, hi := 0.0, 100.0
	return extra{desc: device.Descriptor{ID: id, Label: "Cooling fan", Kind: device.KindPWM, Source: "test",
		Access: device.AccessReadWrite, Risk: device.RiskLow,
		Schema: device.Schema{Type: device.TypeNumber, Minimum: &lo, Maximum: &hi, Unit: "%"}}}
}

// Tool names of a control_low token on the plain bench.
var benchTools = []string{toolConfirmation, toolStop, toolList, toolRead, toolWait, toolWrite, toolWriteHigh}

func sortedKeys[V any](m map[string]V) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	slices.Sort(k)
	return k
}

// TestDevicesComeAndGo: the tools and resources follow the Hub's devices
// — a device added is in the write tool's enum and description, one
// removed leaves them, a tool whose last device went is withdrawn — and
// each of those changes reaches the client as tools/list_changed, over
// both protocol revisions.
func TestDevicesComeAndGo(t *testing.T) {
	for _, version := range []string{protoNewest, proto0618} {
		t.Run(version, func(t *testing.T) {
			bench, url := newBench(t)
			b := newBridge(t, url, bench.Agent, false)
			c := connect(t, b, clientOptions{version: version})
			if got := sortedKeys(c.tools(t)); !slices.Equal(got, benchTools) {
				t.Fatalf("tools %v, want %v", got, benchTools)
			}
			if n := len(c.resources(t)); n != 5 {
				t.Fatalf("%d resources, want the bench and its 4 devices", n)
			}

			bench.Add(fan("test.fan"))
			within(t, c.toolsChanged, "tools/list_changed after a device came")
			until(t, c.toolsChanged, "write_device and read_device with test.fan", func() string {
				tools := c.tools(t)
				w, r := tools[toolWrite], tools[toolRead]
				if !slices.Contains(deviceEnum(t, w), "test.fan") || !strings.Contains(w.Description, "test.fan: number 0 to 100 %") ||
					!slices.Contains(deviceEnum(t, r), "test.fan") {
					return fmt.Sprintf("write_device's enum %v, description %q; read_device's enum %v", deviceEnum(t, w), w.Description, deviceEnum(t, r))
				}
				return ""
			})
			within(t, c.resChanged, "resources/list_changed after a device came")
			until(t, c.resChanged, "test.fan's resource", func() string {
				if uris := c.resources(t); !slices.Contains(uris, b.deviceURI("test.fan")) {
					return fmt.Sprint("resources ", uris)
				}
				return ""
			})

			removeDevice(t, bench, "test.fan")
			within(t, c.toolsChanged, "tools/list_changed after a device went")
			until(t, c.toolsChanged, "write_device without test.fan", func() string {
				if e := deviceEnum(t, c.tools(t)[toolWrite]); slices.Contains(e, "test.fan") {
					return fmt.Sprint("write_device's enum ", e)
				}
				return ""
			})
			within(t, c.resChanged, "resources/list_changed after a device went")
			until(t, c.resChanged, "no resource of test.fan", func() string {
				if uris := c.resources(t); slices.Contains(uris, b.deviceURI("test.fan")) {
					return fmt.Sprint("resources ", uris)
				}
				return ""
			})

			removeDevice(t, bench, "sim.heater")
			within(t, c.toolsChanged, "tools/list_changed after the only high-risk device went")
			until(t, c.toolsChanged, "write_device and no write_high_risk_device", func() string {
				if got := c.tools(t); got[toolWriteHigh] != nil || got[toolWrite] == nil {
					return fmt.Sprint("tools ", sortedKeys(got))
				}
				return ""
			})
			_, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: toolWriteHigh,
				Arguments: map[string]any{"device": "sim.heater", "value": true, "reason": "r"}})
			if err == nil || !strings.Contains(err.Error(), "unknown tool") {
				t.Fatalf("write_high_risk_device after it was withdrawn: %v, want unknown tool", err)
			}
		})
	}
}

// until re-checks something a client learns through list_changed each
// time one comes, until check finds it as wanted (check says "" then,
// else what it found). A client re-lists on each notification; a bridge
// that changes several tools sends one or more of them (the SDK's
// debounce is 10 ms), and only the last is sure to show every change.
func until(t *testing.T, changed <-chan struct{}, what string, check func() string) {
	t.Helper()
	deadline := time.After(waitLong)
	for {
		found := check()
		if found == "" {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("waited %v for %s; found %s", waitLong, what, found)
		}
	}
}

// removeDevice removes a device from the bench's registry, as a provider
// that goes away does.
func removeDevice(t *testing.T, bench *hubtest.Bench, id string) {
	t.Helper()
	if err := bench.Registry().Remove(id, "test"); err != nil {
		t.Fatal(err)
	}
}

// quiet is how long a test waits to be sure that a notification does not
// come, once the bridge has handled what could have sent it: many times
// the SDK's debounce of list_changed (10 ms). Only a test that expects
// nothing waits it out; one that expects something never does.
const quiet = 300 * time.Millisecond

// TestNoListChangedWithoutChange: what changes no tool — a value, a
// device's state, the same devices again after a reconnection — sends no
// tools/list_changed and no resources/list_changed.
func TestNoListChangedWithoutChange(t *testing.T) {
	bench, url := newBench(t)
	b := newBridge(t, url, bench.Agent, true)
	c := connect(t, b, clientOptions{version: proto0618})
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	led := b.deviceURI("sim.led")
	if err := c.Subscribe(ctx, &mcp.SubscribeParams{URI: led}); err != nil {
		t.Fatal(err)
	}
	bench.Set("sim.led", true)
	awaitUpdate(t, c, led) // the bridge has handled the value
	bench.SetState("sim.led", device.StateFault, "stuck")
	awaitUpdate(t, c, led)
	bench.Restart() // the same bench on a new Hub: the bridge redials
	b.awaitLog(t, "reconnected")
	expectQuiet(t, c)
}
