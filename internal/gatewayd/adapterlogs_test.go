package gatewayd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/internal/halhub/hubtest"
	"github.com/openhal/gateway/internal/supervisor"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
	"github.com/openhal/gateway/openhal/gatewayext"
)

// writeAdapterLog writes n lines "line 0".."line n-1", each padded to
// width bytes, as adapter name's log in stateDir.
func writeAdapterLog(t *testing.T, stateDir, name string, n, width int) []string {
	t.Helper()
	dir := supervisor.LogDir(stateDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for i := range n {
		l := fmt.Sprintf("line %d", i)
		lines = append(lines, l+strings.Repeat(".", max(width-len(l), 0)))
	}
	if err := os.WriteFile(filepath.Join(dir, name+".log"), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return lines
}

// logsBench serves gateway/adapters.logs from a real Hub over TCP (its
// scope and device-limit checks, its message limit: maxMessage, 0 for the
// default), with one enabled adapter "ghost" that is not installed and
// whose log, if any, is in stateDir.
func logsBench(t *testing.T, stateDir string, maxMessage int) (*hubtest.Bench, string) {
	t.Helper()
	svc := &adapterService{}
	b := hubtest.New(t, hubtest.Configure(func(o *halhub.Options) {
		o.Extensions = svc.extensions()
		if maxMessage > 0 {
			o.Limits.MaxMessageBytes = maxMessage
			o.Limits.InitMessageBytes = maxMessage
		}
	}))
	sup, err := supervisor.New(supervisor.Options{
		StateDir: stateDir, Enabled: []string{"ghost"}, Hub: b.Hub(), Registry: b.Registry(),
		Version: "test", User: "nobody", Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	svc.sup = sup
	return b, b.Listen("tcp")
}

// callLogs calls gateway/adapters.logs with params over a connection
// with the token tok, answering the result's JSON or the error.
func callLogs(t *testing.T, url, tok, params string) (json.RawMessage, *jsonrpc.Error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := halclient.Dial(ctx, url, halclient.Options{Token: tok, ClientName: "adapterlogs_test"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var res json.RawMessage
	err = c.Call(ctx, gatewayext.MethodAdaptersLogs, json.RawMessage(params), &res)
	var jerr *jsonrpc.Error
	if errors.As(err, &jerr) {
		return nil, jerr
	}
	if err != nil {
		t.Fatalf("%s: %v", gatewayext.MethodAdaptersLogs, err)
	}
	return res, nil
}

// gateway/adapters.logs answers the last lines (20 unless asked, 1 to
// 200), refuses an adapter that is not enabled, bad params, a reader and
// a device-limited admin, and answers no lines for an adapter with no log.
func TestAdapterLogsMethod(t *testing.T) {
	dir := t.TempDir()
	lines := writeAdapterLog(t, dir, "ghost", 250, 0)
	b, url := logsBench(t, dir, 0)
	admin := b.Admin
	limited := b.Token("led-admin", openhal.KindOperator, openhal.ScopeAdmin, "sim.led")
	reader := b.Token("reader", openhal.KindOperator, openhal.ScopeRead)
	last := func(n int) string {
		b, _ := json.Marshal(lines[len(lines)-n:])
		return string(b)
	}
	tests := []struct {
		name       string
		tok        string
		params     string
		want       string // the result, exactly
		wantCode   int64
		wantReason string
	}{
		{"default 20", admin, `{"name":"ghost"}`, `{"adapter":"ghost","lines":` + last(20) + `,"omitted":0}`, 0, ""},
		{"lines 1", admin, `{"name":"ghost","lines":1}`, `{"adapter":"ghost","lines":["line 249"],"omitted":0}`, 0, ""},
		{"lines 200", admin, `{"name":"ghost","lines":200}`, `{"adapter":"ghost","lines":` + last(200) + `,"omitted":0}`, 0, ""},
		{"lines 0", admin, `{"name":"ghost","lines":0}`, "", openhal.CodeInvalidParams, "invalid_params"},
		{"lines 201", admin, `{"name":"ghost","lines":201}`, "", openhal.CodeInvalidParams, "invalid_params"},
		{"lines not a number", admin, `{"name":"ghost","lines":"5"}`, "", openhal.CodeInvalidParams, ""},
		{"no name", admin, `{}`, "", openhal.CodeInvalidParams, "invalid_params"},
		{"unknown param", admin, `{"name":"ghost","tail":5}`, "", openhal.CodeInvalidParams, "unknown_param"},
		{"not enabled", admin, `{"name":"nope"}`, "", openhal.CodeInvalidParams, gatewayext.ReasonAdapterNotEnabled},
		{"device-limited admin", limited, `{"name":"ghost"}`, "", openhal.CodeForbidden, "device_limited"},
		{"reader", reader, `{"name":"ghost"}`, "", openhal.CodeForbidden, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, rerr := callLogs(t, url, tt.tok, tt.params)
			if tt.wantCode == 0 {
				if rerr != nil || string(res) != tt.want {
					t.Fatalf("answer %s, %v; want %s", res, rerr, tt.want)
				}
				return
			}
			if rerr == nil {
				t.Fatalf("answer %s, want error %d", res, tt.wantCode)
			}
			var data struct{ Reason string }
			b, _ := json.Marshal(rerr.Data)
			json.Unmarshal(b, &data)
			if rerr.Code != tt.wantCode || (tt.wantReason != "" && data.Reason != tt.wantReason) {
				t.Errorf("error %d %q (%s), want %d %s", rerr.Code, rerr.Message, data.Reason, tt.wantCode, tt.wantReason)
			}
		})
	}
	if err := os.Remove(filepath.Join(supervisor.LogDir(dir), "ghost.log")); err != nil {
		t.Fatal(err)
	}
	if res, rerr := callLogs(t, url, admin, `{"name":"ghost"}`); rerr != nil || string(res) != `{"adapter":"ghost","lines":[],"omitted":0}` {
		t.Errorf("no log: %s, %v", res, rerr)
	}
}

// An answer that would pass the message limit keeps the newest lines
// that fit and counts the others as omitted.
func TestAdapterLogsFitMessage(t *testing.T) {
	dir := t.TempDir()
	lines := writeAdapterLog(t, dir, "ghost", 50, 300)
	const maxMessage = 2048
	b, url := logsBench(t, dir, maxMessage)
	res, rerr := callLogs(t, url, b.Admin, `{"name":"ghost","lines":50}`)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if whole := len(`{"jsonrpc":"2.0","id":1,"result":}`) + len(res) + 1; whole > maxMessage {
		t.Errorf("the answer takes %d bytes, over the limit %d", whole, maxMessage)
	}
	var ans gatewayext.AdapterLogs
	if err := json.Unmarshal(res, &ans); err != nil {
		t.Fatal(err)
	}
	kept := len(ans.Lines)
	if kept < 5 || kept+ans.Omitted != 50 || ans.Lines[kept-1] != lines[49] || ans.Lines[0] != lines[50-kept] {
		t.Errorf("kept %d lines (first %.8q, last %.8q), omitted %d: want the newest that fit, the rest omitted", kept, ans.Lines[0], ans.Lines[kept-1], ans.Omitted)
	}
}
