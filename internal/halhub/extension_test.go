package halhub

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
	"github.com/openhal/gateway/openhal/gatewayext"
)

// Extension methods are served like the Hub's own: after hal/initialize,
// behind the scope check, with strict params, at every conformance level.
func TestExtensions(t *testing.T) {
	t.Parallel()
	type echoParams struct {
		Name string `json:"name"`
	}
	exts := map[string]Extension{
		"gateway/echo": {Scope: openhal.ScopeAdmin, Serve: func(_ context.Context, params json.RawMessage) (any, *jsonrpc.Error) {
			var p echoParams
			if err := DecodeParams(params, &p); err != nil {
				return nil, err
			}
			if p.Name == "" {
				return nil, InvalidParams("params: name is required", map[string]any{"param": "name"})
			}
			return map[string]string{"name": p.Name}, nil
		}},
		"gateway/hello": {Scope: openhal.ScopeRead, Serve: func(context.Context, json.RawMessage) (any, *jsonrpc.Error) {
			return "hello", nil
		}},
	}
	th := newTestHub(t, func(o *Options) { o.Extensions = exts; o.Level = openhal.LevelRead })
	reader := th.token(t, "reader", openhal.ScopeRead)

	admin := th.dialTCP(t)
	admin.init(th.admin)
	if m := admin.call("gateway/echo", map[string]string{"name": "notifier"}); m.Error != nil || string(m.Result) != `{"name":"notifier"}` {
		t.Errorf("gateway/echo: %s", m.raw)
	}
	if m := admin.call("gateway/echo", map[string]string{"nmae": "x"}); m.Error == nil || m.Error.Code != openhal.CodeInvalidParams || !strings.Contains(m.Error.Message, `"nmae"`) {
		t.Errorf("unknown param: %s", m.raw)
	}
	if m := admin.call("gateway/echo", nil); m.Error == nil || m.Error.Code != openhal.CodeInvalidParams || m.Error.Data["param"] != "name" {
		t.Errorf("missing name: %s", m.raw)
	}
	if m := admin.call("gateway/nope", nil); m.Error == nil || m.Error.Code != openhal.CodeMethodNotFound {
		t.Errorf("unknown extension: %s", m.raw)
	}

	rc := th.dialTCP(t)
	rc.init(reader)
	if m := rc.call("gateway/echo", map[string]string{"name": "x"}); m.Error == nil || m.Error.Code != openhal.CodeForbidden || m.reason() != "scope" {
		t.Errorf("read token calls an admin extension: %s", m.raw)
	}
	if m := rc.call("gateway/hello", nil); m.Error != nil || string(m.Result) != `"hello"` {
		t.Errorf("read token calls a read extension: %s", m.raw)
	}

	fresh := th.dialTCP(t)
	if m := fresh.call("gateway/hello", nil); m.Error == nil || m.Error.Code != openhal.CodeNotInitialized {
		t.Errorf("before hal/initialize: %s", m.raw)
	}
}

// An Unlimited extension refuses an admin token limited to some devices,
// and serves an unlimited one.
func TestExtensionUnlimited(t *testing.T) {
	t.Parallel()
	exts := map[string]Extension{
		"gateway/everything": {Scope: openhal.ScopeAdmin, Unlimited: true, Serve: func(context.Context, json.RawMessage) (any, *jsonrpc.Error) {
			return "all of it", nil
		}},
	}
	th := newTestHub(t, func(o *Options) { o.Extensions = exts })
	limited := th.dialTCP(t)
	limited.init(th.token(t, "led-admin", openhal.ScopeAdmin, "sim.led"))
	if m := limited.call("gateway/everything", nil); m.Error == nil || m.Error.Code != openhal.CodeForbidden || m.reason() != "device_limited" {
		t.Errorf("a device-limited admin: %s", m.raw)
	}
	admin := th.dialTCP(t)
	admin.init(th.admin)
	if m := admin.call("gateway/everything", nil); m.Error != nil || string(m.Result) != `"all of it"` {
		t.Errorf("an unlimited admin: %s", m.raw)
	}
}

