package main

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// rounds makes n rounds with the same figures.
func rounds(n int, tp float64, p99 time.Duration) []sample {
	out := make([]sample, n)
	for i := range out {
		out[i] = sample{throughput: tp, lat: latencies{n: 1, p50: p99 / 2, p99: p99}}
	}
	return out
}

func TestCellTargets(t *testing.T) {
	for _, tc := range []struct {
		name            string
		clients         int
		gwTP, echoTP    float64
		gwP99, echoP99  time.Duration
		wantTP, wantP99 string
	}{
		{"both met", 64, 600, 1000, 300, 100, "PASS", "PASS"},
		{"at the limits", 64, 500, 1000, 300, 100, "PASS", "PASS"},
		{"slow", 64, 499, 1000, 100, 100, "FAIL", "PASS"},
		{"late", 64, 1000, 1000, 301, 100, "PASS", "FAIL"},
		{"no target at one client", 1, 1, 1000, 1000, 1, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := cellRows(cellResult{cell: cell{transport: transportTCP, clients: tc.clients},
				gateway: rounds(3, tc.gwTP, tc.gwP99), echo: rounds(3, tc.echoTP, tc.echoP99)})
			if len(rows) != 3 {
				t.Fatalf("%d rows", len(rows))
			}
			if rows[0].result != tc.wantTP || rows[2].result != tc.wantP99 {
				t.Errorf("throughput %q, p99 %q; want %q, %q", rows[0].result, rows[2].result, tc.wantTP, tc.wantP99)
			}
		})
	}
}

func TestReportFailed(t *testing.T) {
	s, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	r := &report{s: s, res: resources{measured: true, rss: 40 << 20, idleCPU: 0.1},
		fanout: fanoutResult{writes: 10, watchers: 2, received: 19, gaps: gapStats{gaps: 1, missed: 1}, elapsed: time.Second, overflows: 1}}
	failed := strings.Join(r.failed(), "\n")
	for _, want := range []string{"RSS with 100 connections", "seq gaps", "closed for a full queue"} {
		if !strings.Contains(failed, want) {
			t.Errorf("failed targets:\n%s\nwant one with %q", failed, want)
		}
	}
	if strings.Contains(failed, "idle CPU") {
		t.Errorf("idle CPU 0.1 %% failed:\n%s", failed)
	}
	r.res = resources{} // no --pid: skipped, not failed
	r.fanout.gaps = gapStats{}
	r.fanout.overflows, r.fanout.overflowErr = 0, errors.New("no /metrics") // skipped, not failed
	if f := r.failed(); len(f) != 0 {
		t.Errorf("failed without resources and gaps: %q", f)
	}
}
