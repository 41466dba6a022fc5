package history

import (
	"fmt"
	"strings"

	"github.com/openhal/gateway/openhal/gatewayext"
)

// Resolution is which ring a query reads.
type Resolution = gatewayext.HistoryResolution

const (
	Full   = gatewayext.HistoryFull   // each value, the last Samples of them
	Minute = gatewayext.HistoryMinute // one bucket a minute, the last Buckets of them
)

// Query asks for one series of one device, a page at a time.
type Query struct {
	Device     string
	Field      string // "" for a plain value, or a device with one series
	Resolution Resolution
	// Since and Until, when set, keep items whose time (a bucket's: its
	// minute's start) is in [Since, Until), in Unix milliseconds.
	Since, Until *int64
	// From is the index to start at: a previous page's Next.
	From uint64
	// FromDisk reads the history on disk for the part of the page
	// before the memory's oldest item; without it (a client that asked
	// for neither a place nor a time), a page starts in memory.
	FromDisk bool
	// Limit is the most items the page holds; 0 for no limit but Room.
	Limit int
	// Room, when not 0, bounds the bytes of the page's JSON: a page holds
	// as many items as surely fit (fit.go).
	Room int
}

// Page is one answer: the series' items, each as columns, as a plot
// takes them (uPlot's data layout), so that numbers are not repeated
// under member names. It is gateway/history's answer, whose types are
// public (gatewayext), as are the columns: Samples at full resolution,
// NumberBuckets or BooleanBuckets by minute.
type (
	Page           = gatewayext.HistoryPage
	Samples        = gatewayext.HistorySamples
	NumberBuckets  = gatewayext.HistoryNumberBuckets
	BooleanBuckets = gatewayext.HistoryBooleanBuckets
)

// Worst-case bytes one item adds to an answer's JSON: each column's
// longest number (-1.7976931348623157e+308, an int64 of 20 characters)
// and its comma. serve.go sizes pages by them.
const (
	sampleJSONBytes = 21 + 25      // t, v
	bucketJSONBytes = 21 + 11 + 75 // t, n, and three numbers
)

// FieldError is a query's field that is not right for the device: absent,
// or needed because the device keeps several series.
type FieldError struct {
	Device string
	Field  string // "" when one was needed
	Fields []string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("device %s keeps several series: params.field must name one of %s", e.Device, strings.Join(e.Fields, ", "))
	}
	return fmt.Sprintf("device %s keeps no series %q; it keeps %s", e.Device, e.Field, quoteAll(e.Fields))
}

func quoteAll(fields []string) string {
	if len(fields) == 0 {
		return "none"
	}
	q := make([]string, len(fields))
	for i, f := range fields {
		q[i] = fmt.Sprintf("%q", f)
	}
	return strings.Join(q, ", ")
}

// Query answers q. A device with no series yet (no value, or values with
// nothing to plot) has an empty page. A device with one series needs no
// field; one with several answers a FieldError naming them. The items
// are copied under the lock and turned into columns after it, so that
// Record, which the registry calls, waits for a copy at most.
func (h *History) Query(q Query) (Page, error) {
	if q.Resolution == "" {
		q.Resolution = Full
	}
	p := Page{Device: q.Device, Field: q.Field, Resolution: q.Resolution, Fields: []string{}}
	samples, buckets, err := h.collect(q, &p)
	if err != nil {
		return Page{}, err
	}
	switch {
	case p.Kind == "":
		p.Samples, p.Buckets = emptyItems(q.Resolution)
	case q.Resolution == Minute:
		p.Buckets = bucketColumns(p.Kind, buckets)
	default:
		p.Samples = sampleColumns(p.Kind, samples)
	}
	return p, nil
}

