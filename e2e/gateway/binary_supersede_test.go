package gateway_test

// Whole-binary tests of superseded Confirmation Requests (spec §7, issue
// 28): an agent asks for the heater, then turns it off itself; an admin's
// approval of the request afterwards must not turn it on — through the
// client commands, through MCP, and as a race. The helpers are in
// binary_helpers_test.go; the gpiozero and browser tiers have their own
// (clients/python/tests, e2e/browser).

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/openhal"
)

// TestBinarySupersededStory is the sequence with the client
// commands: the agent's `write sim.heater true` waits (c-N), its `write
// sim.heater false` is applied; the admin's `confirm approve c-N` is then
// refused (CONFIRMATION_CLOSED, superseded), the heater stays off, `confirm
// list` shows c-N superseded by the agent's write of false, and the audit
// log records the supersession.
func TestBinarySupersededStory(t *testing.T) {
	dir := t.TempDir()
	g := startGateway(t, dir)
	agentTok := g.addToken(t, "bot", "control_low")
	admin := func(args ...string) []string { return append(args, "--hub", g.ws, "--state-dir", dir) }
	agent := func(args ...string) []string { return append(args, "--hub", g.tcp, "--token", agentTok) }

	id := pendingHeater(t, agent, "preheat for run 7")
	list := gwOK(t, admin("confirm", "list", "--status", "pending")...)
	if !regexp.MustCompile(`(?m)^` + id + `\s+sim\.heater\s+true\s+false\s+agent bot\s+preheat for run 7\s+pending\s+\S+$`).MatchString(list) {
		t.Errorf("confirm list, the request pending beside the heater's false:\n%s", list)
	}
	if out := gwOK(t, agent("write", "sim.heater", "false")...); !regexp.MustCompile(`^sim\.heater = false \(seq \d+\)\n$`).MatchString(out) {
		t.Fatalf("the agent's write of false printed %q, want applied", out)
	}

	wantOneLineError(t, gw(t, admin("confirm", "approve", id)...), "confirmation "+id+" (sim.heater = true) is superseded by agent bot's write of false")
	if out := gwOK(t, admin("read", "sim.heater")...); out != "false\n" {
		t.Fatalf("sim.heater = %q after the approval of a superseded request, want false", out)
	}

	list = gwOK(t, admin("confirm", "list")...)
	if !regexp.MustCompile(`(?m)^`+id+`\s+sim\.heater\s+true\s+-\s+agent bot\s+preheat for run 7\s+superseded\s+\S+$`).MatchString(list) ||
		!regexp.MustCompile(`(?m)^`+id+` superseded by agent bot's write of false at .* \(seq \d+\)$`).MatchString(list) {
		t.Errorf("confirm list after the approval:\n%s", list)
	}
	var res openhal.ConfirmationsListResult
	if err := json.Unmarshal([]byte(gwOK(t, admin("confirm", "list", "--status", "superseded", "--json")...)), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Confirmations) != 1 || res.Confirmations[0].ID != id || res.Confirmations[0].SupersededBy == nil {
		t.Fatalf("confirm list --status superseded --json: %+v", res)
	}
	by := res.Confirmations[0].SupersededBy
	if by.Principal.Kind != openhal.KindAgent || by.Principal.Name != "bot" || by.Value != false || by.Seq == 0 || by.Request != "" {
		t.Errorf("supersededBy %+v, want the agent bot's applied write of false", by)
	}

	var superseded, refused bool
	for _, e := range auditJSON(t, g) {
		switch {
		case e.Action == "supersede":
			superseded = e.Confirmation == id && e.Outcome == openhal.ConfirmSuperseded && e.Principal.Name == "bot" &&
				e.Device == "sim.heater" && e.Value == true && strings.Contains(e.Reason, "write of false")
			if !superseded {
				t.Errorf("the supersede entry: %+v", e)
			}
		case e.Action == "approve" && e.Confirmation == id:
			refused = e.Outcome == "refused" && e.Error != nil && e.Error.Code == openhal.CodeConfirmationClosed
		}
	}
	if !superseded || !refused {
		t.Errorf("audit log: supersede entry %v, refused approval %v; want both", superseded, refused)
	}
}

