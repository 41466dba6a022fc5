package gateway_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestBinaryMCPApproveHint: a gateway on a state directory of its own
// and ports of its own; an agent reaches it with `gateway mcp
// --state-dir DIR` (no --hub: the gateway running there) and over its
// /mcp. Each pending write's approval line names that gateway, and,
// run as written by a shell with `gateway` on PATH, approves it.
func TestBinaryMCPApproveHint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	g := startGateway(t, dir, "--mcp")
	agent := g.addToken(t, "hint-agent", "control_low")

	cmd := exec.Command(gatewayBinary(t), "mcp", "--state-dir", dir)
	cmd.Env = append(childEnv(), "GATEWAY_TOKEN="+agent)
	stdio := mcpOver(t, &mcp.CommandTransport{Command: cmd})
	http := mcpOver(t, &mcp.StreamableClientTransport{Endpoint: "http://" + g.httpAddr + "/mcp", HTTPClient: bearerClient(agent)})
	for _, way := range []struct {
		name string
		c    *mcpClient
	}{{"gateway mcp --state-dir", stdio}, {"/mcp", http}} {
		id, line := pendingApproveLine(t, way.c)
		if want := "gateway confirm approve " + id + " --state-dir " + dir; line != want {
			t.Errorf("%s: the approval line is %q, want %q", way.name, line, want)
		}
		if out, err := runAsWritten(t, line); err != nil {
			t.Fatalf("%s: %q as written: %v\n%s", way.name, line, err, out)
		}
		if got := strings.TrimSpace(gwOK(t, "read", "sim.heater", "--state-dir", dir)); got != "true" {
			t.Fatalf("%s: sim.heater is %s after %q", way.name, got, line)
		}
		way.c.ok(t, "write_high_risk_device", map[string]any{"device": "sim.heater", "value": false, "reason": "hint test done"}, nil) // its safe value: at once
	}
}

// pendingApproveLine makes the agent's high-risk write pending and
// returns the request's id and the CLI line it says approves it.
func pendingApproveLine(t *testing.T, c *mcpClient) (id, line string) {
	t.Helper()
	r := c.call(t, "write_high_risk_device", map[string]any{"device": "sim.heater", "value": true, "reason": "hint test"})
	var p struct {
		Status       string
		Confirmation struct {
			ID      string
			Approve struct{ CLI string }
		}
	}
	b, _ := json.Marshal(r.StructuredContent)
	if err := json.Unmarshal(b, &p); err != nil || r.IsError || p.Status != "pending" {
		t.Fatalf("the heater write: %s (%v), want pending", b, err)
	}
	return p.Confirmation.ID, p.Confirmation.Approve.CLI
}

// runAsWritten runs a command line as a person pastes it: by sh, with
// the gateway binary on PATH as `gateway`, and none of the variables
// that point the CLI elsewhere.
func runAsWritten(t *testing.T, line string) (string, error) {
	t.Helper()
	cmd := exec.Command("sh", "-c", line)
	cmd.Env = append(childEnv(), "PATH="+filepath.Dir(gatewayBinary(t))+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	return string(out), err
}