// collect fills in p's fields, kind and position, and copies the items
// of q's page: samples or buckets, by q.Resolution. A page that starts
// before the memory's oldest item, of a query that asked for a place
// (From or Since: FromDisk), reads the disk up to that item, without h's
// lock, and then memory.
func (h *History) collect(q Query, p *Page) ([]sample, []bucket, error) {
	h.mu.Lock()
	s, limit, err := h.resolve(&q, p)
	if s == nil || err != nil {
		h.mu.Unlock()
		return nil, nil, err
	}
	q.Limit = limit
	minute := q.Resolution == Minute
	memOldest := s.full.oldest()
	if minute {
		memOldest = s.minutes.oldest()
	}
	disk := h.disk
	h.mu.Unlock()
	var dSamples []sample
	var dBuckets []bucket
	if disk != nil && q.FromDisk && q.From < memOldest {
		var err error
		if minute {
			dBuckets, err = fromDisk(disk.store, q, s.kind, memOldest, p, func(b *batch) []bucket { return b.buckets }, func(x *bucket) int64 { return x.start })
		} else {
			dSamples, err = fromDisk(disk.store, q, s.kind, memOldest, p, func(b *batch) []sample { return b.samples }, func(x *sample) int64 { return x.t })
		}
		if err != nil {
			return nil, nil, err
		}
		if p.More { // the page is full
			return dSamples, dBuckets, nil
		}
		q.From, q.Limit = p.Next, q.Limit-len(dSamples)-len(dBuckets)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	dropped := p.Dropped
	if minute {
		out := append(dBuckets, scan(&s.minutes, q, func(b *bucket) int64 { return b.start }, p)...)
		p.Dropped = max(dropped, p.Dropped)
		return nil, out, nil
	}
	out := append(dSamples, scan(&s.full, q, func(x *sample) int64 { return x.t }, p)...)
	p.Dropped = max(dropped, p.Dropped)
	return out, nil, nil
}

// resolve finds q's series, fills in p's fields, field and kind, and
// returns the most items the page may hold; a nil series when the device
// keeps none. It runs under h's lock.
func (h *History) resolve(q *Query, p *Page) (*series, int, error) {
	fields, _ := h.fields(q.Device)
	if len(fields) == 0 && q.Field == "" {
		return nil, 0, nil
	}
	p.Fields = fields
	if q.Field == "" && len(fields) == 1 {
		q.Field, p.Field = fields[0], fields[0]
	}
	s := h.devices[q.Device].seriesOf(q.Field)
	if s == nil {
		return nil, 0, &FieldError{Device: q.Device, Field: q.Field, Fields: fields}
	}
	p.Kind = s.kind
	limit, err := fit(*q, fields)
	if err != nil {
		return nil, 0, err
	}
	if limit == 0 {
		limit = int(^uint(0) >> 1)
	}
	return s, limit, nil
}

func (d *deviceSeries) seriesOf(field string) *series {
	if d == nil {
		return nil
	}
	return d.series[field]
}

func emptyItems(r Resolution) (*Samples, any) {
	if r == Minute {
		return nil, &NumberBuckets{T: []int64{}, N: []uint32{}, Min: []float64{}, Max: []float64{}, Mean: []float64{}}
	}
	return &Samples{T: []int64{}, V: []any{}}, nil
}

// scan copies the items of r from q.From on whose time (at) is in q's
// window, at most q.Limit, and fills in p's Dropped, Next and More.
func scan[T any](r *ring[T], q Query, at func(*T) int64, p *Page) []T {
	var out []T
	i := max(q.From, r.oldest())
	if q.From < r.oldest() {
		p.Dropped = r.oldest() - q.From
	}
	for ; i < r.total && len(out) < q.Limit; i++ {
		it := r.at(i)
		if t := at(it); (q.Since != nil && t < *q.Since) || (q.Until != nil && t >= *q.Until) {
			continue
		}
		out = append(out, *it)
	}
	p.Next, p.More = i, i < r.total
	return out
}

func sampleColumns(kind Kind, items []sample) *Samples {
	out := &Samples{T: make([]int64, len(items)), V: make([]any, len(items))}
	for i, x := range items {
		out.T[i] = x.t
		if kind == KindBoolean {
			out.V[i] = x.v != 0
		} else {
			out.V[i] = x.v
		}
	}
	return out
}

func bucketColumns(kind Kind, items []bucket) any {
	n := len(items)
	if kind == KindBoolean {
		out := &BooleanBuckets{T: make([]int64, n), N: make([]uint32, n), Mean: make([]float64, n), Last: make([]bool, n), Changes: make([]uint32, n)}
		for i, b := range items {
			out.T[i], out.N[i], out.Mean[i] = b.start, b.n, b.sum/float64(b.n)
			out.Last[i], out.Changes[i] = b.last != 0, b.changes
		}
		return out
	}
	out := &NumberBuckets{T: make([]int64, n), N: make([]uint32, n), Min: make([]float64, n), Max: make([]float64, n), Mean: make([]float64, n)}
	for i, b := range items {
		out.T[i], out.N[i], out.Mean[i] = b.start, b.n, b.sum/float64(b.n)
		out.Min[i], out.Max[i] = b.min, b.max
	}
	return out
}
