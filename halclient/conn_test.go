package halclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// transports runs f once per transport, each against its own hub.
func transports(t *testing.T, f func(t *testing.T, hub *testHub, url string)) {
	for _, tr := range []string{"ws", "tcp", "unix"} {
		t.Run(tr, func(t *testing.T) {
			hub := newTestHub(t)
			f(t, hub, hub.Listen(tr))
		})
	}
}

func dial(t *testing.T, url, token string) *halclient.Conn {
	t.Helper()
	c, err := halclient.Dial(testCtx(t), url, halclient.Options{Token: token, ClientName: "test", ClientVersion: "1.0"})
	if err != nil {
		t.Fatalf("Dial(%s): %v", url, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestSession(t *testing.T) {
	transports(t, func(t *testing.T, hub *testHub, url string) {
		ctx := testCtx(t)
		c := dial(t, url, hub.Agent)
		init := c.Init()
		want := openhal.Principal{Kind: openhal.KindAgent, Name: "bench-agent", Scope: openhal.ScopeControlLow}
		if init.ProtocolVersion != "0.1" || init.BootID != hub.Hub().BootID() || init.Principal != want {
			t.Errorf("Init() = %+v", init)
		}

		// The token travels in the header on WebSocket and in params
		// elsewhere, never both.
		seen := hub.wire.waitFor(t, "hal/initialized", func(s []connSeen) bool {
			return len(s) == 1 && s[0].count(openhal.NotifyInitialized) == 1
		})
		var in openhal.InitializeParams
		if m := seen[0].msgs[0]; m.Method != openhal.MethodInitialize || json.Unmarshal(m.Params, &in) != nil {
			t.Fatalf("first message %s %s; want hal/initialize", m.Method, m.Params)
		}
		bearer := seen[0].bearer
		if strings.HasPrefix(url, "ws:") {
			if bearer != hub.Agent || in.Token != nil {
				t.Errorf("ws: bearer %q, params.token %v; want the header only", bearer, in.Token)
			}
		} else if bearer != "" || in.Token == nil || *in.Token != hub.Agent {
			t.Errorf("bearer %q, params.token %v; want params.token only", bearer, in.Token)
		}
		if *in.ProtocolVersion != "0.1" || in.ClientInfo.Name != "test" || in.ClientInfo.Version != "1.0" {
			t.Errorf("initialize params %+v", in)
		}

		devs, err := c.Devices(ctx)
		if err != nil || len(devs) != 4 || devs[0].ID != "sim.door" {
			t.Fatalf("Devices() = %v, %v", devs, err)
		}
		// With maxAgeMs the Hub answers with the value it holds (seq 4;
		// the bench's clock stands still), not a fresh measurement.
		v, err := c.Read(ctx, "sim.temperature", 1000)
		if err != nil || v.Seq != 4 || v.Value.(map[string]any)["temperature"] != 20.5 {
			t.Fatalf("Read = %+v, %v", v, err)
		}

		w, err := c.Write(ctx, "sim.led", true, "test")
		if err != nil || w.Status != openhal.StatusApplied || w.Value != true || w.Seq != 5 {
			t.Fatalf("Write = %+v, %v", w, err)
		}
		n := nextNotification(t, c)
		var nv openhal.ValueResult
		if err := json.Unmarshal(n.Params, &nv); n.Method != openhal.NotifyValue || err != nil || nv.Device != "sim.led" || nv.Seq != 5 {
			t.Errorf("notification %s %s", n.Method, n.Params)
		}

		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		hub.wire.waitFor(t, "hal/shutdown and the end", func(s []connSeen) bool {
			return s[0].count(openhal.NotifyShutdown) == 1 && s[0].ended
		})
		if _, ok := <-c.Notifications(); ok {
			t.Error("Notifications() still open after Close")
		}
		if !errors.Is(c.Err(), halclient.ErrClosed) {
			t.Errorf("Err() after Close = %v", c.Err())
		}
		if err := c.Ping(ctx); !errors.Is(err, halclient.ErrClosed) {
			t.Errorf("Ping after Close = %v", err)
		}
	})
}

func nextNotification(t *testing.T, c *halclient.Conn) halclient.Notification {
	t.Helper()
	select {
	case n, ok := <-c.Notifications():
		if !ok {
			t.Fatalf("connection ended: %v", c.Err())
		}
		return n
	case <-time.After(10 * time.Second):
		t.Fatal("no notification in 10 s")
	}
	panic("unreachable")
}

// TestWritePending: an agent's write of a high-risk device waits for an
// admin.
func TestWritePending(t *testing.T) {
	hub := newTestHub(t)
	c := dial(t, hub.Listen("tcp"), hub.Agent)
	w, err := c.Write(testCtx(t), "sim.heater", json.RawMessage("true"), "preheat")
	if err != nil {
		t.Fatal(err)
	}
	if cf := w.Confirmation; w.Status != openhal.StatusPending || cf == nil || cf.ID == "" || cf.Device != "sim.heater" ||
		cf.Value != true || cf.Reason != "preheat" || cf.RequestedBy.Name != "bench-agent" || cf.ExpiresAt.IsZero() {
		t.Errorf("Write = %+v (confirmation %+v)", w, w.Confirmation)
	}
}

// freePort returns a loopback address where nothing listens.
func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestDialNothingListening(t *testing.T) {
	addr := freePort(t)
	for _, url := range []string{
		"tcp://" + addr,
		"ws://" + addr + "/hal",
		"unix://" + filepath.Join(t.TempDir(), "nothing.sock"),
	} {
		_, err := halclient.Dial(testCtx(t), url, halclient.Options{Token: "x"})
		want := fmt.Sprintf("nothing listening at %s (is the gateway running?)", url)
		if err == nil || err.Error() != want {
			t.Errorf("Dial(%s) = %v; want %q", url, err, want)
		}
		var nl *halclient.NotListeningError
		if !errors.As(err, &nl) {
			t.Errorf("Dial(%s): %T is not a *NotListeningError", url, err)
		}
	}
}

func TestDialBadURL(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"http://127.0.0.1:7750/hal", "unknown scheme"},
		{"tls://127.0.0.1", "want tls://host:port"},
		{"tcp://127.0.0.1", "want tcp://host:port"},
		{"ws://", "want ws://host:port/hal"},
		{"wss:///hal", "want wss://host:port/hal"},
		{"unix://", "want unix:///path/to/socket"},
		{"::", "not a URL"},
	} {
		_, err := halclient.Dial(testCtx(t), tc.url, halclient.Options{})
		var ue *halclient.URLError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Dial(%q) = %v; want a URLError with %q", tc.url, err, tc.want)
		}
	}
	_, err := halclient.Dial(testCtx(t), "tcp://127.0.0.1:1", halclient.Options{Fingerprint: "ab"})
	if err == nil || !strings.Contains(err.Error(), "fingerprint needs a TLS URL") {
		t.Errorf("a fingerprint with tcp:// = %v", err)
	}
}

