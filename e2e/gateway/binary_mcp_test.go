package gateway_test

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP bridge tried with the SDK's own client against the real binary
// (issue 15): `gateway mcp` on stdio and /mcp on the HTTP listener, each
// with the SDK's newest protocol revision and with 2025-06-18.

// newestMCP is the newest revision of the SDK the gateway is built with.
const newestMCP = "2026-07-28"

// mcpWays are the ways in and the revisions every story runs over.
var mcpWays = []struct {
	name, transport, version string
}{
	{"stdio/newest", "stdio", ""},
	{"stdio/2025-06-18", "stdio", "2025-06-18"},
	{"http/newest", "http", ""},
	{"http/2025-06-18", "http", "2025-06-18"},
}

// mcpClient is an MCP client session and what it was told.
type mcpClient struct {
	*mcp.ClientSession
	updated chan string // resource URIs, as notifications/resources/updated names them
	acked   chan string // resource URIs, as notifications/subscriptions/acknowledged names them
	tools   chan struct{}
}

// ackedResources passes on the resource URIs of each
// notifications/subscriptions/acknowledged the client receives.
func ackedResources(acked chan<- string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams); ok {
				for _, uri := range p.Notifications.ResourceSubscriptions {
					select {
					case acked <- uri:
					default:
					}
				}
			}
			return next(ctx, method, req)
		}
	}
}

// subscribe subscribes c to uri and returns once the server has it. From
// MCP 2026-07-28 on (SEP-2575) the SDK's Subscribe returns once it has
// sent subscriptions/listen, before the server has the subscription: a
// change made then was never told (the test waited for it 18 minutes in
// one run of make test). The server acknowledges it with
// notifications/subscriptions/acknowledged; under the older revisions
// Subscribe is a request answered once the server has it.
func (c *mcpClient) subscribe(t *testing.T, uri string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	if err := c.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatalf("subscribe %s: %v", uri, err)
	}
	if c.InitializeResult().ProtocolVersion < sep2575 {
		return
	}
	for {
		select {
		case got := <-c.acked:
			if got == uri {
				return
			}
		case <-ctx.Done():
			t.Fatalf("subscribe %s: not acknowledged within %v", uri, waitLong)
		}
	}
}

// sep2575 is the MCP revision from which a subscription is a
// subscriptions/listen stream the server acknowledges.
const sep2575 = "2026-07-28"

// waitUpdated waits for notifications/resources/updated naming uri.
func (c *mcpClient) waitUpdated(t *testing.T, uri string) {
	t.Helper()
	deadline := time.After(waitLong)
	for {
		select {
		case got := <-c.updated:
			if got == uri {
				return
			}
		case <-deadline:
			t.Fatalf("no notifications/resources/updated for %s within %v", uri, waitLong)
		}
	}
}

// connectMCP connects an SDK client as tok, over transport ("stdio":
// `gateway mcp --hub <ws>`; "http": <http>/mcp with a bearer token).
func connectMCP(t *testing.T, g *gateway, transport, version, tok string, elicit ...func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) *mcpClient {
	t.Helper()
	c := &mcpClient{updated: make(chan string, 64), acked: make(chan string, 64), tools: make(chan struct{}, 64)}
	opt := &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			select {
			case c.updated <- r.Params.URI:
			default:
			}
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case c.tools <- struct{}{}:
			default:
			}
		},
	}
	if len(elicit) > 0 {
		opt.ElicitationHandler = elicit[0]
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "binary_test", Version: "1"}, opt)
	client.AddReceivingMiddleware(ackedResources(c.acked))
	var tr mcp.Transport
	switch transport {
	case "stdio":
		cmd := exec.Command(gatewayBinary(t), "mcp", "--hub", g.ws)
		cmd.Env = append(childEnv(), "GATEWAY_TOKEN="+tok)
		tr = &mcp.CommandTransport{Command: cmd}
	case "http":
		tr = &mcp.StreamableClientTransport{Endpoint: "http://" + g.httpAddr + "/mcp", HTTPClient: bearerClient(tok)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	cs, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect over %s (%q): %v", transport, version, err)
	}
	t.Cleanup(func() { cs.Close() })
	c.ClientSession = cs
	want := version
	if want == "" {
		want = newestMCP
	}
	if got := cs.InitializeResult().ProtocolVersion; got != want {
		t.Fatalf("over %s: negotiated %s, want %s", transport, got, want)
	}
	return c
}

// bearerClient sends tok as the bearer token of every request.
func bearerClient(tok string) *http.Client {
	return &http.Client{Transport: bearerOver{tok: tok, next: http.DefaultTransport}}
}

