package gateway_test

// Whole-binary tests of the bound per token (openhal-0.1 §2, issue 28),
// tried as an attacker would: one agent's token, leaked or flooding,
// opens /mcp connection after /mcp connection and HAL session after HAL
// session; an operator with another token must still get in. The helpers
// are in binary_helpers_test.go, binary_admission_test.go and
// binary_mcp_http_test.go.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/openhal/gateway/openhal"
)

// keepAliveMCP opens a connection to /mcp and sends initialize with tok
// on it, keep-alive; it returns the answer's status and body, and the
// connection, open, waiting idle for its next request. The end of the
// test closes it.
func keepAliveMCP(t *testing.T, g *gateway, tok string) (int, string, net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", g.httpAddr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s", g.httpAddr, tok, len(mcpInit), mcpInit)
	c.SetReadDeadline(time.Now().Add(waitLong))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("POST /mcp keep-alive: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("POST /mcp keep-alive: reading the answer: %v", err)
	}
	c.SetReadDeadline(time.Time{})
	return resp.StatusCode, string(body), c
}

// halInit opens a HAL connection over transport ("tcp" or "ws") and sends
// hal/initialize with tok; it returns the answer and, for an error
// answer, whether the Hub then closed the connection. An admitted
// connection stays open until the end of the test.
func halInit(t *testing.T, g *gateway, transport, tok string) (answer string, closed bool) {
	t.Helper()
	init := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"hal/initialize","params":{"protocolVersion":"0.1","clientInfo":{"name":"flood","version":"1"},"token":%q}}`, tok)
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	if transport == "tcp" {
		c, err := net.Dial("tcp", g.tcpAddr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		io.WriteString(c, init+"\n")
		c.SetReadDeadline(time.Now().Add(waitLong))
		br := bufio.NewReader(c)
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("hal/initialize over tcp: %v", err)
		}
		if !strings.Contains(line, `"error"`) {
			return strings.TrimSpace(line), false
		}
		_, err = br.ReadByte()
		return strings.TrimSpace(line), err == io.EOF
	}
	c, _, err := websocket.Dial(ctx, g.ws, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", g.ws, err)
	}
	t.Cleanup(func() { c.CloseNow() })
	if err := c.Write(ctx, websocket.MessageText, []byte(init)); err != nil {
		t.Fatal(err)
	}
	_, msg, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("hal/initialize over ws: %v", err)
	}
	if !strings.Contains(string(msg), `"error"`) {
		return string(msg), false // a Read that timed out would close it
	}
	_, _, err = c.Read(ctx)
	return string(msg), err != nil && ctx.Err() == nil
}

// busyReason is data.reason of a BUSY answer, "" for any other answer.
func busyReason(answer string) string {
	var m struct {
		Error *struct {
			Code int64
			Data struct{ Reason string }
		}
	}
	if json.Unmarshal([]byte(answer), &m) != nil || m.Error == nil || m.Error.Code != openhal.CodeBusy {
		return ""
	}
	return m.Error.Data.Reason
}

// TestBinaryTokenBound is issue 28's attack: one control_low token opens
// 70 keep-alive /mcp connections, one after another, and keeps them all;
// then as many HAL sessions over TCP and WebSocket. The token never holds
// more than 16 of the gateway's slots (its bridge's Hub connection
// included): each new /mcp connection takes the place of the token's own
// longest-idle one; a HAL session takes an idle /mcp connection's place
// while there is one, and past 16 is answered BUSY token_full and closed;
// a new /mcp request then gets 503 with Retry-After. Meanwhile an
// operator's (control_high) hal/initialize succeeds on both transports,
// and its stop engages within a second. /metrics counts it all. On the
// old code the /mcp connections took every slot: the operator got "all 64
// connections are taken".
func TestBinaryTokenBound(t *testing.T) {
	g := startGateway(t, t.TempDir(), "--mcp")
	agent := g.addToken(t, "leaky-agent", "control_low")
	operator := g.addToken(t, "bench-operator", "control_high", "--kind", "operator")
	admin := readAdminToken(t, g.dir)

	var notOK []string
	for i := range 70 {
		if code, body, _ := keepAliveMCP(t, g, agent); code != http.StatusOK {
			notOK = append(notOK, fmt.Sprintf("connection %d: %d %q", i+1, code, strings.TrimSpace(body)))
		}
	}
	for _, tr := range []string{"ws", "tcp"} {
		if answer, closed := halInit(t, g, tr, operator); !strings.Contains(answer, `"result"`) || closed {
			t.Fatalf("the operator's hal/initialize over %s beside the agent's /mcp connections: %s (closed: %v)", tr, answer, closed)
		}
	}
	if len(notOK) > 0 {
		t.Fatalf("the agent's keep-alive /mcp connections, each of which should take the place of an idle one of its token's: %d refused, first %s", len(notOK), notOK[0])
	}
	m := waitMetrics(t, g, admin, func(m map[string]float64) bool { return m["gateway_http_idle_reclaimed_total"] >= 70-15 })
	if m["gateway_hal_token_connections_max"] != 16 {
		t.Errorf("after 70 keep-alive /mcp connections the token holds %v slots, want 16", m["gateway_hal_token_connections_max"])
	}

	// HAL sessions of the agent's token: 15 take the idle /mcp
	// connections' places, the 16th (the token's 17th slot) and later
	// are refused.
	var refused []string
	for i := range 20 {
		tr := []string{"tcp", "ws"}[i%2]
		answer, closed := halInit(t, g, tr, agent)
		switch {
		case strings.Contains(answer, `"result"`) && !closed && i < 15:
		case busyReason(answer) == "token_full" && closed && i >= 15:
			refused = append(refused, answer)
		default:
			t.Fatalf("the agent's HAL session %d over %s: %s (closed: %v); want 15 admitted, then BUSY token_full and the connection closed", i+1, tr, answer, closed)
		}
	}
	if want := `token \"leaky-agent\" holds all 16 connections one token may (hub.limits.maxConnectionsPerToken)`; !strings.Contains(refused[0], want) {
		t.Errorf("the refusal: %s, want it to say %q", refused[0], want)
	}
	a := mcpDo(t, g, mcpReq{token: agent, body: mcpInit})
	if a.code != http.StatusServiceUnavailable || a.header.Get("Retry-After") == "" || !strings.Contains(a.body, "maxConnectionsPerToken") {
		t.Errorf("a new /mcp request of the token at its bound: %v, Retry-After %q; want 503 naming the bound", a, a.header.Get("Retry-After"))
	}

	// The operator still gets in, and its stop engages within a second.
	if out := gwOK(t, "devices", "--hub", g.ws, "--token", operator); !strings.Contains(out, "sim.led") {
		t.Errorf("the operator's devices: %q", out)
	}
	start := time.Now()
	out := gwOK(t, "stop", "--hub", g.tcp, "--token", operator, "--reason", "beside a leaked token")
	if took := time.Since(start); took > stopWithin || !strings.HasPrefix(out, "emergency stop engaged: ") {
		t.Errorf("the operator's stop beside the agent's connections: %q after %v", out, took)
	}
	m = waitMetrics(t, g, admin, func(m map[string]float64) bool { return m["gateway_hal_connections_token_full_total"] >= 6 })
	if m["gateway_hal_token_connections_max"] != 16 || m["gateway_hal_connections_full_total"] != 0 {
		t.Errorf("metrics: the token holds %v slots (want 16), %v answered full (want 0)", m["gateway_hal_token_connections_max"], m["gateway_hal_connections_full_total"])
	}
	t.Logf("token_full answers %v, idle /mcp connections closed for newcomers %v", m["gateway_hal_connections_token_full_total"], m["gateway_http_idle_reclaimed_total"])
}

