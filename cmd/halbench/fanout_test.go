package main

import "testing"

func TestCountGaps(t *testing.T) {
	written := []uint64{3, 5, 6, 9, 10} // other devices' events took the seqs between
	for _, tc := range []struct {
		name    string
		written []uint64
		got     []uint64
		want    gapStats
	}{
		{"all", written, []uint64{3, 5, 6, 9, 10}, gapStats{}},
		{"none written", nil, nil, gapStats{}},
		{"none received", written, nil, gapStats{gaps: 1, missed: 5}},
		{"first missed", written, []uint64{5, 6, 9, 10}, gapStats{gaps: 1, missed: 1}},
		{"last missed", written, []uint64{3, 5, 6, 9}, gapStats{gaps: 1, missed: 1}},
		{"coalesced run", written, []uint64{3, 9, 10}, gapStats{gaps: 1, missed: 2}},
		{"two gaps", written, []uint64{3, 6, 10}, gapStats{gaps: 2, missed: 2}},
		{"seq jumps over other devices' events", []uint64{1, 100, 1000}, []uint64{1, 100, 1000}, gapStats{}},
		{"a value no write made", written, []uint64{3, 4, 5, 6, 9, 10}, gapStats{foreign: 1}},
		{"repeated", written, []uint64{3, 5, 5, 6, 9, 10}, gapStats{foreign: 1}},
		{"out of order", written, []uint64{3, 6, 5, 9, 10}, gapStats{gaps: 1, missed: 1, foreign: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := countGaps(tc.written, tc.got); got != tc.want {
				t.Errorf("countGaps(%v, %v) = %+v, want %+v", tc.written, tc.got, got, tc.want)
			}
		})
	}
}

func TestGapStatsAdd(t *testing.T) {
	got := gapStats{gaps: 1, missed: 2, foreign: 3}.add(gapStats{gaps: 10, missed: 20, foreign: 30})
	if want := (gapStats{gaps: 11, missed: 22, foreign: 33}); got != want {
		t.Errorf("add = %+v, want %+v", got, want)
	}
}
