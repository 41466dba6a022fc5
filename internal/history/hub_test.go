package history_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/internal/halhub/hubtest"
	"github.com/openhal/gateway/internal/history"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// hubBench is a real Hub serving gateway/history over TCP, the history
// fed from its registry as the gateway's is.
func hubBench(t *testing.T, maxMessage int) (*hubtest.Bench, string) {
	t.Helper()
	h := history.New(history.Options{})
	var b *hubtest.Bench
	known := func(id string) bool { _, ok := b.Registry().Describe(id); return ok }
	b = hubtest.New(t, hubtest.Configure(func(o *halhub.Options) {
		o.Extensions = h.Extensions(known)
		if maxMessage > 0 {
			o.Limits.MaxMessageBytes = maxMessage
		}
	}))
	t.Cleanup(h.Subscribe(b.Registry()))
	return b, b.Listen("tcp")
}

func dial(t *testing.T, url, tok string) *halclient.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := halclient.Dial(ctx, url, halclient.Options{Token: tok, ClientName: "history_test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func call(t *testing.T, c *halclient.Conn, method string, params any) (history.Page, *jsonrpc.Error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var p history.Page
	err := c.Call(ctx, method, params, &p)
	var jerr *jsonrpc.Error
	if errors.As(err, &jerr) {
		return p, jerr
	}
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return p, nil
}

// A token limited to some devices gets DEVICE_NOT_FOUND for the others,
// the very answer hal/read gives, as for a device that does not exist;
// and the history of its own.
func TestHubDeviceLimits(t *testing.T) {
	t.Parallel()
	b, url := hubBench(t, 0)
	b.Set("sim.led", true)
	b.Set("sim.temperature", map[string]any{"temperature": 21.5})
	limited := dial(t, url, b.Token("led-reader", openhal.KindAgent, openhal.ScopeRead, "sim.led"))
	admin := dial(t, url, b.Admin)

	for _, id := range []string{"sim.temperature", "sim.nothing"} {
		_, got := call(t, limited, history.Method, history.Params{Device: id})
		_, read := call(t, limited, openhal.MethodRead, openhal.ReadParams{Device: id})
		g, _ := json.Marshal(got)
		r, _ := json.Marshal(read)
		if got == nil || got.Code != openhal.CodeDeviceNotFound || string(g) != string(r) {
			t.Errorf("limited token, %s: %s, want hal/read's %s", id, g, r)
		}
	}
	if _, err := call(t, admin, history.Method, history.Params{Device: "sim.nothing"}); err == nil || err.Code != openhal.CodeDeviceNotFound {
		t.Errorf("admin, a device that does not exist: %v, want DEVICE_NOT_FOUND", err)
	}

	p, err := call(t, limited, history.Method, history.Params{Device: "sim.led"})
	if err != nil || p.Kind != history.KindBoolean || len(p.Samples.V) != 1 || p.Samples.V[0] != true {
		t.Errorf("limited token, its own sim.led: %+v %v, want one sample true", p, err)
	}
	p, err = call(t, admin, history.Method, history.Params{Device: "sim.temperature"})
	if err != nil || p.Field != "temperature" || len(p.Samples.V) != 1 || p.Samples.V[0] != 21.5 {
		t.Errorf("admin, sim.temperature: %+v %v, want one sample 21.5", p, err)
	}
}

// Bad params are INVALID_PARAMS naming the param.
func TestHubBadParams(t *testing.T) {
	t.Parallel()
	b, url := hubBench(t, 0)
	c := dial(t, url, b.Admin)
	for _, tc := range []struct {
		name   string
		params any
		param  string
	}{
		{"no device", map[string]any{}, "device"},
		{"an unknown param", map[string]any{"device": "sim.led", "resolutoin": "full"}, "resolutoin"},
		{"a bad resolution", map[string]any{"device": "sim.led", "resolution": "hour"}, "resolution"},
		{"a zero limit", map[string]any{"device": "sim.led", "limit": 0}, "limit"},
		{"until before since", map[string]any{"device": "sim.led", "since": 10, "until": 5}, "until"},
		{"a string for a time", map[string]any{"device": "sim.led", "since": "2026-01-01T00:00:00Z"}, "since"},
		{"a field the device has not", map[string]any{"device": "sim.led", "field": "x"}, "field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := call(t, c, history.Method, tc.params)
			b, _ := json.Marshal(err)
			if err == nil || err.Code != openhal.CodeInvalidParams || !json.Valid(b) || !strings.Contains(string(b), `"param":"`+tc.param+`"`) {
				t.Errorf("%s: %s, want INVALID_PARAMS naming %q", tc.name, b, tc.param)
			}
		})
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || (len(s) >= len(sub) && (s[:len(sub)] == sub || contains(s[1:], sub)))
}

// Under a small message limit the history comes in pages that each fit,
// and following next reads every value once.
func TestHubPages(t *testing.T) {
	t.Parallel()
	b, url := hubBench(t, 2048)
	c := dial(t, url, b.Admin)
	const values = 300
	for i := range values {
		b.Set("sim.temperature", map[string]any{"temperature": 20 + float64(i)/1000})
	}
	var got []any
	pages := 0
	for from := uint64(0); ; pages++ {
		p, err := call(t, c, history.Method, history.Params{Device: "sim.temperature", From: &from})
		if err != nil {
			t.Fatalf("page from %d: %v", from, err)
		}
		got = append(got, p.Samples.V...)
		if from = p.Next; !p.More {
			break
		}
	}
	if len(got) != values || got[0] != 20.0 || got[values-1] != 20.299 || pages < 5 {
		t.Errorf("%d values in %d pages, first %v last %v: want %d in several", len(got), pages, got[0], got[len(got)-1], values)
	}
}
