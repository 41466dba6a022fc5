package gatewayd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/cli"
	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/internal/halhub/hubtest"
	"github.com/openhal/gateway/openhal"
	"github.com/openhal/gateway/openhal/gatewayext"
)

// gateway/status as `gateway status` shows it: the command line against
// the status service, on a bench Hub.

// bannerRE is the stop banner's line for a stop by the bench's admin.
const bannerRE = `^EMERGENCY STOP engaged by operator admin at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+: bench fire \(only safe values can be written until an admin runs gateway resume\)$`

// statusReport is what `gateway status --json` prints, the fields these
// tests read.
type statusReport struct {
	Version     string            `json:"version"`
	Board       string            `json:"board"`
	Name        string            `json:"name"`
	ID          string            `json:"id"`
	Fingerprint string            `json:"fingerprint"`
	UptimeS     float64           `json:"uptimeSeconds"`
	Stopped     *openhal.StopInfo `json:"stopped"`
	Devices     struct {
		Total   int                  `json:"total"`
		ByState map[device.State]int `json:"byState"`
		Unwell  []json.RawMessage    `json:"unwell"`
	} `json:"devices"`
	Confirmations struct {
		Pending int `json:"pending"`
	} `json:"confirmations"`
	Adapters []gatewayext.AdapterSummary `json:"adapters"`
	Clients  gatewayext.ClientCounts     `json:"clients"`
}

// runClient runs `gateway CMD ARGS...` and returns its stdout, stderr,
// and an error when it did not exit 0.
func runClient(t *testing.T, cmd string, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	var err error
	if code := cli.Run(append([]string{cmd}, args...), &stdout, &stderr, Env("dev", "unknown")); code != 0 {
		err = fmt.Errorf("gateway %s: exit %d: %s", cmd, code, stderr.String())
	}
	return stdout.String(), stderr.String(), err
}

// noEnv clears the variables the client commands read.
func noEnv(t *testing.T) {
	t.Setenv("GATEWAY_HUB", "")
	t.Setenv("GATEWAY_TOKEN", "")
}

// pendingWrite makes the bench's agent ask for sim.heater = true, which
// waits for an admin, and returns the request's id.
func pendingWrite(t *testing.T, hub *hubtest.Bench, url, reason string) string {
	t.Helper()
	out, _, err := runClient(t, "write", "--hub", url, "--token", hub.Agent, "sim.heater", "true", "--reason", reason)
	m := regexp.MustCompile(`^sim\.heater = true is pending: confirmation (c-\d+) `).FindStringSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("write sim.heater true printed %q, %v; want pending", out, err)
	}
	return m[1]
}

// wantLines checks out's first lines against patterns, one each.
func wantLines(t *testing.T, what, out string, patterns []string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) < len(patterns) {
		t.Fatalf("%s printed %d lines, want %d:\n%s", what, len(lines), len(patterns), out)
	}
	for i, p := range patterns {
		if !regexp.MustCompile(p).MatchString(lines[i]) {
			t.Errorf("%s line %d %q does not match %s", what, i+1, lines[i], p)
		}
	}
}

// statusBench is a bench Hub that serves gateway/status as the gateway
// does, with no supervisor (no adapter enabled).
func statusBench(t *testing.T) *hubtest.Bench {
	t.Helper()
	svc := &statusService{build: build{version: "dev", commit: "unknown"}, board: "sim", name: "bench", id: "0123456789abcdef0123456789abcdef", fp: strings.Repeat("ab", 32), started: time.Now().Add(-time.Hour)}
	hub := hubtest.New(t, hubtest.Configure(func(o *halhub.Options) { o.Extensions = svc.extensions() }))
	svc.hub = hub.Hub()
	return hub
}

func TestStatusCommand(t *testing.T) {
	noEnv(t)
	hub := statusBench(t)
	url := hub.Listen("tcp")
	admin := []string{"--hub", url, "--token", hub.Admin}
	hub.SetState("sim.door", device.StateFault, "stuck")
	pendingWrite(t, hub, url, "preheat")

	out, _, err := runClient(t, "status", admin...)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`^running: no emergency stop$`,
		`^gateway:\s+test \(commit unknown\), board sim, up 1h0m0s since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+$`,
		`^token:\s+operator admin, scope admin$`,
		`^devices:\s+4: 3 ok, 1 fault$`,
		`^  sim\.door\s+fault: stuck$`,
		`^confirmations:\s+1 pending$`,
		`^  c-\d+\s+sim\.heater = true \(now false\) by agent bench-agent, expires \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+$`,
		`^adapters:\s+none enabled$`,
		`^clients:\s+\d+ connected \(\d+ admin(, \d+ control_low)?\)$`, // the closed ones may not be gone yet
		`^name:\s+"bench", id 0123456789abcdef0123456789abcdef$`,
		`^certificate:\s+SHA-256 (ab){32} \(of wss:// and tls://, the console over https://\)$`,
	}
	wantLines(t, "status", out, want)

	runClient(t, "stop", append(admin, "--reason", "bench fire")...)
	out, _, err = runClient(t, "status", admin...)
	if err != nil {
		t.Fatal(err)
	}
	// The stop rejected the pending request.
	stopped := append([]string{bannerRE, `^left as they are: sim\.led \(it declares no safe value\)$`}, want[1:5]...)
	stopped = append(stopped, `^confirmations:\s+0 pending$`, want[7], want[8], want[9], want[10])
	wantLines(t, "status while stopped", out, stopped)

	out, _, err = runClient(t, "status", append(admin, "--json")...)
	var r statusReport
	if err != nil || json.Unmarshal([]byte(out), &r) != nil || strings.Count(out, "\n") != 1 {
		t.Fatalf("status --json printed %q, %v; want one JSON object", out, err)
	}
	if r.Stopped == nil || r.Stopped.Reason != "bench fire" || r.Board != "sim" || r.UptimeS < 3600 || r.Devices.Total != 4 ||
		r.Devices.ByState[device.StateFault] != 1 || r.Adapters == nil || r.Clients.Total < 1 || r.Version != "test" ||
		r.Name != "bench" || r.ID != "0123456789abcdef0123456789abcdef" || r.Fingerprint != strings.Repeat("ab", 32) {
		t.Errorf("status --json = %s", out)
	}
}

// A token limited to some devices learns nothing of the others from
// status: not their count, states, confirmations, nor the adapters.
func TestStatusLimitedToken(t *testing.T) {
	noEnv(t)
	hub := statusBench(t)
	url := hub.Listen("ws")
	hub.SetState("sim.door", device.StateFault, "stuck")
	pendingWrite(t, hub, url, "preheat")
	led := hub.Token("led", openhal.KindOperator, openhal.ScopeAdmin, "sim.led")
	out, _, err := runClient(t, "status", "--hub", url, "--token", led, "--json")
	var r statusReport
	if err != nil || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("status --json printed %q, %v", out, err)
	}
	if r.Devices.Total != 1 || len(r.Devices.Unwell) != 0 || r.Confirmations.Pending != 0 || r.Adapters != nil {
		t.Errorf("a token limited to sim.led sees %s", out)
	}
	for _, hidden := range []string{"sim.door", "sim.heater", "stuck"} {
		if strings.Contains(out, hidden) {
			t.Errorf("status --json for a token limited to sim.led tells of %s: %s", hidden, out)
		}
	}
	out, _, _ = runClient(t, "status", "--hub", url, "--token", led)
	if !regexp.MustCompile(`(?m)^adapters:\s+shown to an admin token not limited to some devices$`).MatchString(out) {
		t.Errorf("status for a limited token:\n%s", out)
	}
}