// TestBinaryAdminTokenBound: an admin token is bounded like any other
// (hub.limits.maxConnectionsPerToken, 4 here): one leaked admin token
// cannot take every slot, the admin reserve included. Its fifth session
// is refused token_full; another admin token still gets in.
func TestBinaryAdminTokenBound(t *testing.T) {
	config := writeConfig(t, "board: sim\nhub:\n  limits: {maxConnectionsPerToken: 4}\n")
	g := startGateway(t, t.TempDir(), "--config", config)
	admin := readAdminToken(t, g.dir)
	for i := range 4 {
		if answer, closed := halInit(t, g, "tcp", admin); !strings.Contains(answer, `"result"`) || closed {
			t.Fatalf("admin session %d: %s (closed: %v)", i+1, answer, closed)
		}
	}
	if answer, closed := halInit(t, g, "ws", admin); busyReason(answer) != "token_full" || !closed {
		t.Errorf("the admin token's fifth session: %s (closed: %v), want BUSY token_full and closed", answer, closed)
	}
	second := g.addToken(t, "second-admin", "admin", "--kind", "operator")
	if answer, closed := halInit(t, g, "ws", second); !strings.Contains(answer, `"result"`) || closed {
		t.Errorf("another admin token beside the first at its bound: %s (closed: %v)", answer, closed)
	}
}

