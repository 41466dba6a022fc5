// Package history keeps a bounded history of every numeric and boolean
// device, so that an operator can look at what a sensor did in the last
// hour, day or week (the console's plots, `gateway history`) without a
// database on a Raspberry Pi's SD card. It is fed by the registry's
// value events and served as the Hub extension gateway/history
// (serve.go).
//
// In memory (history.go, series.go, ring.go): memory is fixed per
// series: a series is allocated whole with its first value, and the
// number of series is capped, so that a chatty device or a bad adapter
// cannot grow the gateway.
//
// On disk (store.go, frame.go, record.go; persist.go links the two):
// framed, CRC'd append-only segments in the state directory's history/,
// written in batches a few times a minute, read back into memory at
// start, and read again for spans memory no longer holds
// (diskquery.go). A torn tail after a power cut is cut at start and what
// was written before it is kept.
package history

import (
	"log/slog"
	"sort"
	"sync"
	"unsafe"

	"github.com/openhal/gateway/device"
)

// Defaults of Options. The rings' sizes are whole pages of the Go
// runtime's allocator (8 KiB: 64 KiB of samples, 72 KiB of buckets), so
// that a series costs exactly what they hold, 136 KiB: a larger ring is
// rounded up to whole pages anyway.
const (
	DefaultSamples   = 4096 // 68 minutes of a sensor at 1 Hz
	DefaultBuckets   = 1536 // 25.6 hours of one-minute buckets
	DefaultMaxSeries = 64   // 8.5 MiB at the default sizes
	DefaultMaxFields = 8    // series of one device's object value
)

// maxFieldLen bounds a field name that gets a series: an object member
// with a longer name is no quantity a person plots, and the names are
// listed in every answer.
const maxFieldLen = 32

// Options size a History; a zero field takes its default.
type Options struct {
	Samples int // full-resolution samples kept per series
	Buckets int // one-minute buckets kept per series
	// MaxSeries bounds the series kept in all (values of more are not
	// kept), and so the history's memory; negative keeps none.
	MaxSeries int
	MaxFields int // series per device (fields of an object value)
	Logger    *slog.Logger
}

func (o Options) withDefaults() Options {
	fill := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	fill(&o.Samples, DefaultSamples)
	fill(&o.Buckets, DefaultBuckets)
	if o.MaxSeries == 0 {
		o.MaxSeries = DefaultMaxSeries
	}
	o.MaxSeries = max(o.MaxSeries, 0)
	fill(&o.MaxFields, DefaultMaxFields)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// SeriesBytes is what one series' two rings hold at the given sizes (16
// bytes a sample, 48 a bucket): its memory, but for about a hundred bytes
// of header and map entry.
func SeriesBytes(samples, buckets int) int {
	return samples*int(unsafe.Sizeof(sample{})) + buckets*int(unsafe.Sizeof(bucket{}))
}

// History is the gateway's memory of device values. Its methods are safe
// for concurrent use; Record returns at once (it runs under the
// registry's lock).
type History struct {
	opt Options

	mu      sync.Mutex
	devices map[string]*deviceSeries
	count   int          // series in all devices
	full    bool         // MaxSeries was reached (logged once)
	disk    *persistence // nil: kept in memory only (persist.go)
}

// deviceSeries are one device's series by field ("" for a plain value).
type deviceSeries struct {
	series map[string]*series
	// refused counts fields left out past MaxFields or MaxSeries, or whose
	// value changed kind (a number where a boolean was).
	refused uint64
}

// New returns an empty History.
func New(opt Options) *History {
	return &History{opt: opt.withDefaults(), devices: map[string]*deviceSeries{}}
}

// Subscribe feeds h with reg's value events until the returned function
// is called.
func (h *History) Subscribe(reg *device.Registry) (cancel func()) {
	return reg.Subscribe(h.Record)
}

// Record keeps e's value when it is one: a number, a boolean, or an
// object with numeric or boolean members (one series each). Other events
// and values (strings, a serial line's) are ignored.
func (h *History) Record(e device.Event) {
	if e.Kind != device.EventValue {
		return
	}
	var room [DefaultMaxFields]point // on the stack, for the usual value
	points := pointsOf(room[:0], e.Value)
	if len(points) == 0 {
		return
	}
	t := e.TS.UnixMilli()
	h.mu.Lock()
	defer h.mu.Unlock()
	d := h.devices[e.Device]
	if d == nil {
		d = &deviceSeries{series: map[string]*series{}}
		h.devices[e.Device] = d
	}
	for _, p := range points {
		if s := h.seriesFor(e.Device, d, p); s != nil {
			s.add(t, p.v)
			h.kickIfHalfFull(s)
		}
	}
}

// seriesFor returns the series of p's field, made if there is room; nil
// when p is not kept.
func (h *History) seriesFor(id string, d *deviceSeries, p point) *series {
	s := d.series[p.field]
	switch {
	case s != nil && s.kind == p.kind:
		return s
	case s != nil && s.fromDisk:
		// The device's value changed kind across a restart (its
		// configuration did): the new kind's series follows on.
		return s.rekind(p.kind, d, p.field, h.opt)
	case s != nil, len(p.field) > maxFieldLen, len(d.series) >= h.opt.MaxFields:
		d.refused++
		return nil
	case h.count >= h.opt.MaxSeries:
		d.refused++
		if !h.full && h.opt.MaxSeries > 0 {
			h.full = true
			h.opt.Logger.Warn("history full: values of further series are not kept", "max_series", h.opt.MaxSeries, "device", id, "field", p.field)
		}
		return nil
	}
	s = newSeries(p.kind, h.opt.Samples, h.opt.Buckets)
	d.series[p.field] = s
	h.count++
	return s
}

// Fields lists the fields of id that have a series, sorted ("" is a plain
// value's); false when id has none.
func (h *History) Fields(id string) ([]string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.fields(id)
}

func (h *History) fields(id string) ([]string, bool) {
	d := h.devices[id]
	if d == nil {
		return nil, false
	}
	fields := make([]string, 0, len(d.series))
	for f := range d.series {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	return fields, true
}

// Series counts the series kept, in all devices.
func (h *History) Series() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.count
}
