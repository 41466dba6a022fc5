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

// Each cell's targets: 1 client throughput and p50, 64 clients
// throughput and p99, writes at 64 clients their throughput against the
// audit log's appends; ratios at the target pass.
func TestCellTargets(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		write                    bool
		clients                  int
		gwTP, echoTP             float64
		gwP99, echoP99           time.Duration
		wantTP, wantP50, wantP99 string
	}{
		{"64: both met", false, 64, 800, 1000, 140, 100, "PASS", "", "PASS"},
		{"64: at the limits", false, 64, 750, 1000, 150, 100, "PASS", "", "PASS"},
		{"64: slow", false, 64, 749, 1000, 100, 100, "FAIL", "", "PASS"},
		{"64: late", false, 64, 1000, 1000, 151, 100, "PASS", "", "FAIL"},
		{"1: at the limits", false, 1, 500, 1000, 400, 200, "PASS", "PASS", ""},
		{"1: slow and late", false, 1, 499, 1000, 402, 200, "FAIL", "FAIL", ""},
		{"8: no target", false, 8, 1, 1000, 1000, 1, "", "", ""},
		{"writes, 64: at the limit", true, 64, 700, 1000, 1000, 1, "PASS", "", ""},
		{"writes, 64: slow", true, 64, 699, 1000, 1, 1, "FAIL", "", ""},
		{"writes, 1: no target", true, 1, 1, 1000, 1000, 1, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := cellRows(cellResult{cell: cell{write: tc.write, transport: transportTCP, clients: tc.clients},
				gateway: rounds(3, tc.gwTP, tc.gwP99), echo: rounds(3, tc.echoTP, tc.echoP99)})
			if len(rows) != 3 {
				t.Fatalf("%d rows", len(rows))
			}
			if rows[0].result != tc.wantTP || rows[1].result != tc.wantP50 || rows[2].result != tc.wantP99 {
				t.Errorf("throughput %q, p50 %q, p99 %q; want %q, %q, %q", rows[0].result, rows[1].result, rows[2].result, tc.wantTP, tc.wantP50, tc.wantP99)
			}
		})
	}
}

func TestReportFailed(t *testing.T) {
	s, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	alone, watched := latencies{n: 1, p99: 100}, latencies{n: 1, p99: 151}
	r := &report{s: s, res: resources{measured: true, rss: 21 << 20, idleCPU: 0.1},
		fanout: fanoutResult{writes: 10, watchers: 2, received: 19, gaps: gapStats{gaps: 1, missed: 1}, elapsed: time.Second, overflows: 1,
			writeLat: watched, aloneLat: alone, rss: 41 << 20}}
	failed := strings.Join(r.failed(), "\n")
	for _, want := range []string{"RSS with 100 idle connections", "RSS right after the fan-out", "seq gaps", "closed for a full queue", "the writer's hal/write p99"} {
		if !strings.Contains(failed, want) {
			t.Errorf("failed targets:\n%s\nwant one with %q", failed, want)
		}
	}
	if strings.Contains(failed, "idle CPU") {
		t.Errorf("idle CPU 0.1 %% failed:\n%s", failed)
	}
	r.res = resources{} // no --pid: skipped, not failed
	r.fanout.gaps = gapStats{}
	r.fanout.writeLat = latencies{n: 1, p99: 150}
	r.fanout.overflows, r.fanout.overflowErr = 0, errors.New("no /metrics") // skipped, not failed
	if f := r.failed(); len(f) != 0 {
		t.Errorf("failed without resources and gaps: %q", f)
	}
}

// --only: a section left out is reported skipped, never held; a figure
// of one that ran is judged as ever; an unknown section is a usage error.
func TestOnly(t *testing.T) {
	s, err := parseFlags([]string{"--only", "idle, fanout"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !s.runs("idle") || !s.runs("fanout") || s.runs("rss") || s.runs("reads") || s.runs("writes") {
		t.Errorf("--only idle,fanout: runs %v", s.only)
	}
	r := &report{s: s, res: resources{measured: true, rss: 21 << 20, idleCPU: 0.5},
		fanout: fanoutResult{writes: 1, watchers: 1, received: 1, elapsed: time.Second, rss: 41 << 20}}
	skipped := map[string]string{}
	for _, x := range r.rows() {
		skipped[x.figure] = x.result
	}
	for figure, result := range skipped {
		switch {
		case strings.HasPrefix(figure, "RSS with 100 idle connections (MiB)"):
			if result != "skipped" {
				t.Errorf("%s, not in --only: %q, want skipped", figure, result)
			}
		case strings.HasPrefix(figure, "idle CPU"), strings.HasPrefix(figure, "RSS right after the fan-out"):
			if result != "FAIL" {
				t.Errorf("%s, in --only and over its target: %q, want FAIL", figure, result)
			}
		}
	}
	s.only = map[string]bool{"reads": true}
	if rows := r.fanoutRows(); len(rows) != 1 || rows[0].result != "skipped" {
		t.Errorf("fan-out not in --only: %+v, want one skipped row", rows)
	}
	if _, err := parseFlags([]string{"--only", "fanout,nope"}, io.Discard); !errors.Is(err, errUsage) {
		t.Errorf("--only fanout,nope: %v, want a usage error", err)
	}
	if d, _ := parseFlags(nil, io.Discard); d.only != nil || !d.runs("writes") {
		t.Errorf("no --only: %v, want every section", d.only)
	}
}
