package gateway_test

// /mcp tried as an attacker would (issue 15), on the real binary, with raw
// net/http requests where the SDK's client would hide the answer: the
// endpoint off by default, tokens refused and rate-limited, a session
// taken over with another token, web pages of other sites, DNS rebinding,
// oversize bodies, many sessions, a revoked token, and a clean stop with
// sessions open. The helpers are in binary_helpers_test.go and
// binary_mcp_test.go.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openhal/gateway/internal/halhub/audit"
)

// mcpRevision is the revision the raw requests speak: one with sessions.
const mcpRevision = "2025-06-18"

// mcpInit is an initialize request of a raw client.
const mcpInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + mcpRevision + `","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// mcpAnswer is an HTTP answer of /mcp as it came.
type mcpAnswer struct {
	code   int
	header http.Header
	body   string
}

// message is the answer's JSON-RPC message: the body of a JSON answer,
// or the data of an event stream's first message.
func (a mcpAnswer) message() string {
	for _, line := range strings.Split(a.body, "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			return data
		}
	}
	return a.body
}

func (a mcpAnswer) String() string {
	return fmt.Sprintf("%d %q", a.code, strings.TrimSpace(a.body))
}

// mcpReq is one raw request to /mcp.
type mcpReq struct {
	method  string // POST when ""
	token   string // no Authorization when ""
	session string // Mcp-Session-Id
	body    string
	header  map[string]string // more headers; "Host" sets the request's Host
}

// mcpDo sends r to the gateway's /mcp on a new connection and reads the
// whole answer.
func mcpDo(t *testing.T, g *gateway, r mcpReq) mcpAnswer {
	t.Helper()
	if r.method == "" {
		r.method = http.MethodPost
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, r.method, "http://"+g.httpAddr+"/mcp", strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if r.method == http.MethodGet {
		req.Header.Set("Accept", "text/event-stream")
	}
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	if r.session != "" {
		req.Header.Set("Mcp-Session-Id", r.session)
		req.Header.Set("Mcp-Protocol-Version", mcpRevision)
	}
	for k, v := range r.header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s /mcp: %v", r.method, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s /mcp: reading the answer: %v", r.method, err)
	}
	return mcpAnswer{code: resp.StatusCode, header: resp.Header, body: string(b)}
}

// mcpSession opens a session as tok (initialize, then initialized) and
// returns its id.
func mcpSession(t *testing.T, g *gateway, tok string) string {
	t.Helper()
	a := mcpDo(t, g, mcpReq{token: tok, body: mcpInit})
	id := a.header.Get("Mcp-Session-Id")
	if a.code != http.StatusOK || id == "" || !strings.Contains(a.message(), `"protocolVersion":"`+mcpRevision+`"`) {
		t.Fatalf("initialize: %v, session %q", a, id)
	}
	n := mcpDo(t, g, mcpReq{token: tok, session: id, body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`})
	if n.code != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %v", n)
	}
	return id
}

// toolCall is the body of a tools/call request.
func toolCall(name string, args map[string]any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call",
		"params": map[string]any{"name": name, "arguments": args}})
	return string(b)
}

// readLED reads sim.led with the CLI as admin.
func readLED(t *testing.T, g *gateway) string {
	t.Helper()
	return strings.TrimSpace(gwOK(t, "read", "sim.led", "--hub", g.ws, "--state-dir", g.dir))
}

// TestBinaryMCPOffByDefault: without --mcp there is no /mcp — POST and
// DELETE are refused by the mux (405), a GET is the console's, not an
// event stream — and the console still answers GET /.
func TestBinaryMCPOffByDefault(t *testing.T) {
	g := startGateway(t, t.TempDir())
	admin := readAdminToken(t, g.dir)
	for _, r := range []mcpReq{
		{token: admin, body: mcpInit},
		{method: http.MethodDelete, token: admin, session: "x"},
	} {
		if a := mcpDo(t, g, r); a.code != http.StatusMethodNotAllowed && a.code != http.StatusNotFound {
			t.Errorf("%s /mcp without --mcp: %v, want 405 or 404", r.method, a)
		}
	}
	if a := mcpDo(t, g, mcpReq{method: http.MethodGet, token: admin, session: "x"}); a.code == http.StatusOK && strings.HasPrefix(a.header.Get("Content-Type"), "text/event-stream") {
		t.Errorf("GET /mcp without --mcp is an event stream: %v", a)
	}
	resp, err := http.Get("http://" + g.httpAddr + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "<html") {
		t.Errorf("GET / without --mcp: %d %.80q, want the console", resp.StatusCode, b)
	}
	if strings.Contains(g.err.text(), "mcp:") {
		t.Errorf("the gateway logged about MCP without --mcp:\n%s", g.err.text())
	}
}

