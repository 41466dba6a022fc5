package halhub

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// /healthz tells the stop in its body while the status code stays about
// health: 200 stopped or not; the line names who and since when, never
// the reason (no token is needed to read it). Resumed, it says ok alone.
func TestHealthzSaysStopped(t *testing.T) {
	t.Parallel()
	th := newTestHub(t)
	get := func() (int, string) {
		t.Helper()
		resp, err := http.Get(th.httpURL + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get(); code != http.StatusOK || body != "ok\n" {
		t.Fatalf("/healthz before the stop: %d %q", code, body)
	}
	admin := th.dialTCP(t)
	admin.init(th.admin)
	if m := admin.call("hal/stop", map[string]any{"reason": "secret plans"}); m.Error != nil {
		t.Fatal(m.raw)
	}
	code, body := get()
	want := regexp.MustCompile(`^ok\nstopped by agent root since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n$`)
	if code != http.StatusOK || !want.MatchString(body) {
		t.Errorf("/healthz while stopped: %d %q, want 200 matching %s", code, body, want)
	}
	if m := admin.call("hal/resume", nil); m.Error != nil {
		t.Fatal(m.raw)
	}
	if code, body := get(); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz after resume: %d %q", code, body)
	}
}

// An extension learns who called it: the principal, and whether the
// token is limited to some devices.
func TestExtensionCaller(t *testing.T) {
	t.Parallel()
	exts := map[string]Extension{
		"gateway/whoami": {Scope: openhal.ScopeRead, Serve: func(ctx context.Context, _ json.RawMessage) (any, *jsonrpc.Error) {
			c, ok := CallerOf(ctx)
			return map[string]any{"ok": ok, "name": c.Principal.Name, "scope": c.Principal.Scope, "limited": c.Limited,
				"seesLed": c.Sees("bench.led"), "seesDoor": c.Sees("bench.door"), "room": c.Room}, nil
		}},
	}
	th := newTestHub(t, func(o *Options) { o.Extensions = exts })
	for _, tc := range []struct {
		tok  string
		want string
	}{
		{th.admin, `{"limited":false,"name":"root","ok":true,"room":ROOM,"scope":"admin","seesDoor":true,"seesLed":true}`},
		{th.token(t, "led", openhal.ScopeAdmin, "bench.led"), `{"limited":true,"name":"led","ok":true,"room":ROOM,"scope":"admin","seesDoor":false,"seesLed":true}`},
		{th.token(t, "reader", openhal.ScopeRead), `{"limited":false,"name":"reader","ok":true,"room":ROOM,"scope":"read","seesDoor":true,"seesLed":true}`},
	} {
		c := th.dialTCP(t)
		c.init(tc.tok)
		// Room: the message limit less the answer around the result.
		id := c.nextID.Load() + 1
		room := th.hub.opt.Limits.MaxMessageBytes - len(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":}`+"\n", id))
		want := strings.ReplaceAll(tc.want, "ROOM", strconv.Itoa(room))
		if m := c.call("gateway/whoami", nil); m.Error != nil || string(m.Result) != want {
			t.Errorf("gateway/whoami = %s, want %s", m.raw, want)
		}
	}
	if _, ok := CallerOf(context.Background()); ok {
		t.Error("CallerOf outside a request says ok")
	}
}

// Clients counts the connections past hal/initialize, by scope; one
// still authenticating is not a client, one closed is no more.
func TestClients(t *testing.T) {
	t.Parallel()
	th := newTestHub(t)
	reader := th.token(t, "reader", openhal.ScopeRead)
	a := th.dialTCP(t)
	a.init(th.admin)
	r1, r2 := th.dialTCP(t), th.dialWS(t, "")
	r1.init(reader)
	r2.init(reader)
	th.dialTCP(t) // not initialized
	want := func(total, admin, read int) {
		t.Helper()
		waitFor(t, 5*time.Second, fmt.Sprintf("%d clients, %d admin, %d read", total, admin, read), func() bool {
			c := th.hub.Clients()
			return c.Total == total && c.ByScope[openhal.ScopeAdmin] == admin && c.ByScope[openhal.ScopeRead] == read
		})
	}
	want(3, 1, 2)
	r2.close()
	want(2, 1, 1)
}