func TestDialWebSocketWrongPath(t *testing.T) {
	hub := newTestHub(t)
	url := strings.TrimSuffix(hub.Listen("ws"), "/hal") + "/nothere"
	_, err := halclient.Dial(testCtx(t), url, halclient.Options{})
	if err == nil || !strings.Contains(err.Error(), "no OpenHAL hub at "+url) {
		t.Errorf("Dial = %v", err)
	}
}

func TestDialUnauthorized(t *testing.T) {
	transports(t, func(t *testing.T, hub *testHub, url string) {
		for _, tc := range []struct{ token, want, reason string }{
			{"wrong", "the hub refused the token (UNAUTHORIZED): token_unknown", "token_unknown"},
			{"", "the hub wants a token and none was given (UNAUTHORIZED): token_missing", "token_missing"},
		} {
			_, err := halclient.Dial(testCtx(t), url, halclient.Options{Token: tc.token})
			if err == nil || err.Error() != tc.want {
				t.Errorf("token %q: Dial = %v; want %q", tc.token, err, tc.want)
			}
			var je *jsonrpc.Error
			if !errors.As(err, &je) || je.Code != openhal.CodeUnauthorized || je.Reason() != tc.reason {
				t.Errorf("token %q: want a *jsonrpc.Error UNAUTHORIZED/%s inside, got %#v", tc.token, tc.reason, je)
			}
		}
		// Both refused connections are closed by the client; no
		// hal/initialized was sent.
		seen := hub.wire.waitFor(t, "both connections to end", func(s []connSeen) bool { return len(s) == 2 && allEnded(s) })
		for _, s := range seen {
			if n := s.count(openhal.NotifyInitialized); n != 0 {
				t.Errorf("hal/initialized sent %d times after UNAUTHORIZED", n)
			}
		}
	})
}

