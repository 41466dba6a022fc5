package main

import (
	"math"
	"slices"
	"time"
)

// median returns the middle of xs, or the mean of the two middle values
// for an even count; NaN for none. xs is not changed.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// medianDuration is median for durations; 0 for none.
func medianDuration(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return s[n/2-1] + (s[n/2]-s[n/2-1])/2
}

// percentile returns the p-th percentile (0 to 100) of sorted by the
// nearest-rank method: the smallest sample that at least p % of the
// samples do not exceed. It is always one of the samples, never an
// interpolation; 0 for none.
func percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(n)))
	return sorted[min(max(rank, 1), n)-1]
}

// latencies summarizes a set of samples.
type latencies struct {
	n        int
	p50, p99 time.Duration
}

// summarize sorts ds in place and takes its percentiles.
func summarize(ds []time.Duration) latencies {
	slices.Sort(ds)
	return latencies{n: len(ds), p50: percentile(ds, 50), p99: percentile(ds, 99)}
}