// TestBinaryMCPTokens: /mcp refuses a request without a bearer token and
// an unknown token (401, WWW-Authenticate: Bearer); a flood of bad tokens
// from one address is answered 429 once the Hub rate-limits the address
// (issue 12's admission rules, as on /hal), while the operator's token and
// an agent's, from the same address, are admitted at once. The audit
// accounts for every failure, one entry each only up to the limit: the log
// stays small; the gateway's own log has no line per failure above debug.
func TestBinaryMCPTokens(t *testing.T) {
	const flood = 100
	dir := t.TempDir()
	g := startGateway(t, dir, "--mcp")
	admin := readAdminToken(t, dir)
	agent := g.addToken(t, "mcp-agent", "control_low")

	a := mcpDo(t, g, mcpReq{body: mcpInit})
	if a.code != http.StatusUnauthorized || !strings.HasPrefix(a.header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("no bearer: %v, WWW-Authenticate %q; want 401 Bearer", a, a.header.Get("WWW-Authenticate"))
	}
	for i := range 5 {
		a := mcpDo(t, g, mcpReq{token: "gw_not-a-token-" + strconv.Itoa(i), body: mcpInit})
		if a.code != http.StatusUnauthorized || !strings.HasPrefix(a.header.Get("WWW-Authenticate"), "Bearer") {
			t.Fatalf("unknown token %d: %v, WWW-Authenticate %q; want 401 Bearer", i, a, a.header.Get("WWW-Authenticate"))
		}
	}
	mark := g.err.len()
	for i := range flood {
		a := mcpDo(t, g, mcpReq{token: "gw_flood-" + strconv.Itoa(i), body: mcpInit})
		if a.code != http.StatusTooManyRequests || a.header.Get("Retry-After") == "" {
			t.Fatalf("bad token %d past the limit: %v, Retry-After %q; want 429 with Retry-After", i, a, a.header.Get("Retry-After"))
		}
	}
	for name, tok := range map[string]string{"the operator": admin, "an agent": agent} {
		start := time.Now()
		mcpSession(t, g, tok)
		if took := time.Since(start); took > stopWithin {
			t.Errorf("%s's session after the flood took %v", name, took)
		}
	}
	// The gateway's own log, at its usual levels, has no line per failure
	// either.
	lines := strings.Split(g.err.text(), "\n")[mark:]
	info := 0
	for _, l := range lines {
		if !strings.Contains(l, "level=DEBUG") {
			info++
		}
	}
	if info > 2 {
		t.Errorf("%d lines above debug level in the gateway's log during the flood", info)
	}
	m := waitMetrics(t, g, admin, func(m map[string]float64) bool { return m["gateway_hal_rate_limited_total"] >= flood })
	if m["gateway_hal_unauthorized_total"] != 5+flood {
		t.Errorf("gateway_hal_unauthorized_total = %v, want %d", m["gateway_hal_unauthorized_total"], 5+flood)
	}

	g.stop(t) // writes the count entries still open
	entries, _ := readAuditFiles(t, filepath.Join(dir, "audit"))
	one := 0
	for _, e := range entries {
		if e.Principal.Kind == "anonymous" && e.Action != audit.ActionCount {
			one++
		}
	}
	if got := accounted(entries)["127.0.0.1 initialize unauthorized"]; got != 5+flood || one != 5 {
		t.Errorf("the audit accounts for %d refused tokens in %d entries of their own; want %d, 5 of their own", got, one, 5+flood)
	}
	size := checkAuditDir(t, filepath.Join(dir, "audit"))
	t.Logf("the audit files after the flood: %d bytes", size)
	if size > 16<<10 {
		t.Errorf("the audit files hold %d bytes after the flood, want a few KiB", size)
	}
}