// call calls a tool and returns its result; a protocol error fails.
func (c *mcpClient) call(t *testing.T, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := c.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return r
}

// ok calls a tool that must succeed and decodes its structured content.
func (c *mcpClient) ok(t *testing.T, name string, args map[string]any, out any) string {
	t.Helper()
	r := c.call(t, name, args)
	text := resultText(r)
	if r.IsError {
		t.Fatalf("%s %v: tool error %q", name, args, text)
	}
	if out != nil {
		b, _ := json.Marshal(r.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: structured content %s: %v", name, b, err)
		}
	}
	return text
}

// failing calls a tool that must fail with a tool error holding want.
func (c *mcpClient) failing(t *testing.T, name string, args map[string]any, want ...string) string {
	t.Helper()
	r := c.call(t, name, args)
	text := resultText(r)
	if !r.IsError {
		t.Fatalf("%s %v: succeeded (%q), want a tool error", name, args, text)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Fatalf("%s %v: tool error %q, want it to say %q", name, args, text, w)
		}
	}
	return text
}

func resultText(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// toolNames lists the session's tools, checking that every tool sets each
// annotation the issue requires explicitly.
func (c *mcpClient) toolNames(t *testing.T) map[string]*mcp.Tool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	res, err := c.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	tools := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		a := tool.Annotations
		if a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil || a.Title == "" {
			t.Errorf("tool %s: annotations %+v, want every hint set", tool.Name, a)
		}
		tools[tool.Name] = tool
	}
	return tools
}

func keys[V any](m map[string]V) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	slices.Sort(k)
	return k
}

func TestBinaryMCP(t *testing.T) {
	g := startGateway(t, t.TempDir(), "--mcp")
	agent := g.addToken(t, "bench-agent", "control_low")
	reader := g.addToken(t, "watcher", "read")
	for _, way := range mcpWays {
		t.Run(way.name, func(t *testing.T) {
			t.Run("tools", func(t *testing.T) { mcpTools(t, g, way.transport, way.version, agent, reader) })
			t.Run("read and write", func(t *testing.T) { mcpReadWrite(t, g, way.transport, way.version, agent) })
			t.Run("pending approved", func(t *testing.T) { mcpPending(t, g, way.transport, way.version, agent) })
			t.Run("resource update", func(t *testing.T) { mcpResources(t, g, way.transport, way.version, agent) })
			t.Run("stop", func(t *testing.T) { mcpStop(t, g, way.transport, way.version, agent) })
		})
	}
}

