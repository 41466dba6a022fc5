package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/e2e/binaries"
)

func TestMain(m *testing.M) {
	code := m.Run()
	binaries.Cleanup()
	os.Exit(code)
}

// TestQuickRun builds the gateway and halbench, runs `halbench --quick`
// against that gateway, and checks that the table has every row. It
// checks no figure against its target: the machine running the tests is
// shared and noisy, and make bench is where the targets are held.
func TestQuickRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs both binaries; skipped with -short")
	}
	gateway := binaries.Gateway(t)
	halbench := binaries.Build(t, binaries.Program{Pkg: "./cmd/halbench"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, halbench, "--quick", "--no-fail", "--gateway", gateway)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("halbench: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	want := []string{
		"Command: `" + halbench + " --quick --no-fail --gateway " + gateway + "`",
		"Gateway (started by halbench): `" + gateway + " run --config ",
		"| figure | gateway | limit | gateway/limit | target | |",
		"| fan-out: writes of sim.led, achieved rate | ",
		"| fan-out: values received by 250 watchers | ",
		"| fan-out: the writer's hal/write p99, 250 watchers (limit: the writer alone) | ",
		"| fan-out: seq gaps | ",
		"| fan-out: delivery latency p50 (receipt − ts) | ",
		"| fan-out: delivery latency p99 (receipt − ts) | ",
		"| fan-out: connections closed for a full queue | 0 |",
		"| fan-out: gateway CPU during the writes (% of one core) | ",
		"| RSS with 100 idle connections (MiB) | ",
		"| RSS right after the fan-out, 250 watchers connected (MiB) | ",
		"| idle CPU, 100 clients, 20 adapters, 3s (% of one core) | ",
		"| RSS with 100 idle connections and 20 idle adapters, the idle CPU's gateway (MiB) | ",
		"| peak RSS, VmHWM at the end (MiB) | ",
	}
	for _, tr := range []string{"WebSocket", "TCP"} {
		for _, n := range []string{"1 client", "64 clients"} {
			for _, f := range []string{"throughput (req/s)", "latency p50", "latency p99"} {
				want = append(want, "| hal/read, "+tr+", "+n+": "+f+" | ")
			}
		}
	}
	for _, n := range []string{"1 client", "64 clients"} {
		for _, f := range []string{"throughput (writes/s; limit: the audit log's synced appends/s, one at a time)", "latency p50", "latency p99"} {
			want = append(want, "| hal/write of sim.led (audited), TCP, "+n+": "+f+" | ")
		}
	}
	want = append(want, "| hal/write of sim.led (audited), TCP, 64 clients: throughput beside 64 appenders sharing the audit log's syncs")
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("no %q in the output:\n%s", w, out)
		}
	}
	// Every figure is a figure: a row whose gateway cell is empty or
	// "n/a" means a phase did not run.
	for line := range strings.Lines(out) {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| figure") {
			continue
		}
		cells := strings.Split(line, " | ")
		if len(cells) < 2 || strings.TrimSpace(cells[1]) == "" || strings.HasPrefix(cells[1], "n/a") {
			t.Errorf("row without a figure: %s", line)
		}
	}
}
