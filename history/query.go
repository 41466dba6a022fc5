package history

import (
	"fmt"
	"strings"
)

// Resolution is which ring a query reads.
type Resolution string

const (
	Full   Resolution = "full"   // each value, the last Samples of them
	Minute Resolution = "minute" // one bucket a minute, the last Buckets of them
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
	// Limit is the most items the page holds; 0 for no limit but Room.
	Limit int
	// Room, when not 0, bounds the bytes of the page's JSON: a page holds
	// as many items as surely fit (fit.go).
	Room int
}

// Page is one answer: the series' items, each as columns, as a plot
// takes them (uPlot's data layout), so that numbers are not repeated
// under member names.
type Page struct {
	Device     string     `json:"device"`
	Field      string     `json:"field"`
	Fields     []string   `json:"fields"`
	Kind       Kind       `json:"kind,omitempty"`
	Resolution Resolution `json:"resolution"`
	// Samples (full) or Buckets (minute) hold the items, oldest first.
	Samples *Samples `json:"samples,omitempty"`
	Buckets any      `json:"buckets,omitempty"`
	// Dropped counts the items between From and the oldest kept, which
	// newer ones overwrote before this page was asked for.
	Dropped uint64 `json:"dropped,omitempty"`
	// Next is the From of the following page; More says whether items
	// after it are kept already (else it is where new ones will come).
	Next uint64 `json:"next"`
	More bool   `json:"more"`
}

// Samples are full-resolution values: T in Unix milliseconds, V numbers
// or booleans.
type Samples struct {
	T []int64 `json:"t"`
	V []any   `json:"v"`
}

// NumberBuckets are a number's minutes: the count, smallest, largest and
// mean value of each.
type NumberBuckets struct {
	T    []int64   `json:"t"`
	N    []uint32  `json:"n"`
	Min  []float64 `json:"min"`
	Max  []float64 `json:"max"`
	Mean []float64 `json:"mean"`
}

// BooleanBuckets are a boolean's minutes: the count, the share of true
// values, the last value and how many times it changed.
type BooleanBuckets struct {
	T       []int64   `json:"t"`
	N       []uint32  `json:"n"`
	Mean    []float64 `json:"mean"`
	Last    []bool    `json:"last"`
	Changes []uint32  `json:"changes"`
}

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
// field; one with several answers a FieldError naming them.
func (h *History) Query(q Query) (Page, error) {
	if q.Resolution == "" {
		q.Resolution = Full
	}
	p := Page{Device: q.Device, Field: q.Field, Resolution: q.Resolution, Fields: []string{}}
	h.mu.Lock()
	defer h.mu.Unlock()
	fields, _ := h.fields(q.Device)
	if len(fields) == 0 && q.Field == "" {
		p.Samples, p.Buckets = emptyItems(q.Resolution)
		return p, nil
	}
	p.Fields = fields
	if q.Field == "" && len(fields) == 1 {
		q.Field, p.Field = fields[0], fields[0]
	}
	s := h.devices[q.Device].seriesOf(q.Field)
	if s == nil {
		return Page{}, &FieldError{Device: q.Device, Field: q.Field, Fields: fields}
	}
	p.Kind = s.kind
	limit, err := fit(q, fields)
	if err != nil {
		return Page{}, err
	}
	if q.Limit = limit; q.Limit == 0 {
		q.Limit = int(^uint(0) >> 1)
	}
	if q.Resolution == Minute {
		p.Buckets = s.bucketPage(q, &p)
	} else {
		p.Samples = s.samplePage(q, &p)
	}
	return p, nil
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

// scan calls keep with the index of each item of r from q.From on whose
// time (at) is in q's window, until keep has taken q.Limit, and fills in
// p's Dropped, Next and More.
func scan[T any](r *ring[T], q Query, at func(*T) int64, keep func(*T), p *Page) {
	i := max(q.From, r.oldest())
	if q.From < r.oldest() {
		p.Dropped = r.oldest() - q.From
	}
	for taken := 0; i < r.total && taken < q.Limit; i++ {
		it := r.at(i)
		t := at(it)
		if (q.Since != nil && t < *q.Since) || (q.Until != nil && t >= *q.Until) {
			continue
		}
		keep(it)
		taken++
	}
	p.Next, p.More = i, i < r.total
}

func (s *series) samplePage(q Query, p *Page) *Samples {
	out := &Samples{T: []int64{}, V: []any{}}
	scan(&s.full, q, func(x *sample) int64 { return x.t }, func(x *sample) {
		out.T = append(out.T, x.t)
		if s.kind == KindBoolean {
			out.V = append(out.V, x.v != 0)
		} else {
			out.V = append(out.V, x.v)
		}
	}, p)
	return out
}

func (s *series) bucketPage(q Query, p *Page) any {
	at := func(b *bucket) int64 { return b.start }
	if s.kind == KindBoolean {
		out := &BooleanBuckets{T: []int64{}, N: []uint32{}, Mean: []float64{}, Last: []bool{}, Changes: []uint32{}}
		scan(&s.minutes, q, at, func(b *bucket) {
			out.T, out.N = append(out.T, b.start), append(out.N, b.n)
			out.Mean = append(out.Mean, b.sum/float64(b.n))
			out.Last, out.Changes = append(out.Last, b.last != 0), append(out.Changes, b.changes)
		}, p)
		return out
	}
	out := &NumberBuckets{T: []int64{}, N: []uint32{}, Min: []float64{}, Max: []float64{}, Mean: []float64{}}
	scan(&s.minutes, q, at, func(b *bucket) {
		out.T, out.N = append(out.T, b.start), append(out.N, b.n)
		out.Min, out.Max = append(out.Min, b.min), append(out.Max, b.max)
		out.Mean = append(out.Mean, b.sum/float64(b.n))
	}, p)
	return out
}
