package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openhal/gateway/e2e/lantest"
	"github.com/openhal/gateway/internal/discovery"
)

// Issue 18 across two network namespaces (lantest): the gateway in A,
// `gateway discover` and the client commands in B, as on two machines of
// one LAN. Skipped without root, iproute2, avahi-daemon and dbus, except
// in CI.

// lanConfig listens on every address of A: WebSocket over TLS, plain
// WebSocket and TCP (said insecure).
const lanConfig = `board: sim
hub:
  name: %q
  announce: %s
  listen:
    http: {address: 0.0.0.0:7750, insecure: true}
    tcp: {address: 0.0.0.0:7751, insecure: true}
    wss: 0.0.0.0:7752
`

func TestBinaryLANDiscover(t *testing.T) {
	for _, tt := range []struct {
		name  string
		avahi bool
		via   string
	}{
		{"built-in responder, no avahi", false, "builtin"},
		{"through avahi-daemon beside the gateway", true, "avahi"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lan := lantest.New(t)
			bus := lantest.NoBus(t)
			if tt.avahi {
				bus = lantest.StartAvahi(t, lan.A, waitLong).BusAddress
			}
			dir := t.TempDir()
			g := startLANGateway(t, lan.A, dir, fmt.Sprintf(lanConfig, "Bench Pi", "auto"), bus)
			g.err.waitFor(t, 0, `msg=announced via=`+tt.via+` name="Bench Pi" type=_openhal-ws._tcp port=7752 `, waitLong)
			_, fp := g.err.waitFor(t, 0, `transport=wss .* fingerprint=([0-9a-f]{64})`, waitLong)
			id, err := os.ReadFile(filepath.Join(dir, "gateway.id"))
			if err != nil {
				t.Fatal(err)
			}

			watch := newChild("gateway discover --watch", lan.B.Command(gatewayBinary(t), "discover", "--watch", "--json"))
			watch.cmd.Env = childEnv()
			watch.start(t)
			found, next := waitGatewayEvent(t, watch, 0, false, "Bench Pi", 2)
			want := discovery.Gateway{
				Name: "Bench Pi", ID: strings.TrimSpace(string(id)), Host: found.Host, Addresses: []string{"10.77.0.1"},
				URLs:        []string{"wss://10.77.0.1:7752/hal", "tcp://10.77.0.1:7751"},
				Fingerprint: fp[1], Level: "full", Protocol: "openhal/0.1", Console: true, ConsoleURL: "https://10.77.0.1:7752/",
			}
			if !equalJSON(found, want) {
				t.Errorf("discovered\n%+v\nwant\n%+v", found, want)
			}

			// The list, and a client command by name: the announced
			// fingerprint is pinned only when told.
			in := []string{"ip", "netns", "exec", lan.B.NS}
			var list []discovery.Gateway
			r := gwIn(t, in, "discover", "--json", "--timeout", "2s")
			if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list) != 1 || !equalJSON(list[0], want) {
				t.Errorf("discover --json: %v, exit %d, stdout %s, stderr %s", err, r.code, r.stdout, r.stderr)
			}
			r = gwIn(t, in, "devices", "--hub", "Bench Pi", "--state-dir", dir)
			if r.code != 1 || !strings.Contains(r.stderr, "certificate's SHA-256 fingerprint is "+fp[1]) || !strings.Contains(r.stderr, "--trust-announced") {
				t.Errorf("devices --hub NAME without a pin: exit %d, stderr %q; want a refusal naming the fingerprint and --trust-announced", r.code, r.stderr)
			}
			r = gwIn(t, in, "devices", "--hub", "Bench Pi", "--trust-announced", "--state-dir", dir)
			if r.code != 0 || !strings.Contains(r.stdout, "sim.heater") {
				t.Errorf("devices --hub NAME --trust-announced: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
			}

			// A clean stop withdraws: the watcher hears it go.
			g.stop(t)
			waitGatewayEvent(t, watch, next, true, "Bench Pi", 0)
		})
	}
}

