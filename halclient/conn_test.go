package halclient_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gateway/halclient"
	"gateway/halclient/halclienttest"
	"gateway/jsonrpc"
	"gateway/openhal"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// transports runs f once per transport, each against its own hub.
func transports(t *testing.T, f func(t *testing.T, hub *halclienttest.Hub, url string)) {
	for _, tr := range []struct {
		name   string
		listen func(*halclienttest.Hub) string
	}{
		{"ws", (*halclienttest.Hub).ServeWebSocket},
		{"tcp", (*halclienttest.Hub).ListenTCP},
		{"unix", (*halclienttest.Hub).ListenUnix},
	} {
		t.Run(tr.name, func(t *testing.T) {
			hub := halclienttest.New(t, "boot-1")
			f(t, hub, tr.listen(hub))
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
	transports(t, func(t *testing.T, hub *halclienttest.Hub, url string) {
		ctx := testCtx(t)
		c := dial(t, url, halclienttest.AgentToken)
		init := c.Init()
		if init.ProtocolVersion != "0.1" || init.BootID != "boot-1" || init.Principal.Name != "bench-agent" {
			t.Errorf("Init() = %+v", init)
		}

		// The token travels in the header on WebSocket and in params
		// elsewhere, never both.
		seen := hub.WaitFor("hal/initialized", func(s halclienttest.Seen) bool { return s.Initialized == 1 })
		in := seen.Inits[0]
		if strings.HasPrefix(url, "ws:") {
			if in.Bearer != halclienttest.AgentToken || in.Params.Token != nil {
				t.Errorf("ws: bearer %q, params.token %v; want the header only", in.Bearer, in.Params.Token)
			}
		} else if in.Bearer != "" || in.Params.Token == nil || *in.Params.Token != halclienttest.AgentToken {
			t.Errorf("bearer %q, params.token %v; want params.token only", in.Bearer, in.Params.Token)
		}
		if *in.Params.ProtocolVersion != "0.1" || in.Params.ClientInfo.Name != "test" || in.Params.ClientInfo.Version != "1.0" {
			t.Errorf("initialize params %+v", in.Params)
		}

		devs, err := c.Devices(ctx)
		if err != nil || len(devs) != 4 || devs[0].ID != "sim.led" {
			t.Fatalf("Devices() = %v, %v", devs, err)
		}
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
		hub.WaitFor("hal/shutdown and the end", func(s halclienttest.Seen) bool { return s.Shutdowns == 1 && s.Ended == 1 })
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

func TestWritePending(t *testing.T) {
	hub := halclienttest.New(t, "boot-1")
	c := dial(t, hub.ListenTCP(), halclienttest.AgentToken)
	w, err := c.Write(testCtx(t), "sim.heater", json.RawMessage("true"), "preheat")
	if err != nil {
		t.Fatal(err)
	}
	if w.Status != openhal.StatusPending || w.Confirmation == nil || w.Confirmation.ID != "c-1" ||
		w.Confirmation.Device != "sim.heater" || w.Confirmation.Reason != "preheat" || w.Confirmation.ExpiresAt.IsZero() {
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
		{"wss://127.0.0.1:7750/hal", "wss:// (TLS) is not supported by this client yet"},
		{"tls://127.0.0.1:7751", "tls:// (TLS) is not supported by this client yet"},
		{"tcp://127.0.0.1", "want tcp://host:port"},
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
	hub := halclienttest.New(t, "boot-1")
	url := strings.TrimSuffix(hub.ServeWebSocket(), "/hal") + "/nothere"
	_, err := halclient.Dial(testCtx(t), url, halclient.Options{})
	if err == nil || !strings.Contains(err.Error(), "no OpenHAL hub at "+url) {
		t.Errorf("Dial = %v", err)
	}
}

func TestDialUnauthorized(t *testing.T) {
	transports(t, func(t *testing.T, hub *halclienttest.Hub, url string) {
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
		s := hub.WaitFor("both connections to end", func(s halclienttest.Seen) bool { return s.Ended == 2 })
		if s.Initialized != 0 {
			t.Errorf("hal/initialized sent %d times after UNAUTHORIZED", s.Initialized)
		}
	})
}

func TestDialVersionMismatch(t *testing.T) {
	transports(t, func(t *testing.T, hub *halclienttest.Hub, url string) {
		hub.SetVersion("0.2")
		_, err := halclient.Dial(testCtx(t), url, halclient.Options{Token: halclienttest.AdminToken})
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
		s := hub.WaitFor("the client to disconnect", func(s halclienttest.Seen) bool { return s.Ended == 1 })
		if s.Initialized != 0 {
			t.Errorf("hal/initialized sent after a version mismatch")
		}
	})
}

func TestConcurrentCalls(t *testing.T) {
	transports(t, func(t *testing.T, hub *halclienttest.Hub, url string) {
		ctx := testCtx(t)
		c := dial(t, url, halclienttest.AdminToken)
		// The hub holds n pings and answers them last first: each answer
		// (its request's params) must reach the call that asked.
		const n = 16
		hub.HoldPings(n)
		var wg sync.WaitGroup
		errs := make(chan error, 3*n)
		for i := range n {
			wg.Go(func() {
				var res struct{ N int }
				if err := c.Call(ctx, openhal.MethodPing, map[string]int{"n": i}, &res); err != nil {
					errs <- err
				} else if res.N != i {
					errs <- fmt.Errorf("call %d got the answer of call %d", i, res.N)
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

func TestCallErrorIsJSONRPCError(t *testing.T) {
	hub := halclienttest.New(t, "boot-1")
	c := dial(t, hub.ListenTCP(), halclienttest.AdminToken)
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
	hub := halclienttest.New(t, "boot-1")
	c := dial(t, hub.ServeWebSocket(), halclienttest.AdminToken)
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
	check(err, "sim.door is read-only (NOT_SUPPORTED): not_writable")
	var he *halclient.HubError
	if !errors.As(err, &he) || he.Code() != openhal.CodeNotSupported || he.Reason() != "not_writable" {
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
	transports(t, func(t *testing.T, hub *halclienttest.Hub, url string) {
		c := dial(t, url, halclienttest.AdminToken)
		hub.Drop()
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
	hub := halclienttest.New(t, "boot-1")
	c, err := halclient.Dial(testCtx(t), hub.ListenTCP(), halclient.Options{Token: halclienttest.AdminToken, NotificationBuffer: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	hub.WaitFor("hal/initialized", func(s halclienttest.Seen) bool { return s.Initialized == 1 })
	for i := range 3 {
		hub.Publish("sim.led", i%2 == 0)
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
// not read) ends the connection with that error.
func TestHubRefusesMessage(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		nc, err := l.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		r := bufio.NewReader(nc)
		r.ReadBytes('\n') // hal/initialize, id 1
		fmt.Fprintln(nc, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"0.1","bootId":"b"}}`)
		r.ReadBytes('\n') // hal/initialized
		fmt.Fprintln(nc, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"message larger than 262144 bytes","data":{"reason":"too_large"}}}`)
		r.ReadBytes('\n') // until the client closes
	}()
	c, err := halclient.Dial(testCtx(t), "tcp://"+l.Addr().String(), halclient.Options{Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("connection not ended")
	}
	want := "refused a message: message larger than 262144 bytes (INVALID_REQUEST): too_large"
	if err := c.Err(); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Err() = %v; want %q", err, want)
	}
}
