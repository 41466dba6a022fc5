package gatewayd

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/internal/supervisor"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal/gatewayext"
)

// newAdapterService serves a supervisor with one enabled adapter,
// "ghost", that is not installed (so failed, and never spawned).
func newAdapterService(t *testing.T) *adapterService {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	reg := device.NewRegistry(nil)
	svc := &adapterService{}
	hub := halhub.New(reg, halhub.Options{Logger: log, Extensions: svc.extensions()})
	t.Cleanup(hub.Close)
	sup, err := supervisor.New(supervisor.Options{
		StateDir: t.TempDir(), Enabled: []string{"ghost"}, Hub: hub, Registry: reg,
		Version: "test", User: "nobody", Log: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	svc.sup = sup
	return svc
}

// The adapter methods' params are strict, and an adapter that is not
// enabled is named in an INVALID_PARAMS answer that the CLI recognises.
func TestAdapterMethods(t *testing.T) {
	svc := newAdapterService(t)
	exts := svc.extensions()
	tests := []struct {
		method, params string
		wantCode       int64
		wantReason     string
		wantText       string // in the result's JSON or the error's message
	}{
		{gatewayext.MethodAdaptersStatus, ``, 0, "", `"name":"ghost","user":"nobody","state":"failed","reason":"manifest"`},
		{gatewayext.MethodAdaptersStatus, `{}`, 0, "", `"adapters":[{"name":"ghost"`},
		{gatewayext.MethodAdaptersStatus, `{"name":"ghost"}`, 0, "", `"adapters":[{"name":"ghost"`},
		{gatewayext.MethodAdaptersStatus, `{"name":"nope"}`, jsonrpc.CodeInvalidParams, gatewayext.ReasonAdapterNotEnabled, `"nope"`},
		{gatewayext.MethodAdaptersStatus, `{"nmae":"ghost"}`, jsonrpc.CodeInvalidParams, "unknown_param", `"nmae"`},
		{gatewayext.MethodAdaptersReset, `{}`, jsonrpc.CodeInvalidParams, "invalid_params", "name is required"},
		{gatewayext.MethodAdaptersReset, `{"name":"nope"}`, jsonrpc.CodeInvalidParams, gatewayext.ReasonAdapterNotEnabled, `"nope"`},
		{gatewayext.MethodAdaptersReset, `{"name":"ghost","force":true}`, jsonrpc.CodeInvalidParams, "unknown_param", `"force"`},
		{gatewayext.MethodAdaptersReload, `{"name":"ghost"}`, 0, "", `"adapter":{"name":"ghost","user":"nobody","state":"failed"`},
		{gatewayext.MethodAdaptersReset, `{"name":"ghost"}`, jsonrpc.CodeInvalidRequest, "adapter_refused", "ghost"},
		{gatewayext.MethodAdaptersReload, `{"name":"nope"}`, jsonrpc.CodeInvalidParams, gatewayext.ReasonAdapterNotEnabled, `"nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.params, func(t *testing.T) {
			var params json.RawMessage
			if tt.params != "" {
				params = json.RawMessage(tt.params)
			}
			res, rerr := exts[tt.method].Serve(context.Background(), params)
			if tt.wantCode != 0 {
				if rerr == nil {
					t.Fatalf("answer %v, want error %d", res, tt.wantCode)
				}
				var data struct{ Reason string }
				b, _ := json.Marshal(rerr.Data)
				json.Unmarshal(b, &data)
				reason := data.Reason
				if rerr.Code != tt.wantCode || reason != tt.wantReason || !strings.Contains(rerr.Message, tt.wantText) {
					t.Errorf("error %d %q (%s), want %d %q containing %s", rerr.Code, rerr.Message, reason, tt.wantCode, tt.wantReason, tt.wantText)
				}
				return
			}
			if rerr != nil {
				t.Fatalf("error %v", rerr)
			}
			b, _ := json.Marshal(res)
			if !strings.Contains(string(b), tt.wantText) {
				t.Errorf("answer %s, want %s in it", b, tt.wantText)
			}
		})
	}
}

// /metrics has every adapter series, with HELP and TYPE lines.
func TestAdapterMetrics(t *testing.T) {
	svc := newAdapterService(t)
	var b strings.Builder
	svc.writeMetrics(&b)
	out := b.String()
	for _, want := range []string{
		"# TYPE gateway_adapter_up gauge\ngateway_adapter_up{adapter=\"ghost\"} 0\n",
		"gateway_adapter_state{adapter=\"ghost\",state=\"failed\"} 1\n",
		"gateway_adapter_state{adapter=\"ghost\",state=\"running\"} 0\n",
		"gateway_adapter_pid{adapter=\"ghost\"} 0\n",
		"# TYPE gateway_adapter_restarts_total counter\ngateway_adapter_restarts_total{adapter=\"ghost\"} 0\n",
		"gateway_adapter_crashes_total{adapter=\"ghost\"} 0\n",
		"gateway_adapter_strikes{adapter=\"ghost\"} 0\n",
		"gateway_adapter_strikes_total{adapter=\"ghost\"} 0\n",
		"gateway_adapter_dropped_events_total{adapter=\"ghost\"} 0\n",
		"gateway_adapter_late_replies_total{adapter=\"ghost\"} 0\n",
		"# HELP gateway_adapter_uptime_seconds ",
		"gateway_adapter_uptime_seconds{adapter=\"ghost\"} 0\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("metrics lack %q:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !strings.HasPrefix(line, "# HELP gateway_adapter_") && !strings.HasPrefix(line, "# TYPE gateway_adapter_") && !strings.HasPrefix(line, "gateway_adapter_") {
			t.Errorf("line %q is not a metric of an adapter", line)
		}
	}
}
