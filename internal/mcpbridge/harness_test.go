package mcpbridge

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/internal/halhub/hubtest"
)

// The package's tests run the real Hub (hubtest) and the SDK's own client,
// joined to a Bridge by in-memory transports: what a test sees is what an
// MCP client of `gateway mcp` would see, without a process or a socket
// between them.

// waitLong bounds every wait for an event: far longer than any of them
// takes, so that a slow machine does not fail a test, and short enough
// that a lost event fails it.
const waitLong = 20 * time.Second

// Protocol revisions the tests speak.
const (
	protoNewest = "2026-07-28"
	proto0618   = "2025-06-18"
)

// newBench starts the real Hub over the bench, listening on WebSocket, and
// returns it with its URL.
func newBench(t *testing.T, opts ...hubtest.Option) (*hubtest.Bench, string) {
	t.Helper()
	bench := hubtest.New(t, opts...)
	return bench, bench.Listen("ws")
}

// testBridge is a Bridge and the messages it logs: its reconnections are
// events a test waits for.
type testBridge struct {
	*Bridge
	logs  chan string
	dials *atomic.Int32 // calls of Options.Dial
}

// newBridge builds a Bridge acting as tok on the Hub at url, closed when
// the test ends.
func newBridge(t *testing.T, url, tok string, redial bool) *testBridge {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	logs, dials := make(chan string, 100), &atomic.Int32{}
	b, err := New(ctx, Options{
		Dial: func(ctx context.Context) (*halclient.Conn, error) {
			dials.Add(1)
			return halclient.Dial(ctx, url, halclient.Options{Token: tok, ClientName: "mcpbridge-test"})
		},
		Redial:     redial,
		ConsoleURL: "http://bench.example/",
		Version:    "test",
		Logger:     slog.New(chanHandler{logs}),
	})
	if err != nil {
		t.Fatalf("new bridge on %s: %v", url, err)
	}
	t.Cleanup(b.Close)
	return &testBridge{Bridge: b, logs: logs, dials: dials}
}

// awaitLog waits for the bridge to log a message holding want.
func (b *testBridge) awaitLog(t *testing.T, want string) {
	t.Helper()
	for {
		if strings.Contains(within(t, b.logs, "the bridge to log "+want), want) {
			return
		}
	}
}

// chanHandler sends each message logged to a channel, dropping it when
// nobody reads: a test that does not wait for logs is not held up.
type chanHandler struct{ ch chan string }

func (h chanHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h chanHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h chanHandler) WithGroup(string) slog.Handler            { return h }
func (h chanHandler) Handle(_ context.Context, r slog.Record) error {
	select {
	case h.ch <- r.Message:
	default:
	}
	return nil
}

// client is an SDK client session on a Bridge and what it was told.
type client struct {
	*mcp.ClientSession
	toolsChanged chan struct{}
	resChanged   chan struct{}
	updated      chan string // URIs of notifications/resources/updated
}

// clientOptions change the client before it connects.
type clientOptions struct {
	version string // "" is the SDK's newest
	elicit  func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)
}

// connect connects an SDK client to b over in-memory transports.
func connect(t *testing.T, b *testBridge, o clientOptions) *client {
	t.Helper()
	c := &client{toolsChanged: make(chan struct{}, 100), resChanged: make(chan struct{}, 100), updated: make(chan string, 10000)}
	opt := &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			c.toolsChanged <- struct{}{}
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			c.resChanged <- struct{}{}
		},
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			c.updated <- r.Params.URI
		},
		ElicitationHandler: o.elicit,
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := b.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatalf("server side: %v", err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "mcpbridge-test", Version: "1"}, opt).
		Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: o.version})
	if err != nil {
		t.Fatalf("client connect (%q): %v", o.version, err)
	}
	t.Cleanup(func() { cs.Close() })
	c.ClientSession = cs
	return c
}

// call calls a tool; a protocol error fails the test.
func (c *client) call(t *testing.T, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := c.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return r
}

// ok calls a tool that must succeed and decodes its structured content
// into out (unless nil); it returns the result's text.
func (c *client) ok(t *testing.T, name string, args map[string]any, out any) string {
	t.Helper()
	r := c.call(t, name, args)
	if r.IsError {
		t.Fatalf("%s %v: tool error %q", name, args, text(r))
	}
	decode(t, r, out)
	return text(r)
}

// failing calls a tool that must end as a tool error holding each of want,
// and returns its text.
func (c *client) failing(t *testing.T, name string, args map[string]any, want ...string) string {
	t.Helper()
	r := c.call(t, name, args)
	got := text(r)
	if !r.IsError {
		t.Fatalf("%s %v: succeeded (%q), want a tool error", name, args, got)
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Fatalf("%s %v: tool error %q, want it to say %q", name, args, got, w)
		}
	}
	return got
}

// decode puts a result's structured content in out.
func decode(t *testing.T, r *mcp.CallToolResult, out any) {
	t.Helper()
	if out == nil {
		return
	}
	raw, err := json.Marshal(r.StructuredContent)
	if err == nil {
		err = json.Unmarshal(raw, out)
	}
	if err != nil {
		t.Fatalf("structured content %s: %v", raw, err)
	}
}

// text is a result's text content.
func text(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// tools lists the session's tools by name.
func (c *client) tools(t *testing.T) map[string]*mcp.Tool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	res, err := c.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	out := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		out[tool.Name] = tool
	}
	return out
}

// resources lists the session's resource URIs.
func (c *client) resources(t *testing.T) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	res, err := c.ListResources(ctx, nil)
	if err != nil {
		t.Fatalf("resources/list: %v", err)
	}
	var uris []string
	for _, r := range res.Resources {
		uris = append(uris, r.URI)
	}
	return uris
}

// deviceEnum is the device ids a tool's input schema allows.
func deviceEnum(t *testing.T, tool *mcp.Tool) []string {
	t.Helper()
	raw, err := json.Marshal(tool.InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties struct {
			Device struct {
				Enum []string `json:"enum"`
			} `json:"device"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s's schema %s: %v", tool.Name, raw, err)
	}
	return s.Properties.Device.Enum
}

// within waits for ch to yield, failing the test after waitLong.
func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLong):
		t.Fatalf("waited %v for %s", waitLong, what)
	}
	var zero T
	return zero
}

// closed waits for ch to close (or yield), failing after waitLong.
func closed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	within(t, ch, what)
}

// awaitUpdate waits for notifications/resources/updated of uri.
func awaitUpdate(t *testing.T, c *client, uri string) {
	t.Helper()
	for within(t, c.updated, "an update of "+uri) != uri {
	}
}

// expectQuiet fails if a list_changed notification comes within quiet.
func expectQuiet(t *testing.T, c *client) {
	t.Helper()
	select {
	case <-c.toolsChanged:
		t.Fatal("tools/list_changed, with no change of the tools")
	case <-c.resChanged:
		t.Fatal("resources/list_changed, with no change of the resources")
	case <-time.After(quiet):
	}
}

// subscribe subscribes c to uri.
func subscribe(t *testing.T, c *client, uri string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	if err := c.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatalf("subscribe %s: %v", uri, err)
	}
}