// TestBinarySupersededMCP is the same sequence through MCP, over `gateway
// mcp` on stdio and /mcp: the agent asks for the heater with
// write_high_risk_device, then writes false with it; the admin's approval
// is refused, the heater stays off, and confirmation_status says the
// request was superseded and will never be applied.
func TestBinarySupersededMCP(t *testing.T) {
	dir := t.TempDir()
	g := startGateway(t, dir, "--mcp")
	agentTok := g.addToken(t, "bench-agent", "control_low")
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			c := connectMCP(t, g, transport, "", agentTok)
			var w struct {
				Status       string `json:"status"`
				Confirmation struct {
					ID string `json:"id"`
				} `json:"confirmation"`
			}
			c.ok(t, "write_high_risk_device", map[string]any{"device": "sim.heater", "value": true, "reason": "preheat"}, &w)
			id := w.Confirmation.ID
			if w.Status != "pending" || id == "" {
				t.Fatalf("the heater write: %+v, want pending", w)
			}
			var v struct {
				Status       string `json:"status"`
				Current      any    `json:"current"`
				SupersededBy *struct {
					By    string `json:"by"`
					Value any    `json:"value"`
				} `json:"supersededBy"`
			}
			if text := c.ok(t, "confirmation_status", map[string]any{"id": id}, &v); v.Status != "pending" || v.Current != false ||
				!strings.Contains(text, "sim.heater is false now") {
				t.Fatalf("confirmation_status while pending: %q %+v, want the heater's false beside it", text, v)
			}
			c.ok(t, "write_high_risk_device", map[string]any{"device": "sim.heater", "value": false, "reason": "changed my mind"}, &w)
			if w.Status != "applied" {
				t.Fatalf("the heater off: %+v, want applied", w)
			}

			wantOneLineError(t, gw(t, "confirm", "approve", id, "--hub", g.ws, "--state-dir", dir), "is superseded by agent bench-agent's write of false")
			if got := strings.TrimSpace(gwOK(t, "read", "sim.heater", "--hub", g.ws, "--state-dir", dir)); got != "false" {
				t.Fatalf("sim.heater %s after the approval of a superseded request", got)
			}
			v.SupersededBy, v.Current = nil, nil
			text := c.ok(t, "confirmation_status", map[string]any{"id": id}, &v)
			if v.Status != "superseded" || v.SupersededBy == nil || v.SupersededBy.By != "agent bench-agent" || v.SupersededBy.Value != false ||
				!strings.Contains(text, "never be applied") {
				t.Errorf("confirmation_status after: %q %+v", text, v)
			}
		})
	}
}

// TestBinaryApprovalRacesReversal: on the real binary, an admin's
// approval and the agent's reversal of its request are sent at once,
// round after round, on connections of their own. Whatever the order the
// gateway takes them in, the heater ends each round off: the approval is
// applied before the reversal, or refused as superseded — never applied
// after it.
func TestBinaryApprovalRacesReversal(t *testing.T) {
	dir := t.TempDir()
	g := startGateway(t, dir)
	agentTok := g.addToken(t, "racer", "control_low")
	admin, err := dial(t, g.tcp, readAdminToken(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	agent, err := dial(t, g.ws, agentTok)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	outcomes := map[string]int{}
	for round := range 40 {
		w, err := agent.Write(ctx, "sim.heater", true, fmt.Sprint("round ", round))
		if err != nil || w.Confirmation == nil {
			t.Fatalf("round %d: the request: %+v, %v", round, w, err)
		}
		var wg sync.WaitGroup
		var approved openhal.Confirmation
		var approveErr, reverseErr error
		wg.Go(func() { approved, approveErr = admin.Approve(ctx, w.Confirmation.ID) })
		wg.Go(func() { _, reverseErr = agent.Write(ctx, "sim.heater", false, "") })
		wg.Wait()
		if reverseErr != nil {
			t.Fatalf("round %d: the reversal: %v", round, reverseErr)
		}
		switch {
		case approveErr == nil && approved.Status == openhal.ConfirmApproved:
			outcomes["approved, then reversed"]++
		case isHubError(approveErr, openhal.CodeConfirmationClosed, "confirmation_closed") && strings.Contains(approveErr.Error(), "superseded"):
			outcomes["superseded"]++
		default:
			t.Fatalf("round %d: approval %+v, %v", round, approved, approveErr)
		}
		v, err := admin.Read(ctx, "sim.heater", 0)
		if err != nil || v.Value != false {
			t.Fatalf("round %d: sim.heater %v (%v) after its creator turned it off", round, v.Value, err)
		}
	}
	t.Logf("outcomes of 40 rounds: %v", outcomes)
	if c, err := admin.Confirmations(ctx, openhal.ConfirmPending); err != nil || len(c) != 0 {
		t.Errorf("%d requests still pending after the rounds (%v)", len(c), err)
	}
}
