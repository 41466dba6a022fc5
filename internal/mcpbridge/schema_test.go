package mcpbridge

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

// TestToolSchemasHaveNoBareTrue lists the tools of each scope as a client
// does and walks their input and output schemas: no property, item or
// other subschema may be the bare schema `true`, which stricter clients
// (the MCP Inspector's --strict, schema converters for other model
// providers) refuse.
func TestToolSchemasHaveNoBareTrue(t *testing.T) {
	devs := []device.Descriptor{
		{ID: "sim.led", Kind: "gpio.output", Access: device.AccessReadWrite, Risk: device.RiskLow, Schema: device.Schema{Type: "boolean"}},
		{ID: "sim.heater", Kind: "gpio.output", Access: device.AccessReadWrite, Risk: device.RiskHigh, Schema: device.Schema{Type: "boolean"}},
	}
	for _, scope := range []openhal.Scope{openhal.ScopeRead, openhal.ScopeControlLow, openhal.ScopeControlHigh} {
		t.Run(string(scope), func(t *testing.T) {
			tools := listTools(t, (&Bridge{}).toolDefs(devs, scope))
			if len(tools) == 0 {
				t.Fatal("no tools listed")
			}
			for _, tool := range tools {
				for name, s := range map[string]any{"inputSchema": tool.InputSchema, "outputSchema": tool.OutputSchema} {
					raw, err := json.Marshal(s)
					if err != nil {
						t.Fatalf("%s %s: %v", tool.Name, name, err)
					}
					var v any
					if err := json.Unmarshal(raw, &v); err != nil {
						t.Fatalf("%s %s: %v", tool.Name, name, err)
					}
					for _, path := range bareTrue(v, tool.Name+"."+name) {
						t.Errorf("%s is the bare schema true: give the field a description", path)
					}
				}
			}
		})
	}
}

// listTools registers defs on a server and lists them through an
// in-memory client session, as a client sees them.
func listTools(t *testing.T, defs []toolDef) []*mcp.Tool {
	t.Helper()
	ctx := context.Background()
	s := mcp.NewServer(&mcp.Implementation{Name: "test"}, nil)
	for _, d := range defs {
		d.add(s, d.tool)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools
}

// bareTrue returns the paths of the subschemas of schema s that are the
// JSON value true.
func bareTrue(s any, path string) []string {
	m, ok := s.(map[string]any)
	if !ok {
		return nil
	}
	var out []string
	check := func(sub any, p string) {
		if b, ok := sub.(bool); ok && b {
			out = append(out, p)
			return
		}
		out = append(out, bareTrue(sub, p)...)
	}
	for _, k := range []string{"properties", "patternProperties", "$defs"} {
		if props, ok := m[k].(map[string]any); ok {
			for name, sub := range props {
				check(sub, path+"."+k+"."+name)
			}
		}
	}
	if sub, ok := m["items"]; ok {
		check(sub, path+".items")
	}
	if sub, ok := m["additionalProperties"]; ok { // true there is a choice, not a missing type
		out = append(out, bareTrue(sub, path+".additionalProperties")...)
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf", "prefixItems"} {
		if list, ok := m[k].([]any); ok {
			for i, sub := range list {
				check(sub, path+"."+k+"["+strconv.Itoa(i)+"]")
			}
		}
	}
	return out
}