func TestBinaryLANNothingOnLoopback(t *testing.T) {
	lan := lantest.New(t)
	dir := t.TempDir()
	cfg := "board: sim\nhub:\n  announce: builtin\n  listen:\n    http: 127.0.0.1:7750\n    tcp: 127.0.0.1:7751\n"
	g := startLANGateway(t, lan.A, dir, cfg, lantest.NoBus(t))
	g.err.waitFor(t, 0, `msg="announce: nothing to announce: every listener is on loopback"`, waitLong)
	r := gwIn(t, []string{"ip", "netns", "exec", lan.B.NS}, "discover", "--json", "--timeout", "2s")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("discover --json: exit %d, stdout %q, stderr %q; want []", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(g.err.text(), "msg=announced") {
		t.Errorf("a loopback-only gateway announced itself:\n%s", g.err.text())
	}
}

func TestBinaryLANIDStableAcrossRestarts(t *testing.T) {
	lan := lantest.New(t)
	dir := t.TempDir()
	cfg := fmt.Sprintf(lanConfig, "bench", "builtin")
	var ids []string
	for range 2 {
		g := startLANGateway(t, lan.A, dir, cfg, lantest.NoBus(t))
		_, m := g.err.waitFor(t, 0, `msg=announced via=builtin name=bench type=_openhal._tcp port=7751 id=([0-9a-f]{32})`, waitLong)
		ids = append(ids, m[1])
		g.stop(t)
	}
	if ids[0] != ids[1] {
		t.Errorf("ids %q across a restart, want one", ids)
	}
}

// startLANGateway runs `gateway run` with the configuration text in
// side's namespace, with bus as its system D-Bus, and waits until it is
// ready.
func startLANGateway(t *testing.T, side lantest.Side, dir, config, bus string) *gateway {
	t.Helper()
	ownKnownGateways(t) // the LAN's addresses and names are every LAN test's
	path := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	c := newChild("gateway run in "+side.NS, side.Command(gatewayBinary(t), "run", "--config", path, "--state-dir", dir, "--log-level", "debug"))
	c.cmd.Env = append(childEnv(), "DBUS_SYSTEM_BUS_ADDRESS="+bus)
	// ip netns exec execs the gateway: signals reach it.
	c.start(t)
	return readyGatewayAt(t, c, dir, "7")
}

// waitGatewayEvent waits for `discover --watch --json` to print, from
// its line from on, the gateway name heard with urls URLs (0: any), or
// gone, and returns it with the index of the next line.
func waitGatewayEvent(t *testing.T, watch *child, from int, gone bool, name string, urls int) (discovery.Gateway, int) {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for {
		i, m := watch.out.waitFor(t, from, `^\{"gone":`+fmt.Sprint(gone)+`,.*\}$`, time.Until(deadline))
		from = i + 1
		var e struct {
			Gone    bool              `json:"gone"`
			Gateway discovery.Gateway `json:"gateway"`
		}
		if json.Unmarshal([]byte(m[0]), &e) != nil {
			t.Fatalf("discover --watch --json printed %q", m[0])
		}
		if e.Gateway.Name == name && (urls == 0 || len(e.Gateway.URLs) == urls) {
			return e.Gateway, from
		}
	}
}

func equalJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return slices.Equal(ja, jb)
}

// Two gateways named alike, each beside its own avahi-daemon: the later
// one takes avahi's other name, and both are found.
func TestBinaryLANNameTakenThroughAvahi(t *testing.T) {
	lan := lantest.New(t)
	cfg := fmt.Sprintf(lanConfig, "bench", "avahi")
	busA := lantest.StartAvahi(t, lan.A, waitLong).BusAddress
	busB := lantest.StartAvahi(t, lan.B, waitLong).BusAddress
	first := startLANGateway(t, lan.A, t.TempDir(), cfg, busA)
	first.err.waitFor(t, 0, `msg=announced via=avahi name=bench `, waitLong)
	watch := newChild("gateway discover --watch", lan.A.Command(gatewayBinary(t), "discover", "--watch", "--json"))
	watch.cmd.Env = childEnv()
	watch.start(t)
	_, next := waitGatewayEvent(t, watch, 0, false, "bench", 2)

	second := startLANGateway(t, lan.B, t.TempDir(), cfg, busB)
	second.err.waitFor(t, 0, `msg="announce: the name is taken on the LAN; announced under another" name=bench now="bench #2"`, waitLong)
	g, _ := waitGatewayEvent(t, watch, next, false, "bench #2", 2)
	if want := []string{"wss://10.77.0.2:7752/hal", "tcp://10.77.0.2:7751"}; !slices.Equal(g.URLs, want) {
		t.Errorf("bench #2 at %q, want %q", g.URLs, want)
	}
}

