package audit

import (
	"context"
	"testing"
)

// BenchmarkAppend appends one entry at a time: one write and one sync per
// entry.
func BenchmarkAppend(b *testing.B) {
	l := openLog(b, b.TempDir(), Options{})
	e := write("bench")
	ctx := context.Background()
	for b.Loop() {
		if _, err := l.Append(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
	report(b, l)
}

// BenchmarkAppendParallel appends from many goroutines at once: their
// entries share writes and syncs (group commit).
func BenchmarkAppendParallel(b *testing.B) {
	l := openLog(b, b.TempDir(), Options{})
	e := write("bench")
	ctx := context.Background()
	b.SetParallelism(32)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := l.Append(ctx, e); err != nil {
				b.Error(err)
				return
			}
		}
	})
	report(b, l)
}

func report(b *testing.B, l *Log) {
	st := l.Stats()
	b.ReportMetric(float64(st.Entries)/b.Elapsed().Seconds(), "entries/s")
	b.ReportMetric(float64(st.Entries)/float64(max(st.Syncs, 1)), "entries/sync")
}