// TestBinaryMCPSessionHijack: a session opened with agent A's token, then
// used with agent B's token (its Mcp-Session-Id learnt somehow), is
// refused — POST, GET and DELETE alike — and nothing is done as A; with an
// unknown token it is 401. Over the newest revision, which has no
// sessions, the id is ignored and the request acts as B, whose write the
// audit shows. A's session still serves A afterwards.
func TestBinaryMCPSessionHijack(t *testing.T) {
	g := startGateway(t, t.TempDir(), "--mcp")
	a := g.addToken(t, "agent-a", "control_low")
	b := g.addToken(t, "agent-b", "control_low")
	session := mcpSession(t, g, a)
	write := toolCall("write_device", map[string]any{"device": "sim.led", "value": true, "reason": "hijack"})

	for _, r := range []mcpReq{
		{token: b, session: session, body: write},
		{method: http.MethodGet, token: b, session: session},
		{method: http.MethodDelete, token: b, session: session},
	} {
		if ans := mcpDo(t, g, r); ans.code != http.StatusForbidden {
			t.Errorf("%s with A's session and B's token: %v, want 403", r.method, ans)
		}
	}
	if ans := mcpDo(t, g, mcpReq{token: "gw_not-a-token", session: session, body: write}); ans.code != http.StatusUnauthorized {
		t.Errorf("A's session with an unknown token: %v, want 401", ans)
	}
	if got := readLED(t, g); got != "false" {
		t.Fatalf("sim.led is %s after the hijack attempts", got)
	}
	// The newest revision has no sessions: its handler ignores the id, and
	// acts as the token's agent, B.
	stateless := strings.Replace(write, `"params":{`, `"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"`+newestMCP+
		`","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}},`, 1)
	ans := mcpDo(t, g, mcpReq{token: b, session: session, body: stateless,
		header: map[string]string{"Mcp-Protocol-Version": newestMCP, "Mcp-Method": "tools/call", "Mcp-Name": "write_device"}})
	if ans.code != http.StatusOK || !strings.Contains(ans.message(), `"status":"applied"`) {
		t.Fatalf("B's write over the newest revision, with A's session id: %v", ans)
	}
	writers := map[string]int{}
	for _, e := range auditJSON(t, g) {
		if e.Action == "write" {
			writers[e.Principal.Name]++
		}
	}
	if len(writers) != 1 || writers["agent-b"] != 1 {
		t.Errorf("the audit's writers: %v, want B's one write and nothing of A's", writers)
	}
	// A's session survived B's DELETE.
	ans = mcpDo(t, g, mcpReq{token: a, session: session, body: toolCall("read_device", map[string]any{"device": "sim.led"})})
	if ans.code != http.StatusOK || !strings.Contains(ans.message(), `"value":true`) {
		t.Fatalf("A's own session after the attempts: %v", ans)
	}
}

// TestBinaryMCPOrigin: a web page of another site is refused (403) before
// any token is tried, a valid one included; the gateway's own pages and
// those of hub.allowedOrigins pass. A request to the loopback address
// that names another host (DNS rebinding: a page of evil.example whose
// name now points at 127.0.0.1) is refused as well, before its token is
// tried. The Hub saw no token at all: none was counted as refused.
func TestBinaryMCPOrigin(t *testing.T) {
	dir := t.TempDir()
	config := writeConfig(t, "board: sim\nhub:\n  allowedOrigins: [\"console.example\"]\n  mcp: {enabled: true}\n")
	g := startGateway(t, dir, "--config", config)
	admin := readAdminToken(t, dir)
	agent := g.addToken(t, "mcp-agent", "control_low")
	_, port, _ := strings.Cut(g.httpAddr, ":")

	for _, c := range []struct {
		name   string
		header map[string]string
	}{
		{"another site", map[string]string{"Origin": "http://evil.example"}},
		{"another port", map[string]string{"Origin": "http://127.0.0.1:1"}},
		{"an opaque origin", map[string]string{"Origin": "null"}},
		{"DNS rebinding", map[string]string{"Host": "evil.example:" + port}},
		{"DNS rebinding, same origin", map[string]string{"Host": "evil.example:" + port, "Origin": "http://evil.example:" + port}},
	} {
		for _, tok := range []string{"gw_not-a-token", agent} {
			if a := mcpDo(t, g, mcpReq{token: tok, body: mcpInit, header: c.header}); a.code != http.StatusForbidden {
				t.Errorf("%s: %v, want 403", c.name, a)
			}
		}
	}
	m := readMetrics(t, http.DefaultClient, "http://"+g.httpAddr+"/metrics", admin)
	if m["gateway_hal_unauthorized_total"] != 0 {
		t.Errorf("gateway_hal_unauthorized_total = %v: a refused page's token was tried", m["gateway_hal_unauthorized_total"])
	}

	for _, c := range []struct {
		name   string
		header map[string]string
	}{
		{"no Origin (a program)", nil},
		{"the gateway's own page", map[string]string{"Origin": "http://" + g.httpAddr}},
		{"hub.allowedOrigins", map[string]string{"Origin": "https://console.example"}},
		{"localhost", map[string]string{"Host": "localhost:" + port, "Origin": "http://localhost:" + port}},
	} {
		if a := mcpDo(t, g, mcpReq{token: agent, body: mcpInit, header: c.header}); a.code != http.StatusOK || a.header.Get("Mcp-Session-Id") == "" {
			t.Errorf("%s: %v, want a session", c.name, a)
		}
	}
}