// avahi-daemon restarted under a running gateway (an upgrade of its
// package): the services are published again.
func TestBinaryLANAvahiRestarted(t *testing.T) {
	lan := lantest.New(t)
	av := lantest.StartAvahi(t, lan.A, waitLong)
	g := startLANGateway(t, lan.A, t.TempDir(), fmt.Sprintf(lanConfig, "bench", "avahi"), av.BusAddress)
	g.err.waitFor(t, 0, `msg=announced via=avahi name=bench `, waitLong)
	watch := newChild("gateway discover --watch", lan.B.Command(gatewayBinary(t), "discover", "--watch", "--json"))
	watch.cmd.Env = childEnv()
	watch.start(t)
	_, next := waitGatewayEvent(t, watch, 0, false, "bench", 2)

	from := g.err.len()
	av.Restart(waitLong)
	_, next = waitGatewayEvent(t, watch, next, true, "bench", 0)
	g.err.waitFor(t, from, `msg="announce: avahi-daemon restarted; announced again" services=2`, waitLong)
	waitGatewayEvent(t, watch, next, false, "bench", 2)
}

// gateway mcp --hub NAME: the agent's resources and the approval line it
// is given name the gateway as the LAN does, and that line works.
func TestBinaryLANMCPByName(t *testing.T) {
	lan := lantest.New(t)
	dir := t.TempDir()
	g := startLANGateway(t, lan.A, dir, fmt.Sprintf(lanConfig, "bench", "builtin"), lantest.NoBus(t))
	_, fp := g.err.waitFor(t, 0, `transport=wss .* fingerprint=([0-9a-f]{64})`, waitLong)
	from := g.err.len()
	agent := strings.TrimSpace(gwOK(t, "token", "add", "--state-dir", dir, "--name", "agent", "--kind", "agent", "--scope", "control_low"))
	g.secret(agent)
	g.err.waitFor(t, from, `msg="tokens loaded" .* tokens=2$`, waitLong)

	cmd := lan.B.Command(gatewayBinary(t), "mcp", "--hub", "bench", "--trust-announced")
	cmd.Env = append(childEnv(), "GATEWAY_TOKEN="+agent)
	c := mcpOver(t, &mcp.CommandTransport{Command: cmd})
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	res, err := c.ListResources(ctx, nil)
	if err != nil || !slices.ContainsFunc(res.Resources, func(r *mcp.Resource) bool { return r.URI == "openhal://bench/bench" }) {
		t.Fatalf("resources: %v %+v; want openhal://bench/bench", err, res)
	}
	r := c.call(t, "write_high_risk_device", map[string]any{"device": "sim.heater", "value": true, "reason": "by name"})
	var p struct {
		Confirmation struct {
			ID      string `json:"id"`
			Approve struct {
				CLI string `json:"cli"`
			} `json:"approve"`
		} `json:"confirmation"`
	}
	b, _ := json.Marshal(r.StructuredContent)
	json.Unmarshal(b, &p)
	id := p.Confirmation.ID
	if want := "gateway confirm approve " + id + " --hub bench --fingerprint " + fp[1]; id == "" || p.Confirmation.Approve.CLI != want {
		t.Fatalf("pending write: %s; want the approval line %q", b, want)
	}
	in := []string{"ip", "netns", "exec", lan.B.NS}
	if r := gwIn(t, in, "confirm", "approve", id, "--hub", "bench", "--fingerprint", fp[1], "--state-dir", dir); r.code != 0 {
		t.Fatalf("the approval line: exit %d, stderr %q", r.code, r.stderr)
	}
}
