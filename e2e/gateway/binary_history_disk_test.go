package gateway_test

// The history on disk on the real binary: kill -9 while values pour in,
// start again on the same state directory, and every value a completed
// flush wrote is there, in order, with nothing after a gap; gateway
// history prints it. The helpers are in binary_helpers_test.go.

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/internal/history"
)

// historyDiskConfig flushes every second (the least hub.history allows),
// so that the test sees several flushes quickly.
const historyDiskConfig = "board: sim\nhub:\n  history: {flushInterval: 1s}\n"

// TestBinaryHistoryKill9 writes sim.fan as fast as it can (a value each
// write: 0.1, 0.2, ...), waits until /metrics says the history wrote
// (fsync'd) at least 300 samples in two flushes or more, then kills the
// gateway with SIGKILL mid-writes. Started again, the gateway serves, from
// disk, at least as many samples of the first run as /metrics had counted
// then, and sim.fan's are its start value then exactly the values written,
// in order, from the first on: none lost before the last flush, none
// corrupted, whatever the kill tore. The console's page (memory only)
// holds them too: its plot spans the restart.
func TestBinaryHistoryKill9(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gateway.yaml")
	if err := os.WriteFile(cfg, []byte(historyDiskConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, dir, "--config", cfg)
	admin := dialUntil(t, g.ws, readAdminToken(t, dir), time.Now().Add(waitLong))
	wrote := pourFan(admin)
	var flushed int
	waitFor(t, "300 samples written in 2 flushes", func() bool {
		m := metrics(t, g)
		flushed = metricValue(t, m, "gateway_history_samples_written_total")
		return flushed >= 300 && metricValue(t, m, "gateway_history_flushes_total") >= 2
	})
	g.kill(t)
	sent := wrote()
	restarted := time.Now().UnixMilli()

	g = startGateway(t, dir, "--config", cfg)
	admin = dialUntil(t, g.ws, readAdminToken(t, dir), time.Now().Add(waitLong))
	old := 0
	for _, id := range []string{"sim.led", "sim.button", "sim.door", "sim.heater", "sim.temperature", "sim.fan"} {
		_, values := seriesBefore(t, admin, id, restarted)
		old += len(values)
		if id != "sim.fan" {
			continue
		}
		if len(values) == 0 || values[0] != 0.0 {
			t.Fatalf("sim.fan's history starts %v, want its start value 0", values[:min(len(values), 1)])
		}
		for i, v := range values[1:] {
			if i >= len(sent) || v != sent[i] {
				t.Fatalf("sim.fan's sample %d of the first run is %v, want %v, the write of that rank (of %d sent)", i+1, v, sent[min(i, len(sent)-1)], len(sent))
			}
		}
		t.Logf("sim.fan: %d writes sent before the kill, %d on disk after it", len(sent), len(values)-1)
	}
	// The console's request (no from, no since): memory, read back from
	// disk at the start, so that its plot spans the restart.
	if p := historyPage(t, admin, history.Params{Device: "sim.fan"}); len(p.Samples.T) == 0 || p.Samples.T[0] >= restarted {
		t.Errorf("sim.fan's page from memory after the restart starts at %v, want a value of the first run (before %d)", p.Samples.T[:min(1, len(p.Samples.T))], restarted)
	}
	if old < flushed {
		t.Errorf("after kill -9: %d samples of the first run, want at least the %d that /metrics counted written", old, flushed)
	}
	historyCLI(t, g, dir, old)
	g.stop(t)
}

// pourFan writes sim.fan 0.1, 0.2, ... 99.9, 0.1, ... until a write fails
// (the gateway was killed); wrote waits for that and returns the values
// sent.
func pourFan(c *halclient.Conn) (wrote func() []float64) {
	var mu sync.Mutex
	var sent []float64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 1; ; i++ {
			v := float64(i%999+1) / 10
			mu.Lock()
			sent = append(sent, v) // before the write: it may be applied, then the kill
			mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), waitLong)
			_, err := c.Write(ctx, "sim.fan", v, "")
			cancel()
			if err != nil {
				return
			}
		}
	}()
	return func() []float64 {
		<-done
		mu.Lock()
		defer mu.Unlock()
		return sent
	}
}

// seriesBefore reads a device's whole series at full resolution, from
// index 0 on (the disk, then memory), and keeps the samples before t.
func seriesBefore(t *testing.T, c *halclient.Conn, id string, before int64) (times []int64, values []float64) {
	t.Helper()
	from := uint64(0)
	for {
		p := historyPage(t, c, history.Params{Device: id, From: &from})
		if p.Samples == nil {
			t.Fatalf("%s: a page without samples: %+v", id, p)
		}
		for i, ts := range p.Samples.T {
			if ts >= before {
				continue
			}
			v, ok := p.Samples.V[i].(float64)
			if b, isBool := p.Samples.V[i].(bool); isBool {
				v, ok = map[bool]float64{true: 1}[b], true
			}
			if !ok {
				t.Fatalf("%s: sample %v", id, p.Samples.V[i])
			}
			times, values = append(times, ts), append(values, v)
		}
		if !p.More {
			return times, values
		}
		from = p.Next
	}
}

// metricValue reads an unlabelled metric of a /metrics answer.
func metricValue(t testing.TB, body, name string) int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + name + ` (\d+)$`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("/metrics has no %s:\n%s", name, body)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// historyCLI runs gateway history on g: --csv has a header and a row a
// sample, at least old of all the series; for people sim.fan's lines end
// with its unit; a usage error exits 2.
func historyCLI(t *testing.T, g *gateway, dir string, old int) {
	t.Helper()
	rows := 0
	for _, id := range []string{"sim.led", "sim.button", "sim.door", "sim.heater", "sim.temperature", "sim.fan"} {
		r := gw(t, "history", id, "--since", "1h", "--csv", "--state-dir", dir)
		recs, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
		if r.code != 0 || err != nil || len(recs) < 2 || strings.Join(recs[0], ",") != "time,device,field,value,unit" {
			t.Fatalf("history %s --csv: exit %d, %v, stdout %.300q, stderr %q", id, r.code, err, r.stdout, r.stderr)
		}
		rows += len(recs) - 1
	}
	if rows < old {
		t.Errorf("gateway history --csv printed %d samples, want at least the %d of the first run", rows, old)
	}
	r := gw(t, "history", "sim.fan", "--state-dir", dir)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || !regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}  0 %$`).MatchString(lines[0]) {
		t.Errorf("history sim.fan: exit %d, first line %q, want the time and 0 %%", r.code, lines[0])
	}
	if r := gw(t, "history", "--state-dir", dir); r.code != 2 || !strings.HasPrefix(r.stderr, "gateway: history: missing device id\n") {
		t.Errorf("history without a device: exit %d, stderr %q; want 2 and the usage", r.code, r.stderr)
	}
}
