package browser

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestConsoleBesideCLIAndMCP: the console in chromium, ten CLI calls and
// an MCP session, all from the same address (127.0.0.1) and all at once,
// all succeed (issue 28). The page's files leave chromium's pooled
// keep-alive connections idle, which count toward the address's budget of
// connections not yet authenticated (8); each newcomer the budget would
// refuse closes the longest idle of them instead, and chromium opens
// another when it needs one. On the old code the CLI calls found the
// budget full of the browser's idle connections and were reset.
func TestConsoleBesideCLIAndMCP(t *testing.T) {
	chromiumPath(t)
	g := startGateway(t, t.TempDir(), "127.0.0.1:0", "127.0.0.1:0", "--mcp")
	admin := g.adminToken(t)
	agent := g.addToken(t, "mcp-agent", "agent", "control_low")
	p := logIn(t, g, admin)
	bin := gatewayBinary(t)

	var wg sync.WaitGroup
	errs := make(chan error, 16)
	wg.Go(func() {
		// The page again: every file revalidated, the Hub reconnected.
		ctx, cancel := context.WithTimeout(p.ctx, waitLong)
		defer cancel()
		if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
			errs <- fmt.Errorf("reload the console: %v", err)
		}
	})
	for i := range 10 {
		wg.Go(func() {
			args := [][]string{{"devices"}, {"read", "sim.led"}, {"status"}}[i%3]
			if err := runCLI(bin, append(args, "--hub", g.ws(), "--token", admin)...); err != nil {
				errs <- fmt.Errorf("CLI call %d (%s): %v", i+1, args[0], err)
			}
		})
	}
	wg.Go(func() {
		if err := mcpListDevices(g, agent); err != nil {
			errs <- fmt.Errorf("the MCP session: %v", err)
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	p.waitText(hook("conn-status"), "^connected$")
	p.do(chromedp.WaitVisible(deviceHook("sim.led", "")))
	t.Logf("the gateway's counts: %s", metricLines(t, g, admin, "gateway_http_idle_reclaimed_total", "gateway_hal_connections_waited_total", "gateway_hal_connections_refused_total"))
}

// metricLines returns the lines of /metrics that give names.
func metricLines(t *testing.T, g *gateway, tok string, names ...string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+g.httpAddr+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		for _, n := range names {
			if strings.HasPrefix(line, n+" ") {
				out = append(out, line)
			}
		}
	}
	return strings.Join(out, ", ")
}

// TestConsoleRetriesWhenBusy: a gateway that answers the console's
// hal/initialize BUSY — here its token already holds all the connections
// one token may (hub.limits.maxConnectionsPerToken, 1 here) — is tried
// again: the status line says why and when, and the console connects
// once the token's other connection is gone. Before, the console gave up
// at the first BUSY and went back to the login form.
func TestConsoleRetriesWhenBusy(t *testing.T) {
	chromiumPath(t)
	config := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(config, []byte("board: sim\nhub:\n  limits: {maxConnectionsPerToken: 1}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, t.TempDir(), "127.0.0.1:0", "127.0.0.1:0", "--config", config)
	admin := g.adminToken(t)
	other := g.dial(t, admin) // the token's one connection

	p := newPage(t)
	p.do(chromedp.Navigate(g.url()))
	p.fill(hook("login-token"), admin)
	p.do(chromedp.Click(hook("login-submit")))
	p.waitText(hook("conn-status"), `^reconnecting \(this token has as many connections open as one token may: .*; next try in [0-9.]+ s\)$`)
	other.Close()
	p.waitText(hook("conn-status"), "^connected$")
	p.do(chromedp.WaitVisible(deviceHook("sim.led", "")))
}

// runCLI runs a client command of the gateway binary bin to its end; an
// error holds what it wrote on standard error.
func runCLI(bin string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = childEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// mcpListDevices opens an MCP session on /mcp as tok, over one keep-alive
// connection as an MCP client would, and calls list_devices.
func mcpListDevices(g *gateway, tok string) error {
	hc := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	defer hc.CloseIdleConnections()
	session := ""
	post := func(body string) (string, error) {
		req, err := http.NewRequest(http.MethodPost, "http://"+g.httpAddr+"/mcp", strings.NewReader(body))
		if err != nil {
			return "", err
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := hc.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return "", err
		}
		if resp.StatusCode/100 != 2 {
			return "", fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(b))
		}
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
			session = id
		}
		return string(b), nil
	}
	if _, err := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"busy","version":"1"}}}`); err != nil {
		return fmt.Errorf("initialize: %v", err)
	}
	if _, err := post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		return fmt.Errorf("initialized: %v", err)
	}
	out, err := post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_devices","arguments":{}}}`)
	if err != nil {
		return fmt.Errorf("list_devices: %v", err)
	}
	if !strings.Contains(out, "sim.led") {
		return fmt.Errorf("list_devices: %q", out)
	}
	return nil
}
