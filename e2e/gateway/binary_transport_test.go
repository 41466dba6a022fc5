package gateway_test

// Whole-binary tests of the transports' edges (spec §2): the WebSocket's
// Origin check and text-only messages, and a line over the limit answered
// before its end. The helpers are in binary_helpers_test.go.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// upgrade opens a WebSocket to the gateway with the given Origin ("" for
// none) and returns the HTTP status of the upgrade.
func upgrade(t *testing.T, wsURL, origin string) int {
	t.Helper()
	h := http.Header{}
	if origin != "" {
		h.Set("Origin", origin)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPHeader: h})
	if err == nil {
		c.CloseNow()
	}
	if resp == nil {
		t.Fatalf("upgrade with Origin %q: no HTTP answer: %v", origin, err)
	}
	return resp.StatusCode
}

// TestBinaryWebSocketOrigin: a web page from another site cannot open the
// WebSocket (403); the gateway's own pages, a site the configuration
// names, and clients that send no Origin can.
func TestBinaryWebSocketOrigin(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, "board: sim\nhub:\n  allowedOrigins: [console.lan:8080, '*.lab.example']\n")
	gwOK(t, "check", "--config", cfg)
	g := startGateway(t, dir, "--config", cfg)
	for _, tc := range []struct {
		origin string
		want   int
	}{
		{"", http.StatusSwitchingProtocols},
		{"http://" + g.httpAddr, http.StatusSwitchingProtocols}, // the gateway's own
		{"http://console.lan:8080", http.StatusSwitchingProtocols},
		{"https://bench.lab.example", http.StatusSwitchingProtocols},
		{"http://evil.example", http.StatusForbidden},
		{"http://console.lan:8081", http.StatusForbidden},
		{"http://console.lan", http.StatusForbidden},
		{"http://127.0.0.1:1", http.StatusForbidden}, // the same host, another site
		{"null", http.StatusForbidden},               // a local file, a sandboxed frame
	} {
		if got := upgrade(t, g.ws, tc.origin); got != tc.want {
			t.Errorf("upgrade with Origin %q: HTTP %d, want %d", tc.origin, got, tc.want)
		}
	}
	// The CLI and agents send no Origin and are unaffected.
	gwOK(t, "devices", "--hub", g.ws, "--state-dir", dir)
}

// TestBinaryWebSocketBinaryMessage: a binary message is refused with close
// 1003 (unsupported data), even one holding a valid request.
func TestBinaryWebSocketBinaryMessage(t *testing.T) {
	dir := t.TempDir()
	g := startGateway(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	h := http.Header{"Authorization": {"Bearer " + readAdminToken(t, dir)}}
	c, _, err := websocket.Dial(ctx, g.ws, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	init := `{"jsonrpc":"2.0","id":1,"method":"hal/initialize","params":{"protocolVersion":"0.1","clientInfo":{"name":"t","version":"1"}}}`
	if err := c.Write(ctx, websocket.MessageText, []byte(init)); err != nil {
		t.Fatal(err)
	}
	if _, b, err := c.Read(ctx); err != nil || !strings.Contains(string(b), `"result"`) {
		t.Fatalf("hal/initialize as text: %s, %v", b, err)
	}
	if err := c.Write(ctx, websocket.MessageBinary, []byte(`{"jsonrpc":"2.0","id":2,"method":"hal/ping"}`)); err != nil {
		t.Fatal(err)
	}
	_, b, err := c.Read(ctx)
	if status := websocket.CloseStatus(err); status != websocket.StatusUnsupportedData {
		t.Fatalf("after a binary message: read %q, %v (close status %d), want close 1003", b, err, status)
	}
}

// TestBinaryLineTooLongAnsweredAtOnce: on TCP and the Unix socket, 300 KiB
// without a newline (over the 256 KiB limit) is answered too_large before
// any newline is sent, and the connection ends; what the client was still
// sending is taken, so that it reads the answer and not a reset.
func TestBinaryLineTooLongAnsweredAtOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sock := filepath.Join(t.TempDir(), "hal.sock")
	g := startGateway(t, dir, "--unix", sock)
	for _, tr := range []struct{ network, addr string }{{"tcp", g.tcpAddr}, {"unix", sock}} {
		t.Run(tr.network, func(t *testing.T) {
			c, err := net.Dial(tr.network, tr.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			sent := make(chan error, 1)
			go func() {
				_, err := c.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"hal/ping","params":{"x":"` + strings.Repeat("x", 300<<10)))
				sent <- err
			}()
			c.SetReadDeadline(time.Now().Add(waitLong))
			line, err := bufio.NewReader(c).ReadString('\n')
			if err != nil {
				t.Fatalf("no answer to 300 KiB without a newline: %q, %v", line, err)
			}
			var m struct {
				ID    json.RawMessage
				Error struct {
					Code int64
					Data struct{ Reason string }
				}
			}
			if json.Unmarshal([]byte(line), &m) != nil || string(m.ID) != "null" || m.Error.Code != -32600 || m.Error.Data.Reason != "too_large" {
				t.Errorf("answer %q, want -32600 too_large with id null", line)
			}
			if err := <-sent; err != nil {
				t.Errorf("sending the rest of the line: %v (the gateway reset the connection)", err)
			}
			if n, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
				t.Errorf("after the answer: read %d bytes, %v; want the end of the connection", n, err)
			}
		})
	}
}
