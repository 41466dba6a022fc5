package browser

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal/gatewayext"
)

// spanConfig writes the history to disk every second (the least
// hub.history.flushInterval allows), so that the test's values are on
// disk soon after they are written.
const spanConfig = "board: sim\nhub:\n  history: {flushInterval: 1s}\n"

// TestPlotsSpanRestart: the fan written 17 then 83, and those values on
// disk (/metrics counts the flushes), the gateway is killed (SIGKILL) and
// started again on the same state directory and ports; the fan written 42
// after the restart, the console opened then plots the fan's values of
// both runs: 17, 83, then 42. A history kept in memory only (maxDiskMB: 0)
// would plot the second run's values alone.
func TestPlotsSpanRestart(t *testing.T) {
	t.Parallel()
	chromiumPath(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gateway.yaml")
	if err := os.WriteFile(cfg, []byte(spanConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, dir, "127.0.0.1:0", "127.0.0.1:0", "--config", cfg)
	admin := g.adminToken(t)
	c := g.dial(t, admin)
	writeFan(t, c, 17, 83)
	waitRecorded(t, c, "sim.fan", 83)
	waitFlushed(t, g, c, admin)

	g = g.restart(t)
	c = g.dial(t, admin)
	writeFan(t, c, 42)
	p := logIn(t, g, admin)
	p.do(chromedp.WaitVisible(plotOf("sim.fan")))
	// The sim's fan starts at 0 in each run; the last point is the 42
	// drawn on to now.
	p.waitJS(uplotOf("sim.fan")+`.data[1].join(",")`, `^0,17,83,0,42,42$`)
}

// writeFan writes each of values to sim.fan in turn.
func writeFan(t *testing.T, c *halclient.Conn, values ...float64) {
	t.Helper()
	for _, v := range values {
		ctx, cancel := context.WithTimeout(context.Background(), waitLong)
		_, err := c.Write(ctx, "sim.fan", v, "browser test")
		cancel()
		if err != nil {
			t.Fatalf("write sim.fan %v: %v", v, err)
		}
	}
}

// waitRecorded waits until the history in memory has v as device's
// newest value: the history takes values from the Hub's events, which
// may come after the write that caused them was answered.
func waitRecorded(t *testing.T, c *halclient.Conn, device string, v float64) {
	t.Helper()
	var page gatewayext.HistoryPage
	pollUntil(t, device+"'s history ending with "+strconv.FormatFloat(v, 'g', -1, 64), func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), waitLong)
		defer cancel()
		if err := c.Call(ctx, gatewayext.MethodHistory, gatewayext.HistoryParams{Device: device}, &page); err != nil {
			t.Fatalf("%s %s: %v", gatewayext.MethodHistory, device, err)
		}
		s := page.Samples
		return s != nil && len(s.V) > 0 && s.V[len(s.V)-1] == v
	})
}

// waitFlushed waits until the history has written to disk every value it
// held when called. A flush writes every value not written yet, but one
// may be under way, its values taken before the call: so this waits for
// two flushes, the second begun after the first ended. Each round gives
// the flush something to write (sim.led toggled), since a flush with
// nothing to write does not happen, and /metrics would not count it.
func waitFlushed(t *testing.T, g *gateway, c *halclient.Conn, tok string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	led, err := c.Read(ctx, "sim.led", 0)
	if err != nil {
		t.Fatalf("read sim.led: %v", err)
	}
	on, _ := led.Value.(bool)
	for range 2 {
		before := samplesWritten(t, g, tok)
		on = !on
		if _, err := c.Write(ctx, "sim.led", on, "browser test: a value for the history to flush"); err != nil {
			t.Fatalf("write sim.led %v: %v", on, err)
		}
		pollUntil(t, "a flush counted by /metrics", func() bool { return samplesWritten(t, g, tok) != before })
	}
}

// samplesWritten is /metrics' count of the samples the history has on
// disk (written and fsync'd).
func samplesWritten(t *testing.T, g *gateway, tok string) int {
	t.Helper()
	const name = "gateway_history_samples_written_total"
	m := regexp.MustCompile(`^` + name + ` (\d+)$`).FindStringSubmatch(metricLines(t, g, tok, name))
	if m == nil {
		t.Fatalf("/metrics has no %s: is the history kept on disk?", name)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// pollUntil looks at cond every 20 ms until it holds, failing the test
// past waitLong.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, waitLong)
		}
		<-time.After(20 * time.Millisecond)
	}
}