// mcpTools: the agent's tools by scope, with their annotations; a read
// token sees no tool that writes or stops.
func mcpTools(t *testing.T, g *gateway, transport, version, agent, reader string) {
	c := connectMCP(t, g, transport, version, agent)
	tools := c.toolNames(t)
	want := []string{"confirmation_status", "emergency_stop", "list_devices", "read_device", "wait_for_value", "write_device", "write_high_risk_device"}
	if got := keys(tools); !slices.Equal(got, want) {
		t.Fatalf("control_low tools %v, want %v", got, want)
	}
	for name, destructive := range map[string]bool{"write_device": false, "write_high_risk_device": true, "emergency_stop": false, "read_device": false} {
		if got := *tools[name].Annotations.DestructiveHint; got != destructive {
			t.Errorf("%s: destructiveHint %v, want %v", name, got, destructive)
		}
	}
	if !tools["read_device"].Annotations.ReadOnlyHint || tools["write_device"].Annotations.ReadOnlyHint {
		t.Errorf("readOnlyHint: read_device %v, write_device %v", tools["read_device"].Annotations.ReadOnlyHint, tools["write_device"].Annotations.ReadOnlyHint)
	}
	if d := tools["write_high_risk_device"].Description; !strings.Contains(d, "sim.heater") || strings.Contains(d, "sim.led") || !strings.Contains(d, "pending") {
		t.Errorf("write_high_risk_device's description %q: want sim.heater only, and what pending means", d)
	}

	r := connectMCP(t, g, transport, version, reader)
	rt := r.toolNames(t)
	if got := keys(rt); !slices.Equal(got, []string{"confirmation_status", "list_devices", "read_device", "wait_for_value"}) {
		t.Fatalf("read tools %v, want no write and no stop", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	_, err := r.CallTool(ctx, &mcp.CallToolParams{Name: "write_device", Arguments: map[string]any{"device": "sim.led", "value": true}})
	if err == nil || !strings.Contains(err.Error(), `unknown tool "write_device"`) {
		t.Fatalf("a read token's write_device: %v, want unknown tool", err)
	}
}

// mcpReadWrite: list, read, write, wait, and a bad argument.
func mcpReadWrite(t *testing.T, g *gateway, transport, version, agent string) {
	c := connectMCP(t, g, transport, version, agent)
	var list struct {
		Devices []struct {
			ID            string `json:"id"`
			NeedsApproval bool   `json:"needsApproval"`
		} `json:"devices"`
		Stopped any `json:"stopped"`
	}
	c.ok(t, "list_devices", nil, &list)
	if len(list.Devices) != 7 || list.Stopped != nil {
		t.Fatalf("list_devices: %+v", list)
	}
	for _, d := range list.Devices {
		if d.NeedsApproval != (d.ID == "sim.heater") {
			t.Errorf("%s: needsApproval %v", d.ID, d.NeedsApproval)
		}
	}
	var temp struct {
		Value map[string]float64 `json:"value"`
		Unit  string             `json:"unit"`
	}
	c.ok(t, "read_device", map[string]any{"device": "sim.temperature"}, &temp)
	if _, ok := temp.Value["temperature"]; !ok || temp.Unit != "Cel" {
		t.Fatalf("read_device sim.temperature: %+v", temp)
	}

	var w struct {
		Status string `json:"status"`
		Value  any    `json:"value"`
	}
	c.ok(t, "write_device", map[string]any{"device": "sim.led", "value": true, "reason": "mcp test"}, &w)
	if w.Status != "applied" || w.Value != true {
		t.Fatalf("write_device sim.led: %+v", w)
	}
	if got := strings.TrimSpace(gwOK(t, "read", "sim.led", "--hub", g.ws, "--state-dir", g.dir)); got != "true" {
		t.Fatalf("sim.led after the MCP write reads %q from the CLI", got)
	}
	var waited struct {
		Met   bool `json:"met"`
		Value any  `json:"value"`
	}
	c.ok(t, "wait_for_value", map[string]any{"device": "sim.led", "op": "eq", "value": true, "timeoutSeconds": 5}, &waited)
	if !waited.Met {
		t.Fatalf("wait_for_value sim.led eq true: %+v", waited)
	}
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		r, _ := c.CallTool(context.Background(), &mcp.CallToolParams{Name: "wait_for_value",
			Arguments: map[string]any{"device": "sim.fan", "op": "ge", "value": 40, "timeoutSeconds": 30}})
		done <- r
	}()
	// Before or after the wait began: either its first read or a value
	// notification meets the condition.
	gwOK(t, "write", "sim.fan", "42", "--hub", g.ws, "--state-dir", g.dir)
	r := <-done
	if r == nil || r.IsError || !strings.Contains(fmt.Sprint(r.StructuredContent), "met:true") {
		t.Fatalf("wait_for_value sim.fan ge 40: %+v", r)
	}
	c.ok(t, "write_device", map[string]any{"device": "sim.fan", "value": 0}, nil)
	c.ok(t, "write_device", map[string]any{"device": "sim.led", "value": false}, nil)

	// Bad arguments: a tool error naming what was wrong, nothing changed.
	c.failing(t, "write_device", map[string]any{"device": "sim.lde", "value": true}, "device")
	c.failing(t, "write_device", map[string]any{"device": "sim.heater", "value": true}, "device")
	c.failing(t, "write_device", map[string]any{"device": "sim.fan", "value": 250}, "INVALID_PARAMS", "sim.fan")
	c.failing(t, "read_device", map[string]any{}, "device")
}

// mcpPending: a high-risk write by a control_low agent is pending, not
// applied; an admin approves it with the CLI while the agent waits on
// confirmation_status; then it is applied.
func mcpPending(t *testing.T, g *gateway, transport, version, agent string) {
	c := connectMCP(t, g, transport, version, agent)
	r := c.call(t, "write_high_risk_device", map[string]any{"device": "sim.heater", "value": true, "reason": "preheat for run 7"})
	text := resultText(r)
	var p struct {
		Status       string `json:"status"`
		Confirmation struct {
			ID        string    `json:"id"`
			Status    string    `json:"status"`
			ExpiresAt time.Time `json:"expiresAt"`
			Approve   struct {
				Console string `json:"console"`
				CLI     string `json:"cli"`
			} `json:"approve"`
		} `json:"confirmation"`
	}
	b, _ := json.Marshal(r.StructuredContent)
	json.Unmarshal(b, &p)
	id := p.Confirmation.ID
	if r.IsError || p.Status != "pending" || id == "" || p.Confirmation.ExpiresAt.IsZero() ||
		!strings.Contains(p.Confirmation.Approve.CLI, "gateway confirm approve "+id) ||
		!strings.Contains(text, "NOT APPLIED") || !strings.Contains(text, id) {
		t.Fatalf("a pending heater write: error %v, text %q, structured %s", r.IsError, text, b)
	}
	if transport == "http" && p.Confirmation.Approve.Console != "http://"+g.httpAddr+"/" {
		t.Errorf("console %q, want the listener's", p.Confirmation.Approve.Console)
	}
	if got := strings.TrimSpace(gwOK(t, "read", "sim.heater", "--hub", g.ws, "--state-dir", g.dir)); got != "false" {
		t.Fatalf("sim.heater %s while its write is pending", got)
	}
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		r, _ := c.CallTool(context.Background(), &mcp.CallToolParams{Name: "confirmation_status",
			Arguments: map[string]any{"id": id, "waitSeconds": 30}})
		done <- r
	}()
	gwOK(t, "confirm", "approve", id, "--hub", g.ws, "--state-dir", g.dir)
	r = <-done
	if r == nil || r.IsError || !strings.Contains(resultText(r), "approved") {
		t.Fatalf("confirmation_status after approval: %+v", r)
	}
	if got := strings.TrimSpace(gwOK(t, "read", "sim.heater", "--hub", g.ws, "--state-dir", g.dir)); got != "true" {
		t.Fatalf("sim.heater %s after approval", got)
	}
	// Its safe value needs no approval (spec §4).
	var w struct{ Status string }
	c.ok(t, "write_high_risk_device", map[string]any{"device": "sim.heater", "value": false, "reason": "done"}, &w)
	if w.Status != "applied" {
		t.Fatalf("heater back to safe: %+v", w)
	}
	c.failing(t, "confirmation_status", map[string]any{"id": "c-nosuch"}, "CONFIRMATION_NOT_FOUND")
}

