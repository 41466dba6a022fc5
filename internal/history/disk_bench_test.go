package history

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// dirBytes is the size of the files under dir.
func dirBytes(b *testing.B, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n += info.Size()
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkDiskDay records a day of one number device that changes once
// a second (a sensor polled at 1 Hz), flushed every 30 s as the gateway
// does, and reports the bytes its day takes on disk: the samples
// (full/) and the one-minute buckets (minute/), and the write and fsync
// calls a minute. docs/performance.md has the figures.
func BenchmarkDiskDay(b *testing.B) {
	for range b.N {
		dir := b.TempDir()
		now := t0
		opt := StoreOptions{KeepFull: 7 * 24 * time.Hour, KeepMinutes: 365 * 24 * time.Hour, MaxBytes: 512 << 20, Now: func() time.Time { return now }}
		h := New(Options{})
		st, err := h.Open(dir, opt)
		if err != nil {
			b.Fatal(err)
		}
		for s := range 24 * 3600 {
			now = t0.Add(time.Duration(s) * time.Second)
			h.Record(value("greenhouse.temperature", 20+float64(s%600)/100, now))
			if s%30 == 29 {
				if err := h.Flush(false); err != nil {
					b.Fatal(err)
				}
			}
		}
		stats := st.Stats()
		st.Close()
		b.ReportMetric(float64(dirBytes(b, filepath.Join(dir, "full"))), "full-bytes/day")
		b.ReportMetric(float64(dirBytes(b, filepath.Join(dir, "minute"))), "minute-bytes/day")
		b.ReportMetric(float64(stats.Writes)/(24*60), "writes/min")
		b.ReportMetric(float64(stats.Syncs)/(24*60), "fsyncs/min")
	}
}

// weekSeries are the devices of BenchmarkOpenWeek: the sim board's six
// series, each as if it changed once a second for a week.
var weekSeries = [][2]string{{"sim.led", ""}, {"sim.button", ""}, {"sim.door", ""}, {"sim.heater", ""}, {"sim.temperature", "temperature"}, {"sim.fan", ""}}

// writeWeek writes a week of weekSeries at 1 Hz into dir, in the batches
// of 30 s the gateway writes, and the buckets 60 at a time.
func writeWeek(b *testing.B, dir string, end time.Time) {
	start := end.Add(-7 * 24 * time.Hour)
	now := start
	st, err := OpenStore(dir, StoreOptions{KeepFull: 7 * 24 * time.Hour, KeepMinutes: 365 * 24 * time.Hour, MaxBytes: 512 << 20, Now: func() time.Time { return now }}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	for flush := range 7 * 24 * 120 {
		now = start.Add(time.Duration(flush) * 30 * time.Second)
		var full, minutes []batch
		for _, s := range weekSeries {
			bt := batch{device: s[0], field: s[1], kind: KindNumber, first: uint64(flush * 30)}
			for i := range 30 {
				bt.samples = append(bt.samples, sample{t: now.Add(time.Duration(i) * time.Second).UnixMilli(), v: float64(i)})
			}
			full = append(full, bt)
			if flush%120 == 119 { // an hour's buckets
				bb := batch{device: s[0], field: s[1], kind: KindNumber, first: uint64(flush/2 - 59)}
				for m := range 60 {
					bb.buckets = append(bb.buckets, bucket{start: now.Add(time.Duration(m-59) * time.Minute).UnixMilli(), n: 60, min: 0, max: 29, sum: 870, last: 29})
				}
				minutes = append(minutes, bb)
			}
		}
		if err := st.Append(full, minutes); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenWeek reads back a week of the six series at 1 Hz (3.6
// million samples, what a start-up after a week reads at most at the
// default settings but for faster devices), as the gateway does at
// start. With $HISTORY_BENCH_DIR set, the week is written there (as a
// state directory's history/) and kept, for a real gateway to start on.
func BenchmarkOpenWeek(b *testing.B) {
	dir := os.Getenv("HISTORY_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	dir = filepath.Join(dir, "history")
	end := time.Now()
	if _, err := os.Stat(dir); err != nil {
		writeWeek(b, dir, end)
	}
	b.ReportMetric(float64(dirBytes(b, dir))/(1<<20), "MiB")
	b.ResetTimer()
	for range b.N {
		h := New(Options{})
		st, err := h.Open(dir, StoreOptions{KeepFull: 7 * 24 * time.Hour, KeepMinutes: 365 * 24 * time.Hour, MaxBytes: 512 << 20, Now: func() time.Time { return end }})
		if err != nil {
			b.Fatal(err)
		}
		st.Close()
		if h.Series() != len(weekSeries) {
			b.Fatalf("%d series read back, want %d", h.Series(), len(weekSeries))
		}
	}
}
