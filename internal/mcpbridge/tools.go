package mcpbridge

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

// The tools' names. No tool approves, rejects or resumes: those are a
// person's (package comment).
const (
	toolList         = "list_devices"
	toolRead         = "read_device"
	toolWrite        = "write_device"
	toolWriteHigh    = "write_high_risk_device"
	toolWait         = "wait_for_value"
	toolConfirmation = "confirmation_status"
	toolStop         = "emergency_stop"
)

// Every tool sets each annotation explicitly (jsonschema.Ptr for the
// pointer hints): a client reads a missing destructiveHint as true.

// toolDef is one tool as the current devices and scope make it: its
// definition, compared with the one registered to tell a change, and how
// to register it (mcp.AddTool is generic in the handler's types).
type toolDef struct {
	tool *mcp.Tool
	add  func(*mcp.Server, *mcp.Tool)
}

// def builds a toolDef for a typed handler.
func def[In, Out any](t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) toolDef {
	return toolDef{tool: t, add: func(s *mcp.Server, t *mcp.Tool) { mcp.AddTool(s, t, h) }}
}

// refresh registers the tools the scope allows for the devices the token
// sees now, and their resources, and removes those that no longer apply.
// A tool whose definition did not change is left alone, so that clients
// get tools/list_changed only when the list did change. Refreshes run one
// at a time (b.reg), outside b.mu: registering notifies the sessions.
func (b *Bridge) refresh() {
	b.reg.Lock()
	defer b.reg.Unlock()
	b.mu.Lock()
	devs, scope := b.sortedDevices(), b.principal.Scope
	b.mu.Unlock()

	var names []string
	for _, d := range b.toolDefs(devs, scope) {
		names = append(names, d.tool.Name)
		if sameTool(b.defs[d.tool.Name], d.tool) {
			continue
		}
		d.add(b.server, d.tool)
		b.defs[d.tool.Name] = d.tool
	}
	var gone []string
	for n := range b.defs {
		if !slices.Contains(names, n) {
			gone = append(gone, n)
			delete(b.defs, n)
		}
	}
	if len(gone) > 0 {
		b.server.RemoveTools(gone...)
	}
	b.refreshResources(devs)
}

// sameTool compares two definitions by what a client sees of them.
func sameTool(a, b *mcp.Tool) bool {
	if a == nil || b == nil {
		return false
	}
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// sortedDevices returns the devices by id. b.mu must be held.
func (b *Bridge) sortedDevices() []device.Descriptor {
	out := make([]device.Descriptor, 0, len(b.devices))
	for _, d := range b.devices {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// toolDefs is the tool set of the scope for devs: reading tools for every
// token; writing and the stop from control_low up, each write tool only
// while some device is left for it.
func (b *Bridge) toolDefs(devs []device.Descriptor, scope openhal.Scope) []toolDef {
	readable := filter(devs, func(d device.Descriptor) bool { return d.Access.CanRead() })
	low := filter(devs, func(d device.Descriptor) bool { return d.Access.CanWrite() && d.Risk != device.RiskHigh })
	high := filter(devs, func(d device.Descriptor) bool { return d.Access.CanWrite() && d.Risk == device.RiskHigh })

	defs := []toolDef{b.listTool()}
	if len(readable) > 0 {
		defs = append(defs, b.readTool(readable), b.waitTool(readable))
	}
	defs = append(defs, b.confirmationTool())
	if !scope.AtLeast(openhal.ScopeControlLow) {
		return defs
	}
	if len(low) > 0 {
		defs = append(defs, b.writeTool(low))
	}
	if len(high) > 0 {
		defs = append(defs, b.writeHighTool(high, scope))
	}
	return append(defs, b.stopTool())
}

func filter(devs []device.Descriptor, keep func(device.Descriptor) bool) []device.Descriptor {
	var out []device.Descriptor
	for _, d := range devs {
		if keep(d) {
			out = append(out, d)
		}
	}
	return out
}

// inputSchema infers In's schema and limits its "device" property to the
// ids of devs: a model cannot name a device the tool does not serve, and
// the client sees the choice.
func inputSchema[In any](devs []device.Descriptor) *jsonschema.Schema {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpbridge: schema of %T: %v", *new(In), err)) // a programming error: the types are ours
	}
	if p := s.Properties["device"]; p != nil && devs != nil {
		p.Enum = nil
		for _, d := range devs {
			p.Enum = append(p.Enum, d.ID)
		}
	}
	return s
}

// deviceList describes devs for a tool's description: id, type, range and
// unit, label.
func deviceList(devs []device.Descriptor) string {
	var sb strings.Builder
	for _, d := range devs {
		fmt.Fprintf(&sb, "\n- %s: %s", d.ID, typeWords(d.Schema))
		if d.Label != "" {
			fmt.Fprintf(&sb, " (%s)", d.Label)
		}
	}
	return sb.String()
}

// typeWords says a schema in a few words: "number 0 to 100 %".
func typeWords(s device.Schema) string {
	w := s.Type
	switch {
	case s.Minimum != nil && s.Maximum != nil:
		w += fmt.Sprintf(" %g to %g", *s.Minimum, *s.Maximum)
	case s.Minimum != nil:
		w += fmt.Sprintf(" ≥ %g", *s.Minimum)
	case s.Maximum != nil:
		w += fmt.Sprintf(" ≤ %g", *s.Maximum)
	}
	if len(s.Enum) > 0 {
		b, _ := json.Marshal(s.Enum)
		w += " one of " + string(b)
	}
	if s.Unit != "" {
		w += " " + s.Unit
	}
	if s.Type == "object" {
		var keys []string
		for k, p := range s.Properties {
			keys = append(keys, k+" "+typeWords(p))
		}
		sort.Strings(keys)
		w += " {" + strings.Join(keys, ", ") + "}"
	}
	return w
}