// TestBinaryTokenBoundStreams: /mcp event streams count against their
// token (hub.limits.maxConnectionsPerToken, 4 here: the token's bridge and
// three streams); past them, the token's next stream is answered 503
// with Retry-After naming the bound, and another agent's token opens its
// own session and stream beside it.
func TestBinaryTokenBoundStreams(t *testing.T) {
	config := writeConfig(t, "board: sim\nhub:\n  limits: {maxConnectionsPerToken: 4}\n  mcp: {enabled: true}\n")
	g := startGateway(t, t.TempDir(), "--config", config)
	agent := g.addToken(t, "streaming-agent", "control_low")
	other := g.addToken(t, "other-agent", "control_low")
	sessions := make([]string, 4)
	for i := range sessions {
		sessions[i] = mcpSessionEventually(t, g, agent)
	}
	var streams []*http.Response
	defer func() {
		for _, s := range streams {
			s.Body.Close()
		}
	}()
	for _, session := range sessions[:3] {
		s := eventually(t, func() *http.Response { return openStream(t, g, agent, session) })
		streams = append(streams, s)
	}
	a := mcpDo(t, g, mcpReq{method: http.MethodGet, token: agent, session: sessions[3]})
	if a.code != http.StatusServiceUnavailable || a.header.Get("Retry-After") != "10" ||
		!strings.Contains(a.body, `token "streaming-agent" holds all 4 connections one token may (hub.limits.maxConnectionsPerToken)`) {
		t.Errorf("the token's fourth stream beside three: %v, Retry-After %q; want 503 naming the bound", a, a.header.Get("Retry-After"))
	}
	s := eventually(t, func() *http.Response { return openStream(t, g, other, mcpSessionEventually(t, g, other)) })
	s.Body.Close()
}

// mcpSessionEventually is mcpSession for a token at its bound: the
// connections of its requests close after each answer, and the gateway
// gives their slots back when it sees the close, so a request may find
// the token full for a moment.
func mcpSessionEventually(t *testing.T, g *gateway, tok string) string {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for {
		a := mcpDo(t, g, mcpReq{token: tok, body: mcpInit})
		if id := a.header.Get("Mcp-Session-Id"); a.code == http.StatusOK && id != "" {
			if n := eventually(t, func() *mcpAnswer {
				n := mcpDo(t, g, mcpReq{token: tok, session: id, body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`})
				if n.code == http.StatusServiceUnavailable {
					return nil
				}
				return &n
			}); n.code != http.StatusAccepted {
				t.Fatalf("notifications/initialized: %v", n)
			}
			return id
		}
		if a.code != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("initialize: %v", a)
		}
		<-time.After(20 * time.Millisecond) // the gateway sees each close when its read ends
	}
}

// eventually calls try until it returns non-nil, for at most waitLong.
func eventually[T any](t *testing.T, try func() *T) *T {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for {
		if v := try(); v != nil {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("still refused after %v", waitLong)
		}
		<-time.After(20 * time.Millisecond) // the gateway sees each close when its read ends
	}
}