// TestBinaryMCPOversize: a body over 1 MiB is answered 413 — a first
// request, one of a session, one of the newest revision — and the gateway
// serves on, the session included.
func TestBinaryMCPOversize(t *testing.T) {
	g := startGateway(t, t.TempDir(), "--mcp")
	agent := g.addToken(t, "mcp-agent", "control_low")
	session := mcpSession(t, g, agent)
	huge := toolCall("write_device", map[string]any{"device": "sim.led", "value": true, "reason": strings.Repeat("x", 1<<20)})
	for _, r := range []mcpReq{
		{token: agent, body: huge},
		{token: agent, session: session, body: huge},
		{token: agent, body: huge, header: map[string]string{"Mcp-Protocol-Version": newestMCP, "Mcp-Method": "tools/call", "Mcp-Name": "write_device"}},
	} {
		if a := mcpDo(t, g, r); a.code != http.StatusRequestEntityTooLarge {
			t.Errorf("%d bytes (session %q): %v, want 413", len(r.body), r.session, a)
		}
	}
	a := mcpDo(t, g, mcpReq{token: agent, session: session, body: toolCall("read_device", map[string]any{"device": "sim.led"})})
	if a.code != http.StatusOK || !strings.Contains(a.message(), `"value":false`) {
		t.Fatalf("the session after the oversize bodies: %v", a)
	}
	if got := readLED(t, g); got != "false" {
		t.Fatalf("sim.led is %s", got)
	}
}

// mcpSessionBound is how many sessions one token may hold at /mcp
// (mcpbridge.maxSessions, docs/mcp.md): past it, the least recently used
// is closed.
const mcpSessionBound = 32

// TestBinaryMCPManySessions: one token opens 200 sessions and never
// closes them. The gateway keeps the 32 used most recently (its bound per
// token); an older one is gone (404: its client starts a new one), its
// RSS stays under 64 MiB, and it answers, the newest sessions included.
func TestBinaryMCPManySessions(t *testing.T) {
	const sessions = 200
	g := startGateway(t, t.TempDir(), "--mcp")
	agent := g.addToken(t, "mcp-agent", "control_low")
	start := vmHWM(t, g.cmd.Process.Pid)
	ids := make([]string, sessions)
	for i := range ids {
		ids[i] = mcpSession(t, g, agent)
	}
	hwm := vmHWM(t, g.cmd.Process.Pid)
	t.Logf("peak RSS (VmHWM): %.1f MiB at start, %.1f MiB after %d sessions", mib(start), mib(hwm), sessions)
	if hwm > 64<<20 {
		t.Errorf("peak RSS %.1f MiB after %d sessions, want under 64 MiB", mib(hwm), sessions)
	}
	read := toolCall("read_device", map[string]any{"device": "sim.led"})
	for _, id := range ids[sessions-mcpSessionBound:] {
		if a := mcpDo(t, g, mcpReq{token: agent, session: id, body: read}); a.code != http.StatusOK {
			t.Fatalf("one of the %d newest sessions: %v", mcpSessionBound, a)
		}
	}
	// The oldest, and the last one closed: the newest sessions were used
	// since.
	waitGone(t, g, agent, ids[0])
	waitGone(t, g, agent, ids[sessions-mcpSessionBound-1])
	// Least recently used, not oldest: the oldest left was used just now,
	// so a new session closes the one after it.
	oldest := ids[sessions-mcpSessionBound]
	if a := mcpDo(t, g, mcpReq{token: agent, session: oldest, body: read}); a.code != http.StatusOK {
		t.Fatalf("the oldest session kept: %v", a)
	}
	mcpSession(t, g, agent)
	if a := mcpDo(t, g, mcpReq{token: agent, session: oldest, body: read}); a.code != http.StatusOK {
		t.Errorf("the oldest session, used before a new one: %v", a)
	}
	waitGone(t, g, agent, ids[sessions-mcpSessionBound+1])
	resp, err := http.Get("http://" + g.httpAddr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz: %d", resp.StatusCode)
	}
}