// mcpResources: the bench and each device as resources; a value change
// becomes notifications/resources/updated for a subscriber.
func mcpResources(t *testing.T, g *gateway, transport, version, agent string) {
	c := connectMCP(t, g, transport, version, agent)
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	res, err := c.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var led, bench string
	for _, r := range res.Resources {
		switch {
		case strings.HasSuffix(r.URI, "/devices/sim.led"):
			led = r.URI
		case strings.HasSuffix(r.URI, "/bench"):
			bench = r.URI
		}
	}
	if len(res.Resources) != 8 || led == "" || bench == "" || !strings.HasPrefix(led, "openhal://") {
		t.Fatalf("resources: %d, led %q, bench %q", len(res.Resources), led, bench)
	}
	c.subscribe(t, led)
	gwOK(t, "write", "sim.led", "true", "--hub", g.ws, "--state-dir", g.dir)
	c.waitUpdated(t, led)
	rr, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: led})
	if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, `"value": true`) {
		t.Fatalf("read %s after the change: %v %+v", led, err, rr)
	}
	gwOK(t, "write", "sim.led", "false", "--hub", g.ws, "--state-dir", g.dir)
	if _, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: bench}); err != nil {
		t.Fatalf("read %s: %v", bench, err)
	}
}

// mcpStop: the agent engages the stop; its writes are then refused with
// words that say what to do; only a person resumes (the CLI here).
func mcpStop(t *testing.T, g *gateway, transport, version, agent string) {
	c := connectMCP(t, g, transport, version, agent)
	var s struct {
		Stopped     bool     `json:"stopped"`
		SafeApplied []string `json:"safeApplied"`
	}
	text := c.ok(t, "emergency_stop", map[string]any{"reason": "smoke from the heater"}, &s)
	if !s.Stopped || !slices.Contains(s.SafeApplied, "sim.heater") || !strings.Contains(text, "person") {
		t.Fatalf("emergency_stop: %q %+v", text, s)
	}
	c.failing(t, "write_device", map[string]any{"device": "sim.led", "value": true}, "STOPPED", "person")
	var list struct {
		Stopped *struct{ By, Reason string } `json:"stopped"`
	}
	c.ok(t, "list_devices", nil, &list)
	if list.Stopped == nil || list.Stopped.Reason != "smoke from the heater" || !strings.Contains(list.Stopped.By, "bench-agent") {
		t.Fatalf("list_devices while stopped: %+v", list.Stopped)
	}
	c.failing(t, "emergency_stop", map[string]any{"reason": ""}, "reason")
	gwOK(t, "resume", "--hub", g.ws, "--state-dir", g.dir)
}

