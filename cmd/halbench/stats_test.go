package main

import (
	"fmt"
	"math"
	"os"
	"slices"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{7}, 7},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{5, 5, 1, 9, 100}, 5},
		{[]float64{-1, 1}, 0},
	} {
		in := slices.Clone(tc.in)
		if got := median(in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
		if !slices.Equal(in, tc.in) {
			t.Errorf("median(%v) changed its input to %v", tc.in, in)
		}
	}
	if got := median(nil); !math.IsNaN(got) {
		t.Errorf("median(nil) = %v, want NaN", got)
	}
}

func TestMedianDuration(t *testing.T) {
	for _, tc := range []struct {
		in   []time.Duration
		want time.Duration
	}{
		{nil, 0},
		{[]time.Duration{3}, 3},
		{[]time.Duration{30, 10, 20}, 20},
		{[]time.Duration{40, 10, 30, 20}, 25},
		{[]time.Duration{1, 2}, 1}, // rounds down to a whole nanosecond
	} {
		if got := medianDuration(tc.in); got != tc.want {
			t.Errorf("medianDuration(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestPercentile(t *testing.T) {
	hundred := make([]time.Duration, 100) // 1..100
	for i := range hundred {
		hundred[i] = time.Duration(i + 1)
	}
	for _, tc := range []struct {
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{nil, 50, 0},
		{[]time.Duration{7}, 0, 7},
		{[]time.Duration{7}, 99, 7},
		{hundred, 0, 1},
		{hundred, 1, 1},
		{hundred, 50, 50},
		{hundred, 99, 99},
		{hundred, 99.5, 100},
		{hundred, 100, 100},
		{[]time.Duration{10, 20, 30, 40}, 50, 20},
		{[]time.Duration{10, 20, 30, 40}, 51, 30},
		{[]time.Duration{10, 20, 30, 40}, 99, 40},
	} {
		if got := percentile(tc.sorted, tc.p); got != tc.want {
			t.Errorf("percentile(%d samples, %v) = %v, want %v", len(tc.sorted), tc.p, got, tc.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3}
	got := summarize(ds)
	if want := (latencies{n: 5, p50: 3, p99: 5}); got != want {
		t.Errorf("summarize = %+v, want %+v", got, want)
	}
}

func TestSummarizeRounds(t *testing.T) {
	ss := []sample{
		{throughput: 100, lat: latencies{p50: 10, p99: 90}},
		{throughput: 300, lat: latencies{p50: 30, p99: 10}},
		{throughput: 200, lat: latencies{p50: 20, p99: 50}},
	}
	got := summarizeRounds(ss)
	if want := (summary{throughput: 200, p50: 20, p99: 50}); got != want {
		t.Errorf("summarizeRounds = %+v, want %+v", got, want)
	}
}

func TestParseStatTicks(t *testing.T) {
	for _, tc := range []struct {
		stat    string
		want    uint64
		wantErr bool
	}{
		{"1234 (gateway) S 1 1234 1234 0 -1 4194560 812 0 0 0 150 37 0 0 20 0 9 0 123 1000 400 18446744073709551615", 187, false},
		{"99 (a (b) c) R 1 99 99 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 5 6 7", 10, false},
		{"99 (x) R 1 2", 0, true},
		{"no parenthesis", 0, true},
		{"1 (x) S 1 1 1 0 -1 0 0 0 0 0 ten 3 0", 0, true},
	} {
		got, err := parseStatTicks(tc.stat)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("parseStatTicks(%.30q) = %d, %v; want %d, error %v", tc.stat, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestParseStatusMemory(t *testing.T) {
	status := "Name:\tgateway\nVmPeak:\t 1300000 kB\nVmHWM:\t   20480 kB\nVmRSS:\t   10240 kB\nThreads:\t9\n"
	rss, peak, err := parseStatusMemory(status)
	if err != nil || rss != 10<<20 || peak != 20<<20 {
		t.Errorf("parseStatusMemory = %d, %d, %v; want %d, %d", rss, peak, err, 10<<20, 20<<20)
	}
	if _, _, err := parseStatusMemory("Name:\tx\nVmRSS:\t 1 kB\n"); err == nil {
		t.Error("parseStatusMemory without VmHWM: no error")
	}
}

func TestCPUPercent(t *testing.T) {
	if got := cpuPercent(50, 10*time.Second); got != 5 {
		t.Errorf("cpuPercent(50 ticks, 10s) = %v, want 5", got)
	}
}

// cpuTime counts this process's threads' time on a CPU to the
// nanosecond: it grows with work done.
func TestCPUTime(t *testing.T) {
	t0, err := cpuTime(os.Getpid())
	if err != nil {
		t.Skip("no /proc/PID/task/*/schedstat here:", err)
	}
	deadline := time.Now().Add(20 * time.Millisecond)
	for n := 0; time.Now().Before(deadline); n++ {
		_ = fmt.Sprint(n) // work
	}
	t1, err := cpuTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if d := t1 - t0; d < 5*time.Millisecond || d > time.Minute {
		t.Errorf("20 ms of work counted as %v", d)
	}
}
