package mcpbridge

import (
	"context"
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal"
)

// maxWait bounds every wait of a tool: under a minute, so that a call
// ends before a client's own request timeout (often 60 s) gives up on it.
const maxWait = 55

type confirmationIn struct {
	ID          string `json:"id" jsonschema:"the id a pending write returned"`
	WaitSeconds int    `json:"waitSeconds,omitempty" jsonschema:"wait up to this many seconds (at most 55) for the request to be resolved; 0 answers at once"`
}

func (b *Bridge) confirmationTool() toolDef {
	in := inputSchema[confirmationIn](nil)
	in.Properties["id"].MinLength = jsonschema.Ptr(1)
	in.Properties["waitSeconds"].Minimum = jsonschema.Ptr(0.0)
	in.Properties["waitSeconds"].Maximum = jsonschema.Ptr(float64(maxWait))
	t := &mcp.Tool{
		Name:  toolConfirmation,
		Title: "Follow a confirmation request",
		Description: "Tells the status of a confirmation request that a high-risk write created: pending (a person has " +
			"not decided yet; not applied; with the device's value now), approved (applied), rejected, expired, cancelled, failed (approved, but a " +
			"safety check refused it when it ran), or superseded (a later write of the device, or this agent's newer request for it, " +
			"took its place: it will never be applied). With waitSeconds it waits for the outcome. It approves nothing: only a person can.",
		InputSchema: in,
		Annotations: &mcp.ToolAnnotations{Title: "Confirmation status", ReadOnlyHint: true, DestructiveHint: jsonschema.Ptr(false), IdempotentHint: true, OpenWorldHint: jsonschema.Ptr(false)},
	}
	return def(t, b.confirmation)
}

func (b *Bridge) confirmation(ctx context.Context, _ *mcp.CallToolRequest, in confirmationIn) (*mcp.CallToolResult, confirmationView, error) {
	ch, done := b.watch.add("confirmation:" + in.ID) // before the first look: no resolution falls between
	defer done()
	deadline := time.Now().Add(time.Duration(in.WaitSeconds) * time.Second)
	for {
		c, err := b.findConfirmation(ctx, in.ID)
		if err != nil {
			return nil, confirmationView{}, err
		}
		v := b.viewConfirmation(c)
		if v.Status != "pending" || !time.Now().Before(deadline) {
			return textResult(statusWords(v)), v, nil
		}
		until := deadline
		if exp := c.ExpiresAt.Add(time.Second); exp.Before(until) {
			until = exp // it expires first: look again then
		}
		wait := time.Until(until)
		select {
		case <-ctx.Done():
			return nil, confirmationView{}, ctx.Err()
		case <-ch: // resolved, or the connection lost: look again
		case <-time.After(wait): // the deadline, or its expiry
		}
	}
}

// findConfirmation looks a request up by id among those the token sees,
// through the pages of hal/confirmations/list.
func (b *Bridge) findConfirmation(ctx context.Context, id string) (openhal.Confirmation, error) {
	conn, err := b.hub()
	if err != nil {
		return openhal.Confirmation{}, err
	}
	after := ""
	for {
		page, err := conn.ConfirmationsPage(ctx, "", after, 0)
		if err != nil {
			return openhal.Confirmation{}, b.toolError(err, openhal.MethodConfirmationsList, "")
		}
		for _, c := range page.Confirmations {
			if c.ID == id {
				return c, nil
			}
		}
		if page.Next == "" {
			return openhal.Confirmation{}, fmt.Errorf("CONFIRMATION_NOT_FOUND: no confirmation request %q is known to the gateway (ids are those a pending write returned; requests do not outlive a restart of the gateway)", id)
		}
		after = page.Next
	}
}

// pendingOf is the request a pending write answered with.
func pendingOf(c *halclient.Confirmation) openhal.Confirmation {
	return openhal.Confirmation{ID: c.ID, Device: c.Device, Value: c.Value, RequestedBy: c.RequestedBy,
		Reason: c.Reason, Status: c.Status, CreatedAt: c.CreatedAt, ExpiresAt: c.ExpiresAt}
}

// tellPerson shows the user, in their own MCP client, that a request
// waits for them, where the client can (elicitation): the user reads it
// there, not only through the model. Declining there withdraws the
// request (its creator may cancel it); accepting approves nothing —
// approval is a person's act with an admin's token, in the console or
// the CLI. The question ends when the request is resolved elsewhere.
func (b *Bridge) tellPerson(req *mcp.CallToolRequest, v confirmationView) {
	ss := req.Session
	if ss == nil {
		return
	}
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
		return
	}
	go func() {
		ctx, cancel := context.WithDeadline(b.ctx, v.ExpiresAt)
		defer cancel()
		ch, done := b.watch.add("confirmation:" + v.ID)
		defer done()
		go func() {
			select {
			case <-ch:
				cancel()
			case <-ctx.Done():
			}
		}()
		res, err := ss.Elicit(ctx, &mcp.ElicitParams{
			Mode: "form",
			Message: fmt.Sprintf("The agent asks to set %s to %s (%s). It waits for a person's approval: a person approves it %s. "+
				"Accepting here approves nothing. Decline to withdraw the request.",
				v.Device, jsonWords(v.Value), v.Reason, whereWords(v.Approve)),
			RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}},
		})
		if err != nil || res.Action != "decline" {
			return
		}
		if conn, err := b.hub(); err == nil {
			_, err := conn.Cancel(context.WithoutCancel(ctx), v.ID)
			b.log.Info("mcp: the user declined a request; withdrawn", "confirmation", v.ID, "err", err)
		}
	}()
}

// whereWords says where a person approves a pending request: "in the
// console at URL or with `gateway confirm approve ID`".
func whereWords(a *approval) string {
	if a == nil {
		return "in the console or with `gateway confirm approve`"
	}
	if a.Console != "" {
		return "in the console at " + a.Console + " or with `" + a.CLI + "`"
	}
	return "with `" + a.CLI + "`"
}
