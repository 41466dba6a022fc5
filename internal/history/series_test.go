package history

import (
	"math"
	"testing"
)

// min1 is a bucket's width, a minute in milliseconds.
const min1 = bucketMs

func TestSeriesBuckets(t *testing.T) {
	t.Parallel()
	type add struct {
		t int64
		v float64
	}
	for _, tc := range []struct {
		name string
		kind Kind
		adds []add
		want []bucket
	}{
		{"one minute", KindNumber, []add{{0, 2}, {1000, 4}, {59_999, 3}},
			[]bucket{{start: 0, n: 3, changes: 2, min: 2, max: 4, sum: 9, last: 3}}},
		{"two minutes", KindNumber, []add{{59_999, 1}, {min1, 5}, {min1 + 1, 5}},
			[]bucket{{start: 0, n: 1, min: 1, max: 1, sum: 1, last: 1}, {start: min1, n: 2, changes: 1, min: 5, max: 5, sum: 10, last: 5}}},
		{"a gap keeps no empty bucket", KindNumber, []add{{0, 1}, {10 * min1, 2}},
			[]bucket{{start: 0, n: 1, min: 1, max: 1, sum: 1, last: 1}, {start: 10 * min1, n: 1, changes: 1, min: 2, max: 2, sum: 2, last: 2}}},
		{"a clock going back counts in the newest bucket", KindNumber, []add{{min1, 1}, {5, 7}},
			[]bucket{{start: min1, n: 2, changes: 1, min: 1, max: 7, sum: 8, last: 7}}},
		{"before 1970", KindNumber, []add{{-1, 1}},
			[]bucket{{start: -min1, n: 1, min: 1, max: 1, sum: 1, last: 1}}},
		{"boolean: changes and last", KindBoolean, []add{{0, 0}, {1, 1}, {2, 1}, {3, 0}, {min1, 0}},
			[]bucket{{start: 0, n: 4, changes: 2, min: 0, max: 1, sum: 2, last: 0}, {start: min1, n: 1, min: 0, max: 0, sum: 0, last: 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSeries(tc.kind, 4, 4)
			for _, a := range tc.adds {
				s.add(a.t, a.v)
			}
			var got []bucket
			for i := s.minutes.oldest(); i < s.minutes.total; i++ {
				got = append(got, *s.minutes.at(i))
			}
			if len(got) != len(tc.want) {
				t.Fatalf("buckets %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("bucket %d = %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// The full ring keeps the last Samples values, the minute ring the last
// Buckets minutes: neither grows past what was allocated first.
func TestSeriesBounded(t *testing.T) {
	t.Parallel()
	s := newSeries(KindNumber, 100, 10)
	full, minutes := &s.full.buf[0], &s.minutes.buf[0]
	for i := range int64(10_000) {
		s.add(i*1000, float64(i)) // 1 Hz for 10 000 s: 167 minutes
	}
	if len(s.full.buf) != 100 || len(s.minutes.buf) != 10 || &s.full.buf[0] != full || &s.minutes.buf[0] != minutes {
		t.Fatalf("the rings grew or moved: %d samples, %d buckets", len(s.full.buf), len(s.minutes.buf))
	}
	if first := s.full.at(s.full.oldest()); first.t != 9_900_000 || first.v != 9900 {
		t.Errorf("oldest sample %+v, want the 100th last", first)
	}
	if b := s.minutes.at(s.minutes.oldest()); b.start != 157*min1 || b.n != 60 || b.min != 9420 || b.max != 9479 {
		t.Errorf("oldest bucket %+v, want minute 157 full", b)
	}
	if b := s.minutes.newest(); b.start != 166*min1 || b.n != 40 || math.Abs(b.sum/float64(b.n)-9979.5) > 1e-9 {
		t.Errorf("newest bucket %+v, want minute 166 with 40 values", b)
	}
}