// TestBinaryMCPRevoked: once `gateway token revoke` takes effect, the
// next request of an open /mcp session is 401, and a `gateway mcp` on
// stdio answers tool calls with an error starting "UNAUTHORIZED" (saying
// a person must give a new token) instead of redialling without end.
func TestBinaryMCPRevoked(t *testing.T) {
	g := startGateway(t, t.TempDir(), "--mcp")
	httpTok := g.addToken(t, "http-agent", "control_low")
	stdioTok := g.addToken(t, "stdio-agent", "control_low")
	session := mcpSession(t, g, httpTok)
	read := toolCall("read_device", map[string]any{"device": "sim.led"})
	if a := mcpDo(t, g, mcpReq{token: httpTok, session: session, body: read}); a.code != http.StatusOK {
		t.Fatalf("before the revocation: %v", a)
	}
	stdio := connectMCP(t, g, "stdio", mcpRevision, stdioTok)
	stdio.ok(t, "read_device", map[string]any{"device": "sim.led"}, nil)

	for _, name := range []string{"http-agent", "stdio-agent"} {
		from := g.err.len()
		gwOK(t, "token", "revoke", name, "--state-dir", g.dir)
		g.err.waitFor(t, from, `msg="closing connection of a revoked token" .*principal=`+name, waitLong)
	}

	// The Hub has closed the bridge's connection; the bridge's end, and
	// its sessions', follows at once: until then a call is a tool error.
	deadline := time.Now().Add(waitLong)
	for {
		a := mcpDo(t, g, mcpReq{token: httpTok, session: session, body: read})
		if a.code == http.StatusUnauthorized {
			break
		}
		if a.code != http.StatusOK || !strings.Contains(a.message(), `"isError":true`) || time.Now().After(deadline) {
			t.Fatalf("the revoked token's session: %v, want 401", a)
		}
		<-time.After(20 * time.Millisecond)
	}
	for {
		text := stdio.failing(t, "read_device", map[string]any{"device": "sim.led"})
		if strings.HasPrefix(text, "UNAUTHORIZED") {
			t.Logf("the revoked stdio bridge: %s", text)
			if !strings.Contains(text, "person") {
				t.Errorf("the revoked stdio bridge says %q: want it to say a person must give a new token", text)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the revoked stdio bridge still answers %q", text)
		}
		<-time.After(20 * time.Millisecond)
	}
}

// waitGone waits until the session id is answered 404: closed past the
// bound. The gateway closes it in the background (a session's close waits
// for its calls in flight), so the first request after the new session
// may still find it.
func waitGone(t *testing.T, g *gateway, tok, id string) {
	t.Helper()
	read := toolCall("read_device", map[string]any{"device": "sim.led"})
	deadline := time.Now().Add(waitLong)
	for {
		a := mcpDo(t, g, mcpReq{token: tok, session: id, body: read})
		if a.code == http.StatusNotFound {
			return
		}
		if a.code != http.StatusOK || time.Now().After(deadline) {
			t.Fatalf("a session past the bound: %v, want 404", a)
		}
		<-time.After(10 * time.Millisecond)
	}
}

// TestBinaryMCPCleanStop: SIGTERM with MCP sessions open — SDK clients
// over HTTP of both revisions (the older one holding its event stream
// open), one subscribed to a device, one waiting in wait_for_value, a raw
// session, and a `gateway mcp` on stdio — ends within the usual 3 s, with
// exit 0 and no ERROR in the log; the waiting call ends too.
func TestBinaryMCPCleanStop(t *testing.T) {
	g := startGateway(t, t.TempDir(), "--mcp")
	agent := g.addToken(t, "mcp-agent", "control_low")
	older := connectMCP(t, g, "http", mcpRevision, agent)
	newest := connectMCP(t, g, "http", "", agent)
	connectMCP(t, g, "stdio", "", agent)
	mcpSession(t, g, agent)

	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	res, err := older.ListResources(ctx, nil)
	if err != nil || len(res.Resources) == 0 {
		t.Fatalf("resources/list: %v", err)
	}
	if err := older.Subscribe(ctx, &mcp.SubscribeParams{URI: res.Resources[0].URI}); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	admin := readAdminToken(t, g.dir)
	before := waitMetrics(t, g, admin, func(map[string]float64) bool { return true })["gateway_hal_requests_total"]
	waiting := make(chan error, 1)
	go func() {
		_, err := newest.CallTool(ctx, &mcp.CallToolParams{Name: "wait_for_value",
			Arguments: map[string]any{"device": "sim.button", "op": "eq", "value": true, "timeoutSeconds": 50}})
		waiting <- err
	}()
	// The wait is under way once its first read reached the Hub: poll the
	// metrics, the only sign of it.
	waitMetrics(t, g, admin, func(m map[string]float64) bool { return m["gateway_hal_requests_total"] > before })

	g.stop(t)
	select {
	case err := <-waiting:
		t.Logf("the waiting call ended: %v", err)
	case <-time.After(waitLong):
		t.Errorf("the waiting call did not end with the gateway")
	}
}

// TestBinaryMCPMalformed: requests no client should send — broken JSON, a
// batch, another content type, a second initialize, an unknown or forged
// session, a GET without one — are each answered with a 4xx (or a
// JSON-RPC error), log no ERROR (checked at the end), and leave the
// session and the gateway serving.
func TestBinaryMCPMalformed(t *testing.T) {
	g := startGateway(t, t.TempDir(), "--mcp")
	agent := g.addToken(t, "mcp-agent", "control_low")
	session := mcpSession(t, g, agent)
	for _, c := range []struct {
		name string
		r    mcpReq
	}{
		{"broken JSON", mcpReq{token: agent, body: `{"jsonrpc":"2.0","id":1,"method":`}},
		{"broken JSON in a session", mcpReq{token: agent, session: session, body: `{"jsonrpc":`}},
		{"not JSON-RPC", mcpReq{token: agent, session: session, body: `[1,2,3]`}},
		{"a batch", mcpReq{token: agent, session: session, body: "[" + toolCall("list_devices", nil) + "," + toolCall("list_devices", nil) + "]"}},
		{"another content type", mcpReq{token: agent, session: session, body: toolCall("list_devices", nil), header: map[string]string{"Content-Type": "text/plain"}}},
		{"a second initialize", mcpReq{token: agent, session: session, body: mcpInit}},
		{"initialized before initialize", mcpReq{token: agent, body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`}},
		{"a call before initialize", mcpReq{token: agent, body: toolCall("list_devices", nil)}},
		{"an unknown session", mcpReq{token: agent, session: "nosuch", body: toolCall("list_devices", nil)}},
		{"a session id of 4 KiB", mcpReq{token: agent, session: strings.Repeat("s", 4096), body: toolCall("list_devices", nil)}},
		{"GET without a session", mcpReq{method: http.MethodGet, token: agent}},
		{"DELETE of an unknown session", mcpReq{method: http.MethodDelete, token: agent, session: "nosuch"}},
		{"an unsupported revision", mcpReq{token: agent, session: session, body: toolCall("list_devices", nil), header: map[string]string{"Mcp-Protocol-Version": "1999-01-01"}}},
	} {
		a := mcpDo(t, g, c.r)
		if a.code >= 500 || a.code < 400 && !strings.Contains(a.message(), `"error"`) && a.code != http.StatusAccepted {
			t.Errorf("%s: %v, want a 4xx or a JSON-RPC error", c.name, a)
		}
		t.Logf("%s: %d", c.name, a.code)
	}
	a := mcpDo(t, g, mcpReq{token: agent, session: session, body: toolCall("read_device", map[string]any{"device": "sim.led"})})
	if a.code != http.StatusOK || !strings.Contains(a.message(), `"value":false`) {
		t.Fatalf("the session after the malformed requests: %v", a)
	}
}

// TestBinaryMCPStreamsLeaveRoom: an /mcp connection whose request carried
// a valid token is admitted as a WebSocket is once hal/initialize
// succeeds: it leaves the budget of connections not yet authenticated
// (8 per address) for one of the Hub's slots. Twelve SDK clients on one
// address, each holding its event stream open, all connect, and the
// operator's `gateway stop` over WebSocket from the same address gets
// through within a second. Before, the eighth stream used up the
// address's budget: the next client, and the operator, were closed at
// accept.
func TestBinaryMCPStreamsLeaveRoom(t *testing.T) {
	g := startGateway(t, t.TempDir(), "--mcp")
	agent := g.addToken(t, "mcp-agent", "control_low")
	for range 12 {
		c := connectMCP(t, g, "http", mcpRevision, agent)
		c.ok(t, "list_devices", nil, nil)
	}
	start := time.Now()
	out := gwOK(t, "stop", "--hub", g.ws, "--state-dir", g.dir, "--reason", "beside the agents")
	if took := time.Since(start); took > stopWithin || !strings.HasPrefix(out, "emergency stop engaged: ") {
		t.Errorf("the operator's stop beside the agents' streams: %q after %v", out, took)
	}
	admin := readAdminToken(t, g.dir)
	m := readMetrics(t, bearerClient(admin), "http://"+g.httpAddr+"/metrics", admin)
	if m["gateway_hal_connections_refused_total"] != 0 || m["gateway_hal_connections_unauthenticated"] > 2 {
		t.Errorf("connections refused at accept: %v, not yet authenticated: %v; want none refused, and the streams authenticated",
			m["gateway_hal_connections_refused_total"], m["gateway_hal_connections_unauthenticated"])
	}
}

// TestBinaryMCPSlotsFull: an agent's open /mcp streams take the Hub's
// slots (hub.limits.maxConnections, 4 here, one of them its bridge's),
// and past them its requests are answered 503; the operator's stop still
// gets through on the admin reserve, and once the streams close their
// slots are free again.
func TestBinaryMCPSlotsFull(t *testing.T) {
	config := writeConfig(t, "board: sim\nhub:\n  limits: {maxConnections: 4}\n  mcp: {enabled: true}\n")
	g := startGateway(t, t.TempDir(), "--config", config)
	agent := g.addToken(t, "mcp-agent", "control_low")
	var streams []*http.Response
	defer func() {
		for _, s := range streams {
			s.Body.Close()
		}
	}()
	for {
		a := mcpDo(t, g, mcpReq{token: agent, body: mcpInit})
		if a.code == http.StatusServiceUnavailable {
			break
		}
		if a.code != http.StatusOK || len(streams) > 3 {
			t.Fatalf("session %d: %v, want a session or, past the slots, 503", len(streams)+1, a)
		}
		// The initialize's connection may not have given its slot back
		// yet: the stream may be the one refused.
		s := openStream(t, g, agent, a.header.Get("Mcp-Session-Id"))
		if s == nil {
			break
		}
		streams = append(streams, s)
	}
	t.Logf("%d streams held the slots", len(streams))
	// Up to 3 (4 slots, one the bridge's); fewer while connections just
	// closed (the initialize's, the token check's) still hold theirs.
	if len(streams) == 0 {
		t.Fatalf("no stream held a slot")
	}
	start := time.Now()
	out := gwOK(t, "stop", "--hub", g.ws, "--state-dir", g.dir, "--reason", "slots full")
	if took := time.Since(start); took > stopWithin || !strings.HasPrefix(out, "emergency stop engaged: ") {
		t.Errorf("the operator's stop with the slots full: %q after %v", out, took)
	}
	for _, s := range streams {
		s.Body.Close()
	}
	streams = nil
	// The gateway sees each close when its read of the connection ends.
	deadline := time.Now().Add(waitLong)
	for a := mcpDo(t, g, mcpReq{token: agent, body: mcpInit}); a.code != http.StatusOK; a = mcpDo(t, g, mcpReq{token: agent, body: mcpInit}) {
		if a.code != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("a session once the streams closed: %v", a)
		}
		<-time.After(20 * time.Millisecond)
	}
}

// openStream opens a session's event stream (GET) on a connection of its
// own and returns it open; nil when the gateway answers 503 (no slot).
func openStream(t *testing.T, g *gateway, tok, session string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+g.httpAddr+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", mcpRevision)
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		t.Fatalf("GET /mcp: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable {
			return nil
		}
		t.Fatalf("GET /mcp: %d", resp.StatusCode)
	}
	return resp
}