// An extension outside "gateway/" or without Serve is the gateway's bug,
// caught when the Hub is made.
func TestExtensionsRefused(t *testing.T) {
	t.Parallel()
	serve := func(context.Context, json.RawMessage) (any, *jsonrpc.Error) { return nil, nil }
	for name, ext := range map[string]Extension{
		"hal/devices.list": {Scope: openhal.ScopeRead, Serve: serve},
		"gateway/":         {Scope: openhal.ScopeRead, Serve: serve},
		"gateway/noserve":  {Scope: openhal.ScopeRead},
		"gateway/noscope":  {Serve: serve},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("extension %q accepted", name)
				}
			}()
			methods := methods()
			addExtensions(methods, map[string]Extension{name: ext})
		}()
	}
}

// HTTPOptions.Metrics appends to the Hub's own metrics.
func TestMetricsExtra(t *testing.T) {
	t.Parallel()
	th := newTestHub(t)
	srv := httptest.NewServer(th.hub.Handler(HTTPOptions{MetricsPublic: true, Metrics: func(w io.Writer) {
		fmt.Fprint(w, "# HELP gateway_extra An extra.\n# TYPE gateway_extra gauge\ngateway_extra{adapter=\"a\"} 7\n")
	}}))
	defer srv.Close()
	code, _, body := get(t, srv.URL+"/metrics", "")
	if code != http.StatusOK || !strings.Contains(body, "gateway_hal_seq") || !strings.HasSuffix(body, "\ngateway_extra{adapter=\"a\"} 7\n") {
		t.Errorf("/metrics: %d\n%s", code, body)
	}
}

// gateway/values answers the last known values from memory, with their
// age: it reads no device (a sensor whose read fails stays unread and
// unlisted until something measured it), lists no write-only device, and
// answers a limited token its own devices only, without seq.
func TestValuesReadNothing(t *testing.T) {
	th := newTestHub(t)
	reads := 0
	s := sensor("bench.temp")
	s.readFn = func(context.Context) (device.Reading, error) {
		reads++
		return device.Reading{Value: 21.5}, nil
	}
	th.addDevice(t, s)
	th.addDevice(t, output("bench.led", device.RiskLow))
	admin := th.dialTCP(t)
	admin.init(th.admin)
	var res gatewayext.ValuesResult
	if m := admin.call(MethodValues, nil); m.Error != nil || json.Unmarshal(m.Result, &res) != nil || len(res.Values) != 0 || reads != 0 {
		t.Fatalf("values before any value: %s, %d reads", m.raw, reads)
	}
	admin.call("hal/write", map[string]any{"device": "bench.led", "value": true})
	admin.call("hal/read", map[string]any{"device": "bench.temp"}) // the one read
	m := admin.call(MethodValues, nil)
	res = gatewayext.ValuesResult{}
	if err := json.Unmarshal(m.Result, &res); err != nil || len(res.Values) != 2 || reads != 1 {
		t.Fatalf("values: %s, %d reads (want 1)", m.raw, reads)
	}
	for _, v := range res.Values {
		if v.Seq == 0 || v.AgeMs < 0 || v.TS.IsZero() {
			t.Errorf("value %+v: want seq, ts and age", v)
		}
	}
	limited := th.dialTCP(t)
	limited.init(th.token(t, "lim", openhal.ScopeRead, "bench.temp"))
	res = gatewayext.ValuesResult{}
	m = limited.call(MethodValues, nil)
	if err := json.Unmarshal(m.Result, &res); err != nil || len(res.Values) != 1 || res.Values[0].Device != "bench.temp" || res.Values[0].Seq != 0 {
		t.Errorf("values for a token limited to bench.temp: %s", m.raw)
	}
}
