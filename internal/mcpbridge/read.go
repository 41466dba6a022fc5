package mcpbridge

import (
	"context"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

type listIn struct{}

type listOut struct {
	Gateway string       `json:"gateway"`
	Stopped *stopView    `json:"stopped" jsonschema:"the emergency stop in force, or null"`
	Devices []deviceView `json:"devices"`
}

func (b *Bridge) listTool() toolDef {
	t := &mcp.Tool{
		Name:  toolList,
		Title: "List the bench's devices",
		Description: "Lists the devices this agent may see on the gateway: id, type, unit and range, whether it " +
			"is readable and writable, its risk, whether a write needs a person's approval, its safe value and its " +
			"health; and the emergency stop if one is engaged. It reads no hardware: use read_device for values.",
		InputSchema: inputSchema[listIn](nil),
		Annotations: &mcp.ToolAnnotations{Title: "List devices", ReadOnlyHint: true, DestructiveHint: jsonschema.Ptr(false), IdempotentHint: true, OpenWorldHint: jsonschema.Ptr(false)},
	}
	return def(t, b.list)
}

// list answers from the devices the bridge follows (hal/devices/list at
// connection, then hal/deviceAdded, hal/deviceRemoved, hal/deviceState):
// a listing acts on nothing.
func (b *Bridge) list(ctx context.Context, _ *mcp.CallToolRequest, _ listIn) (*mcp.CallToolResult, listOut, error) {
	if _, err := b.hub(); err != nil {
		return nil, listOut{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	out := listOut{Gateway: b.gw, Stopped: viewStop(b.stopped), Devices: []deviceView{}}
	for _, d := range b.sortedDevices() {
		out.Devices = append(out.Devices, viewDevice(d, b.principal.Scope))
	}
	return nil, out, nil
}

type readIn struct {
	Device   string `json:"device" jsonschema:"the device's id"`
	MaxAgeMs *int64 `json:"maxAgeMs,omitempty" jsonschema:"a sensor's cached measurement younger than this is returned instead of a new one"`
}

// valueOut is a value as read. Every field of type any in the tools'
// inputs and outputs has a description: without one, jsonschema-go makes
// it the bare schema `true`, which stricter clients refuse as a property
// (the MCP Inspector's --strict: "Bare `true` used where a schema object
// is expected"); schema_test.go keeps it so.
type valueOut struct {
	Device string    `json:"device"`
	Value  any       `json:"value" jsonschema:"the device's value, of its type (list_devices)"`
	Unit   string    `json:"unit,omitempty"`
	TS     time.Time `json:"ts" jsonschema:"when the value was measured or applied"`
}

func (b *Bridge) readTool(devs []device.Descriptor) toolDef {
	t := &mcp.Tool{
		Name:  toolRead,
		Title: "Read a device",
		Description: "Reads a device's value: a sensor takes a fresh measurement (unless maxAgeMs allows a recent one), " +
			"an output gives the value last applied. Devices:" + deviceList(devs),
		InputSchema: inputSchema[readIn](devs),
		Annotations: &mcp.ToolAnnotations{Title: "Read a device", ReadOnlyHint: true, DestructiveHint: jsonschema.Ptr(false), IdempotentHint: true, OpenWorldHint: jsonschema.Ptr(false)},
	}
	return def(t, b.read)
}

func (b *Bridge) read(ctx context.Context, _ *mcp.CallToolRequest, in readIn) (*mcp.CallToolResult, valueOut, error) {
	c, err := b.hub()
	if err != nil {
		return nil, valueOut{}, err
	}
	age := int64(-1)
	if in.MaxAgeMs != nil {
		age = *in.MaxAgeMs
	}
	v, err := c.Read(ctx, in.Device, age)
	if err != nil {
		return nil, valueOut{}, b.toolError(err, openhal.MethodRead, in.Device)
	}
	return nil, b.viewValue(v), nil
}

// viewValue is a value with its device's unit.
func (b *Bridge) viewValue(v openhal.ValueResult) valueOut {
	b.mu.Lock()
	d := b.devices[v.Device]
	b.mu.Unlock()
	return valueOut{Device: v.Device, Value: v.Value, Unit: unitOf(d.Schema), TS: v.TS}
}
