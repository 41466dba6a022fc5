package mcpbridge

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

type writeIn struct {
	Device string `json:"device" jsonschema:"the device's id"`
	Value  any    `json:"value" jsonschema:"the value to set, of the device's type (list_devices)"`
	Reason string `json:"reason,omitempty" jsonschema:"why: kept in the audit log and shown to a person who approves"`
}

type writeOut struct {
	Status       string            `json:"status" jsonschema:"applied: the device has the value; pending: it waits for a person and is NOT applied"`
	Device       string            `json:"device"`
	Value        any               `json:"value" jsonschema:"the value applied, or asked for when pending"`
	TS           *time.Time        `json:"ts,omitempty" jsonschema:"when it was applied"`
	Reply        any               `json:"reply,omitempty" jsonschema:"a line instrument's answer"`
	Confirmation *confirmationView `json:"confirmation,omitempty" jsonschema:"the request a person approves, when pending"`
}

// reasonMax is the Hub's limit on a write's reason (spec §7).
const reasonMax = 1024

// writeTool writes devices of low risk: not destructive (the issue's
// rule: a client may ask a person before a destructive call, and these
// are the devices the bench's owner marked as harmless), and idempotent.
func (b *Bridge) writeTool(devs []device.Descriptor) toolDef {
	t := &mcp.Tool{
		Name:  toolWrite,
		Title: "Write a device",
		Description: "Sets a low-risk device's value. The gateway's safety rules and the emergency stop apply: " +
			"a refusal says why, and nothing is changed. Devices:" + deviceList(devs),
		InputSchema: writeSchema(devs, false),
		Annotations: &mcp.ToolAnnotations{Title: "Write a device", ReadOnlyHint: false, DestructiveHint: jsonschema.Ptr(false), IdempotentHint: true, OpenWorldHint: jsonschema.Ptr(false)},
	}
	return def(t, b.write)
}

// writeHighTool writes devices of high risk (heaters, motors): destructive.
// For a control_low token each call is a request that a person approves,
// and the description says so, so that a model neither takes "pending"
// for done nor asks again and again.
func (b *Bridge) writeHighTool(devs []device.Descriptor, scope openhal.Scope) toolDef {
	how := "This agent's token may not set them by itself: each call creates a request that waits for a person's " +
		"approval, and the result's status is \"pending\" with the request's id, its expiry and where a person approves it. " +
		"A pending write is NOT applied. Tell the user it waits; follow it with confirmation_status; do not repeat the call."
	if scope.AtLeast(openhal.ScopeControlHigh) {
		how = "This agent's token sets them at once, with no person's approval: be sure before each call."
	}
	t := &mcp.Tool{
		Name:  toolWriteHigh,
		Title: "Write a high-risk device",
		Description: "Sets a high-risk device's value (a heater, a motor: things that can hurt or break). " + how +
			" Safety rules and the emergency stop apply. A reason is required. Devices:" + deviceList(devs),
		InputSchema: writeSchema(devs, true),
		Annotations: &mcp.ToolAnnotations{Title: "Write a high-risk device", ReadOnlyHint: false, DestructiveHint: jsonschema.Ptr(true), IdempotentHint: false, OpenWorldHint: jsonschema.Ptr(false)},
	}
	return def(t, b.write)
}

// writeSchema is writeIn's schema for devs, the reason bounded as the Hub
// bounds it, and required for a high-risk write: the person who approves
// reads it.
func writeSchema(devs []device.Descriptor, high bool) *jsonschema.Schema {
	s := inputSchema[writeIn](devs)
	s.Properties["reason"].MaxLength = jsonschema.Ptr(reasonMax)
	if high {
		s.Required = append(s.Required, "reason")
		s.Properties["reason"].MinLength = jsonschema.Ptr(1)
	}
	return s
}

func (b *Bridge) write(ctx context.Context, req *mcp.CallToolRequest, in writeIn) (*mcp.CallToolResult, writeOut, error) {
	c, err := b.hub()
	if err != nil {
		return nil, writeOut{}, err
	}
	raw, err := json.Marshal(in.Value)
	if err != nil {
		return nil, writeOut{}, fmt.Errorf("the value cannot be sent: %v", err)
	}
	r, err := c.Write(ctx, in.Device, json.RawMessage(raw), in.Reason)
	if err != nil {
		return nil, writeOut{}, b.toolError(err, openhal.MethodWrite, in.Device)
	}
	if r.Status == "pending" && r.Confirmation != nil {
		v := b.viewConfirmation(pendingOf(r.Confirmation))
		b.tellPerson(req, v)
		return textResult("PENDING, NOT APPLIED. " + statusWords(v) +
				" Tell the user that it waits for them, and use confirmation_status with this id to learn the outcome; do not repeat the write."),
			writeOut{Status: "pending", Device: in.Device, Value: in.Value, Confirmation: &v}, nil
	}
	ts := r.TS
	out := writeOut{Status: "applied", Device: r.Device, Value: r.Value, TS: &ts, Reply: r.Reply}
	return nil, out, nil
}