// TestBinaryMCPOverTLS: /mcp on the HTTPS listener, and `gateway mcp`
// dialled to a gateway on the LAN over wss:// with its certificate pinned
// — the way Claude Desktop reaches a gateway that is not on its machine.
func TestBinaryMCPOverTLS(t *testing.T) {
	g := startGateway(t, t.TempDir(), "--mcp", "--wss", "127.0.0.1:0", "--tls", "127.0.0.1:0")
	wss, _, fp := tlsURLs(t, g)
	agent := g.addToken(t, "bench-agent", "control_low")

	cmd := exec.Command(gatewayBinary(t), "mcp", "--hub", wss, "--fingerprint", fp)
	cmd.Env = append(childEnv(), "GATEWAY_TOKEN="+agent)
	stdio := mcpOver(t, &mcp.CommandTransport{Command: cmd})
	https := mcpOver(t, &mcp.StreamableClientTransport{
		Endpoint:   "https://" + strings.TrimSuffix(strings.TrimPrefix(wss, "wss://"), "/hal") + "/mcp",
		HTTPClient: pinnedClient(t, agent, fp),
	})
	for name, c := range map[string]*mcpClient{"stdio over wss": stdio, "https": https} {
		var w struct{ Status string }
		c.ok(t, "write_device", map[string]any{"device": "sim.led", "value": true}, &w)
		r := c.call(t, "write_high_risk_device", map[string]any{"device": "sim.heater", "value": true, "reason": "tls"})
		b, _ := json.Marshal(r.StructuredContent)
		host := strings.TrimPrefix(strings.TrimSuffix(wss, "/hal"), "wss://")
		if w.Status != "applied" || r.IsError || !strings.Contains(string(b), `"console":"https://`+host+`/"`) {
			t.Errorf("%s: write %+v; pending %s, want the console on https://%s/", name, w, b, host)
		}
	}
}

// mcpOver connects the SDK's client over tr with the newest revision.
func mcpOver(t *testing.T, tr mcp.Transport) *mcpClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "binary_test", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return &mcpClient{ClientSession: cs}
}

// pinnedClient is an HTTPS client that trusts the certificate with the
// fingerprint fp alone, and sends tok as the bearer token.
func pinnedClient(t *testing.T, tok, fp string) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{
		InsecureSkipVerify: true, // the fingerprint is checked instead, below
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if sum := sha256.Sum256(raw[0]); hex.EncodeToString(sum[:]) != fp {
				return fmt.Errorf("certificate %x is not the pinned one", sum)
			}
			return nil
		},
	}
	return &http.Client{Transport: bearerOver{tok: tok, next: tr}}
}

type bearerOver struct {
	tok  string
	next http.RoundTripper
}

func (b bearerOver) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return b.next.RoundTrip(r)
}

// TestBinaryMCPLimitedToken: a token limited to some devices offers tools
// and resources for those alone, and the schema's enum is the proof a
// client sees; `gateway mcp` never falls back on the admin token.
func TestBinaryMCPLimitedToken(t *testing.T) {
	g := startGateway(t, t.TempDir(), "--mcp")
	tok := g.addToken(t, "led-agent", "control_low", "--devices", "sim.led,sim.temperature")
	for _, way := range mcpWays {
		t.Run(way.name, func(t *testing.T) {
			c := connectMCP(t, g, way.transport, way.version, tok)
			tools := c.toolNames(t)
			if _, ok := tools["write_high_risk_device"]; ok {
				t.Fatal("write_high_risk_device offered to a token that sees no high-risk device")
			}
			b, _ := json.Marshal(tools["write_device"].InputSchema)
			if !strings.Contains(string(b), `"enum":["sim.led"]`) {
				t.Fatalf("write_device's schema %s: want the enum [sim.led]", b)
			}
			c.failing(t, "read_device", map[string]any{"device": "sim.fan"}, "device")
			ctx, cancel := context.WithTimeout(context.Background(), waitLong)
			defer cancel()
			res, err := c.ListResources(ctx, nil)
			if err != nil || len(res.Resources) != 3 { // the bench and two devices
				t.Fatalf("resources of a limited token: %v %d", err, len(res.Resources))
			}
		})
	}

	r := gw(t, "mcp", "--hub", g.ws) // no token given: admin.token is never looked for
	if r.code != 2 || !strings.Contains(r.stderr, "agent's token is required") || r.stdout != "" {
		t.Fatalf("gateway mcp without a token: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}
