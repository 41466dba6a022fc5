package history

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// A frame's payload is one batch of one series: its items pushed since
// the flush before, in order, with the index of the first. It names its
// series (device and field) so that each frame reads alone: a lost or
// corrupt frame costs its own items only.
//
//	record   byte     recSamples or recBuckets
//	kind     byte     0 number, 1 boolean
//	device   uvarint length, bytes
//	field    uvarint length, bytes
//	first    uvarint  the index of the first item
//	count    uvarint
//	items    count times:
//	  samples: t (varint, the difference to the item before; the first's
//	           is to 0), v (float64 bits, 8 bytes little endian)
//	  buckets: start (varint, likewise), n, changes (uvarint), min, max,
//	           sum, last (float64 bits)
const (
	recSamples byte = 'S'
	recBuckets byte = 'B'
)

// batch is one series' items of one record.
type batch struct {
	device, field string
	kind          Kind
	first         uint64 // index of the first item
	samples       []sample
	buckets       []bucket
}

// t0 and t1 are the time span of the batch's items (a bucket's start).
func (b *batch) span() (t0, t1 int64) {
	t0, t1 = math.MaxInt64, math.MinInt64
	for _, s := range b.samples {
		t0, t1 = min(t0, s.t), max(t1, s.t)
	}
	for _, x := range b.buckets {
		t0, t1 = min(t0, x.start), max(t1, x.start)
	}
	return t0, t1
}

func (b *batch) count() int { return len(b.samples) + len(b.buckets) }

// appendRecord appends b's payload to buf.
func appendRecord(buf []byte, b *batch) []byte {
	rec := recSamples
	if b.buckets != nil {
		rec = recBuckets
	}
	kind := byte(0)
	if b.kind == KindBoolean {
		kind = 1
	}
	buf = append(buf, rec, kind)
	buf = binary.AppendUvarint(buf, uint64(len(b.device)))
	buf = append(buf, b.device...)
	buf = binary.AppendUvarint(buf, uint64(len(b.field)))
	buf = append(buf, b.field...)
	buf = binary.AppendUvarint(buf, b.first)
	buf = binary.AppendUvarint(buf, uint64(b.count()))
	f64 := func(buf []byte, v float64) []byte { return binary.LittleEndian.AppendUint64(buf, math.Float64bits(v)) }
	prev := int64(0)
	for _, s := range b.samples {
		buf = binary.AppendVarint(buf, s.t-prev)
		buf = f64(buf, s.v)
		prev = s.t
	}
	for _, x := range b.buckets {
		buf = binary.AppendVarint(buf, x.start-prev)
		buf = binary.AppendUvarint(buf, uint64(x.n))
		buf = binary.AppendUvarint(buf, uint64(x.changes))
		for _, v := range [...]float64{x.min, x.max, x.sum, x.last} {
			buf = f64(buf, v)
		}
		prev = x.start
	}
	return buf
}

var errRecord = errors.New("malformed history record")

// decoder reads a payload, remembering its first error.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", errRecord, what)
	}
}

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.fail("short")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad uvarint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) f64() float64 {
	if len(d.b) < 8 {
		d.fail("short float")
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	return v
}

func (d *decoder) str() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail("short string")
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

// header is what a record says of its series, read without its items.
type header struct {
	rec           byte
	kind          Kind
	device, field string
	first, count  uint64
}

func (d *decoder) header() header {
	var h header
	h.rec = d.byte()
	if h.rec != recSamples && h.rec != recBuckets {
		d.fail(fmt.Sprintf("record type %q", h.rec))
	}
	switch d.byte() {
	case 0:
		h.kind = KindNumber
	case 1:
		h.kind = KindBoolean
	default:
		d.fail("series kind")
	}
	h.device, h.field = d.str(), d.str()
	h.first, h.count = d.uvarint(), d.uvarint()
	// Each item takes 9 bytes at least: a count past that is corrupt,
	// and must not size an allocation.
	if h.count > uint64(len(d.b))/9 {
		d.fail("count past the record's end")
	}
	return h
}

// decodeRecord reads a whole payload into a batch.
func decodeRecord(payload []byte) (batch, error) {
	d := decoder{b: payload}
	h := d.header()
	if d.err != nil {
		return batch{}, d.err
	}
	b := batch{device: h.device, field: h.field, kind: h.kind, first: h.first}
	prev := int64(0)
	if h.rec == recSamples {
		b.samples = make([]sample, h.count)
		for i := range b.samples {
			prev += d.varint()
			b.samples[i] = sample{t: prev, v: d.f64()}
		}
	} else {
		b.buckets = make([]bucket, h.count)
		for i := range b.buckets {
			prev += d.varint()
			x := bucket{start: prev, n: uint32(d.uvarint()), changes: uint32(d.uvarint())}
			x.min, x.max, x.sum, x.last = d.f64(), d.f64(), d.f64(), d.f64()
			b.buckets[i] = x
		}
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail(fmt.Sprintf("%d bytes after the items", len(d.b)))
	}
	return b, d.err
}
