package history

import (
	"math"

	"github.com/openhal/gateway/openhal/gatewayext"
)

// Kind is what a series holds.
type Kind = gatewayext.HistoryKind

const (
	KindNumber  = gatewayext.HistoryNumber
	KindBoolean = gatewayext.HistoryBoolean
)

// bucketMs is the width of a decimated bucket: one minute.
const bucketMs = 60_000

// sample is one value at full resolution: 16 bytes.
type sample struct {
	t int64 // the value's ts, Unix milliseconds
	v float64
}

// bucket sums up one minute of values: 48 bytes. For a boolean, v is 0
// or 1, so sum counts the true values; changes counts the values that
// differed from the one before (the first value of a series is none).
type bucket struct {
	start   int64 // the minute's first millisecond
	n       uint32
	changes uint32
	min     float64
	max     float64
	sum     float64
	last    float64
}

// series is one quantity of one device: the last samples at full
// resolution and the last buckets, each in a ring allocated with the
// series, so that its memory is fixed (SeriesBytes).
type series struct {
	kind    Kind
	full    ring[sample]
	minutes ring[bucket]
	// savedFull and savedMinutes are the indices of the first sample and
	// the first bucket not yet written to disk (persist.go); the newest
	// bucket is written once its minute is over, or at a clean stop.
	savedFull, savedMinutes uint64
	// replayAfter, while the disk is read at start, is the newest minute
	// read back: samples of later minutes, whose buckets a crash lost,
	// are counted into buckets again.
	replayAfter int64
	// fromDisk is a series read back at start that has no value since:
	// a value of another kind replaces it (rekind).
	fromDisk bool
}

// rekind replaces s, in d, by an empty series of kind whose indices
// follow s's, so that the disk's items of either never share an index
// (a page reads only its kind's).
func (s *series) rekind(kind Kind, d *deviceSeries, field string, opt Options) *series {
	ns := newSeries(kind, opt.Samples, opt.Buckets)
	ns.full.restart(s.full.total)
	ns.minutes.restart(s.minutes.total)
	ns.savedFull, ns.savedMinutes = s.full.total, s.minutes.total
	ns.replayAfter = s.replayAfter
	d.series[field] = ns
	return ns
}

func newSeries(kind Kind, samples, buckets int) *series {
	return &series{kind: kind, full: newRing[sample](samples), minutes: newRing[bucket](buckets)}
}

// add records v at t (Unix ms). A value whose minute is before the
// newest bucket's (a device's clock going back) counts in the newest
// bucket, so that buckets stay in order.
func (s *series) add(t int64, v float64) {
	s.fromDisk = false
	prev, had := 0.0, false
	if last := s.full.newest(); last != nil {
		prev, had = last.v, true
	}
	s.full.push(sample{t: t, v: v})
	s.count(t, v, prev, had)
}

// minuteOf is the start of t's minute.
func minuteOf(t int64) int64 { return t - ((t%bucketMs)+bucketMs)%bucketMs }

// count counts v at t into the buckets; prev is the value before (had:
// there was one).
func (s *series) count(t int64, v, prev float64, had bool) {
	start := minuteOf(t)
	b := s.minutes.newest()
	if b == nil || start > b.start {
		s.minutes.push(bucket{start: start, min: math.Inf(1), max: math.Inf(-1)})
		b = s.minutes.newest()
	}
	b.n++
	b.min, b.max = min(b.min, v), max(b.max, v)
	b.sum += v
	b.last = v
	if had && prev != v {
		b.changes++
	}
}