// TestDialVersionMismatch: the Hub speaks only 0.1, so a scripted hub
// plays one that answers 0.2.
func TestDialVersionMismatch(t *testing.T) {
	for _, tr := range []string{"ws", "tcp", "unix"} {
		t.Run(tr, func(t *testing.T) { testVersionMismatch(t, tr) })
	}
}

func testVersionMismatch(t *testing.T, transport string) {
	url, received := scriptedHub(t, transport, func(string) any {
		return map[string]any{"protocolVersion": "0.2", "bootId": "b"}
	})
	_, err := halclient.Dial(testCtx(t), url, halclient.Options{Token: "t"})
	var ve *halclient.VersionError
	if !errors.As(err, &ve) || ve.Hub != "0.2" {
		t.Fatalf("Dial = %v; want a VersionError", err)
	}
	want := "the hub at " + url + " speaks OpenHAL v0.2; this client speaks only v0.1"
	if err.Error() != want {
		t.Errorf("error %q; want %q", err, want)
	}
	// Seed 3.1.2 point 5: the client disconnects, without
	// hal/initialized.
	select {
	case methods := <-received:
		if slices.Contains(methods, openhal.NotifyInitialized) {
			t.Errorf("hal/initialized sent after a version mismatch: %v", methods)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the client did not disconnect")
	}
}

func TestConcurrentCalls(t *testing.T) {
	transports(t, func(t *testing.T, hub *testHub, url string) {
		ctx := testCtx(t)
		// n slow devices answer n reads last first: device i answers
		// once the call that read device i+1 has returned, so each
		// answer must reach its call by id. The Hub's limit of 32
		// requests in flight bounds n and the reads beside them.
		const n = 8
		answered := make([]chan struct{}, n+1)
		for i := range answered {
			answered[i] = make(chan struct{})
		}
		close(answered[n])
		for i := range n {
			hub.Add(slowSensor{fmt.Sprintf("slow.%d", i), float64(i), answered[i+1]})
		}
		c := dial(t, url, hub.Admin)
		var wg sync.WaitGroup
		errs := make(chan error, 3*n)
		for i := range n {
			wg.Go(func() {
				defer close(answered[i])
				id := fmt.Sprintf("slow.%d", i)
				if v, err := c.Read(ctx, id, -1); err != nil {
					errs <- err
				} else if v.Device != id || v.Value != float64(i) {
					errs <- fmt.Errorf("the read of %s got %s = %v", id, v.Device, v.Value)
				}
			})
		}
		// Meanwhile, ordinary requests from many goroutines.
		for range 2 * n {
			wg.Go(func() {
				if v, err := c.Read(ctx, "sim.led", -1); err != nil || v.Device != "sim.led" {
					errs <- fmt.Errorf("read: %+v, %v", v, err)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}

// slowSensor answers a read only once after is closed.
type slowSensor struct {
	id    string
	value float64
	after <-chan struct{}
}

func (s slowSensor) Descriptor() device.Descriptor {
	return device.Descriptor{ID: s.id, Kind: device.KindSensor, Source: "test", Access: device.AccessRead,
		Risk: device.RiskLow, Schema: device.Schema{Type: device.TypeNumber}, State: device.StateOK}
}

func (s slowSensor) Read(ctx context.Context) (device.Reading, error) {
	select {
	case <-s.after:
		return device.Reading{Value: s.value}, nil
	case <-ctx.Done():
		return device.Reading{}, ctx.Err()
	}
}

func TestCallErrorIsJSONRPCError(t *testing.T) {
	hub := newTestHub(t)
	c := dial(t, hub.Listen("tcp"), hub.Admin)
	err := c.Call(testCtx(t), openhal.MethodRead, openhal.ReadParams{Device: "sim.lde"}, nil)
	je, ok := err.(*jsonrpc.Error)
	if !ok || je.Code != openhal.CodeDeviceNotFound || je.Reason() != "device_not_found" {
		t.Fatalf("Call = %#v; want *jsonrpc.Error DEVICE_NOT_FOUND", err)
	}
	err = c.Call(testCtx(t), "hal/nonesuch", nil, nil)
	if je, ok := err.(*jsonrpc.Error); !ok || je.Code != openhal.CodeMethodNotFound {
		t.Fatalf("Call = %#v; want METHOD_NOT_FOUND", err)
	}
}

func TestReadableErrors(t *testing.T) {
	hub := newTestHub(t)
	c := dial(t, hub.Listen("ws"), hub.Admin)
	ctx := testCtx(t)
	_, err := c.Read(ctx, "sim.lde", -1)
	check := func(err error, want string) {
		t.Helper()
		if err == nil || err.Error() != want {
			t.Errorf("error %v; want %q", err, want)
		}
	}
	check(err, `no such device "sim.lde"`)
	_, err = c.Write(ctx, "sim.led", "on", "")
	check(err, "value of the wrong type for sim.led: want a boolean, got a string")
	_, err = c.Write(ctx, "sim.door", true, "")
	check(err, "device sim.door is read-only (NOT_SUPPORTED): read_only")
	var he *halclient.HubError
	if !errors.As(err, &he) || he.Code() != openhal.CodeNotSupported || he.Reason() != "read_only" {
		t.Errorf("%#v is not a HubError NOT_SUPPORTED", err)
	}
}

func TestHubErrorText(t *testing.T) {
	data := func(kv ...string) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		method, device string
		err            *jsonrpc.Error
		want           string
	}{
		{openhal.MethodInitialize, "", &jsonrpc.Error{Code: openhal.CodeUnauthorized, Message: "x", Data: data("reason", "rate_limited")},
			"the hub refused the token (UNAUTHORIZED): rate_limited"},
		{openhal.MethodRead, "sim.x", &jsonrpc.Error{Code: openhal.CodeDeviceNotFound, Message: `no device "sim.x"`, Data: data("reason", "device_not_found")},
			`no such device "sim.x"`},
		{openhal.MethodWrite, "sim.fan", &jsonrpc.Error{Code: openhal.CodeInvalidParams, Message: "value for sim.fan: 120 is above the maximum 100", Data: data("reason", "out_of_range", "device", "sim.fan")},
			"value not accepted by sim.fan: 120 is above the maximum 100"},
		{openhal.MethodWrite, "sim.led", &jsonrpc.Error{Code: openhal.CodeInvalidParams, Message: "params.reason: want string, got number", Data: data("reason", "wrong_type", "param", "reason")},
			"sim.led: params.reason: want string, got number (INVALID_PARAMS): wrong_type"},
		{openhal.MethodWrite, "sim.heater", &jsonrpc.Error{Code: openhal.CodeBlocked, Message: "interlock: sim.door eq false does not hold", Data: data("reason", "interlock")},
			"sim.heater: interlock: sim.door eq false does not hold (BLOCKED): interlock"},
		{openhal.MethodAuditList, "", &jsonrpc.Error{Code: openhal.CodeMethodNotFound, Message: "method not found"},
			"the hub does not serve hal/audit/list (unknown to it, or above its conformance level) (METHOD_NOT_FOUND)"},
		{"", "", &jsonrpc.Error{Code: -1, Message: "odd", Data: json.RawMessage(`{"reason":"why"}`)},
			"odd (error -1): why"},
	} {
		if got := halclient.Describe(tc.err, tc.method, tc.device).Error(); got != tc.want {
			t.Errorf("%s %s %+v:\n got %q\nwant %q", tc.method, tc.device, tc.err, got, tc.want)
		}
	}
	if halclient.Describe(nil, "", "") != nil {
		t.Error("Describe(nil) is not nil")
	}
}

func TestConnectionLost(t *testing.T) {
	transports(t, func(t *testing.T, hub *testHub, url string) {
		c := dial(t, url, hub.Admin)
		hub.Hub().Close() // the Hub shuts down: it ends every connection
		select {
		case <-c.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("Done not closed after the hub dropped the connection")
		}
		if _, ok := <-c.Notifications(); ok {
			t.Error("Notifications() open after the end")
		}
		if err := c.Err(); err == nil || !strings.Contains(err.Error(), url) {
			t.Errorf("Err() = %v; want one naming %s", err, url)
		}
		if err := c.Ping(testCtx(t)); err == nil {
			t.Error("Ping on a lost connection succeeded")
		}
	})
}

func TestNotificationsDroppedWhenNotRead(t *testing.T) {
	hub := newTestHub(t)
	c, err := halclient.Dial(testCtx(t), hub.Listen("tcp"), halclient.Options{Token: hub.Admin, NotificationBuffer: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The Hub has read hal/initialized once it answers a later request.
	if err := c.Ping(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	// Three devices, so that the Hub coalesces none of the values.
	for _, id := range []string{"sim.led", "sim.door", "sim.heater"} {
		hub.Set(id, true)
	}
	// The answer comes after the three notifications on the same stream.
	if err := c.Ping(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if d := c.Dropped(); d != 2 {
		t.Errorf("Dropped() = %d; want 2", d)
	}
	if n := nextNotification(t, c); !strings.Contains(string(n.Params), `"seq":5`) {
		t.Errorf("kept notification %s; want the first (seq 5)", n.Params)
	}
}

// TestHubRefusesMessage: an error with "id": null (a message the Hub could
// not read, here one over its size limit) ends the connection with that
// error.
func TestHubRefusesMessage(t *testing.T) {
	for _, tr := range []string{"ws", "tcp", "unix"} {
		t.Run(tr, func(t *testing.T) {
			hub := newTestHub(t, func(o *halhub.Options) { o.Limits.MaxMessageBytes = 1024 })
			c := dial(t, hub.Listen(tr), hub.Admin)
			err := c.Call(testCtx(t), openhal.MethodPing, map[string]string{"pad": strings.Repeat("x", 2048)}, nil)
			if err == nil {
				t.Fatal("an oversized request was answered")
			}
			select {
			case <-c.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("connection not ended")
			}
			want := "refused a message: message larger than 1024 bytes (INVALID_REQUEST): too_large"
			if err := c.Err(); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Err() = %v; want %q", err, want)
			}
		})
	}
}

// scriptedHub is a hub for what the real Hub cannot do: answer another
// protocol version. It serves one connection on transport ("ws", "tcp" or "unix"), answers each
// request with result(method), and once the client has closed, sends the
// methods of the messages it received.
func scriptedHub(t *testing.T, transport string, result func(method string) any) (url string, received <-chan []string) {
	got := make(chan []string, 1)
	serve := func(read func() ([]byte, error), write func([]byte) error) {
		var methods []string
		defer func() { got <- methods }()
		for {
			b, err := read()
			if err != nil {
				return
			}
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(b, &m) != nil {
				return
			}
			methods = append(methods, m.Method)
			if m.ID == nil {
				continue
			}
			out, err := jsonrpc.AppendResult(nil, m.ID, result(m.Method))
			if err != nil || write(out) != nil {
				return
			}
		}
	}
	if transport == "ws" {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ws, err := websocket.Accept(w, r, nil)
			if err != nil {
				return
			}
			defer ws.CloseNow()
			ctx := r.Context()
			serve(func() ([]byte, error) { _, b, err := ws.Read(ctx); return b, err },
				func(b []byte) error { return ws.Write(ctx, websocket.MessageText, b) })
		}))
		t.Cleanup(srv.Close)
		return "ws" + strings.TrimPrefix(srv.URL, "http") + "/hal", got
	}
	network, addr := "tcp", "127.0.0.1:0"
	if transport == "unix" {
		network, addr = "unix", filepath.Join(t.TempDir(), "hal.sock")
	}
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		nc, err := l.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		lr := jsonrpc.NewLineReader(nc, 1<<20)
		serve(lr.Next, func(b []byte) error { _, err := nc.Write(append(b, '\n')); return err })
	}()
	return network + "://" + l.Addr().String(), got
}

// TestDialClosedBeforeInitialize: a hub that closes the connection
// without answering hal/initialize — as the gateway does past its budget
// of connections not yet authenticated — is named as such.
func TestDialClosedBeforeInitialize(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, err = halclient.Dial(testCtx(t), "tcp://"+ln.Addr().String(), halclient.Options{Token: "gw_x"})
	if err == nil || !strings.Contains(err.Error(), "before answering hal/initialize (too many connections waiting to authenticate") {
		t.Fatalf("Dial = %v", err)
	}
}
