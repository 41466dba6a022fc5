package mcpbridge

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openhal/gateway/openhal"
)

type stopIn struct {
	Reason string `json:"reason" jsonschema:"what is wrong: the audit log and every operator see it"`
}

type stopOut struct {
	Stopped        bool     `json:"stopped"`
	AlreadyStopped bool     `json:"alreadyStopped,omitempty"`
	SafeApplied    []string `json:"safeApplied" jsonschema:"devices driven to their safe value"`
	Failed         []string `json:"failed" jsonschema:"devices that could not be driven safe, with the error"`
	LeftAsIs       []string `json:"leftAsIs" jsonschema:"devices with no safe value, left as they are"`
}

// stopTool engages the stop. It is not destructive: it drives every
// device to its safe value, and a client that asked a person before each
// call would slow the one call that must be quick. It is idempotent: a
// second stop drives the safe values again and changes nothing else.
func (b *Bridge) stopTool() toolDef {
	in := inputSchema[stopIn](nil)
	in.Properties["reason"].MinLength = jsonschema.Ptr(1)
	t := &mcp.Tool{
		Name:  toolStop,
		Title: "Engage the emergency stop",
		Description: "Engages the bench's emergency stop: every device with a safe value is driven to it at once, " +
			"pending confirmations are rejected, and every write is refused until a person lifts the stop. " +
			"Use it when something on the bench looks unsafe. No tool lifts it: only a person can " +
			"(`gateway resume` or the console).",
		InputSchema: in,
		Annotations: &mcp.ToolAnnotations{Title: "Emergency stop", ReadOnlyHint: false, DestructiveHint: jsonschema.Ptr(false), IdempotentHint: true, OpenWorldHint: jsonschema.Ptr(false)},
	}
	return def(t, b.stop)
}

func (b *Bridge) stop(ctx context.Context, req *mcp.CallToolRequest, in stopIn) (*mcp.CallToolResult, stopOut, error) {
	var r openhal.StopResult
	var err error
	if s := b.lane.claim(metaOf(req)); s != nil {
		r, err = s.wait(ctx) // engaged as the call was read (stoplane.go)
	} else {
		c, herr := b.hub()
		if herr != nil {
			return nil, stopOut{}, herr
		}
		r, err = c.Stop(ctx, in.Reason)
	}
	if err != nil {
		return nil, stopOut{}, b.toolError(err, openhal.MethodStop, "")
	}
	out := stopOut{Stopped: r.Stopped, AlreadyStopped: r.AlreadyStopped, SafeApplied: r.SafeApplied, Failed: []string{}, LeftAsIs: []string{}}
	for _, f := range r.Failed {
		out.Failed = append(out.Failed, f.Device+": "+f.Error.Message)
	}
	for _, l := range r.LeftAsIs {
		out.LeftAsIs = append(out.LeftAsIs, l.Device+": "+l.Reason)
	}
	if out.SafeApplied == nil {
		out.SafeApplied = []string{}
	}
	text := fmt.Sprintf("The emergency stop is engaged. Driven safe: %s.", listWords(out.SafeApplied))
	if len(out.Failed) > 0 {
		text += " NOT driven safe (a person must look): " + strings.Join(out.Failed, "; ") + "."
	}
	if len(out.LeftAsIs) > 0 {
		text += " Left as they are (no safe value): " + strings.Join(out.LeftAsIs, "; ") + "."
	}
	text += " Every write but a device's safe value is refused until a person lifts the stop; tell the user what happened."
	return textResult(text), out, nil
}

func listWords(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// textResult is a result whose text is a sentence for the model; the
// structured content still carries the fields.
func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}
