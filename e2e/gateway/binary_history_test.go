package gateway_test

// The history of device values on the real binary: sim.temperature's
// grows as the sim runs, as gateway/history serves it. The helpers are in
// binary_helpers_test.go.

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/internal/history"
	"github.com/openhal/gateway/openhal"
)

// TestBinaryHistory turns the sim's heater on and waits for
// sim.temperature's values (hal/value): each one the connection saw is
// in its history, in order, and the minute buckets count them.
func TestBinaryHistory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	g := startGateway(t, dir)
	g.err.waitFor(t, 0, `msg="history kept in memory" max_series=64 max_bytes=8912896`, waitLong)
	admin := dialUntil(t, g.ws, readAdminToken(t, dir), time.Now().Add(waitLong))
	temps := temperatures(admin)
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()

	if _, err := admin.Write(ctx, "sim.heater", true, "history test"); err != nil {
		t.Fatalf("heater on: %v", err)
	}
	var seen []float64
	for len(seen) < 3 {
		select {
		case v := <-temps:
			seen = append(seen, v)
		case <-ctx.Done():
			t.Fatalf("sim.temperature sent %v after the heater went on, want 3 values", seen)
		}
	}
	full := historyPage(t, admin, history.Params{Device: "sim.temperature"})
	var got []float64
	for _, v := range full.Samples.V {
		got = append(got, v.(float64))
	}
	if full.Field != "temperature" || full.Kind != history.KindNumber || !containsRun(got, seen) {
		t.Errorf("history %+v, want the values seen %v in order", full, seen)
	}
	if len(full.Samples.T) != len(got) || !slices.IsSorted(full.Samples.T) {
		t.Errorf("times %v not one per value, in order", full.Samples.T)
	}
	minutes := historyPage(t, admin, history.Params{Device: "sim.temperature", Resolution: history.Minute})
	b, _ := json.Marshal(minutes.Buckets)
	var buckets history.NumberBuckets
	if err := json.Unmarshal(b, &buckets); err != nil {
		t.Fatal(err)
	}
	var n uint32
	for _, c := range buckets.N {
		n += c
	}
	if int(n) < len(got) {
		t.Errorf("minute buckets %s count %d values, want at least the %d samples", b, n, len(got))
	}
	if _, err := admin.Write(ctx, "sim.heater", false, "history test done"); err != nil {
		t.Errorf("heater off: %v", err)
	}
	g.stop(t)
}

// temperatures sends each value of sim.temperature that c is sent.
func temperatures(c *halclient.Conn) <-chan float64 {
	out := make(chan float64, 1024)
	go func() {
		for n := range c.Notifications() {
			var v struct {
				Device string `json:"device"`
				Value  struct {
					Temperature *float64 `json:"temperature"`
				} `json:"value"`
			}
			if n.Method == openhal.NotifyValue && json.Unmarshal(n.Params, &v) == nil && v.Device == "sim.temperature" && v.Value.Temperature != nil {
				out <- *v.Value.Temperature
			}
		}
	}()
	return out
}

func historyPage(t *testing.T, c *halclient.Conn, p history.Params) history.Page {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	var page history.Page
	if err := c.Call(ctx, history.Method, p, &page); err != nil {
		t.Fatalf("%s %+v: %v", history.Method, p, err)
	}
	return page
}

// containsRun reports whether run appears in all, one after the other.
func containsRun(all, run []float64) bool {
	for i := 0; i+len(run) <= len(all); i++ {
		if slices.Equal(all[i:i+len(run)], run) {
			return true
		}
	}
	return false
}
