package history

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"
)

// persistence is a History's link to its Store: set once by Open, before
// the history is fed.
type persistence struct {
	store   *Store
	flushMu sync.Mutex // one flush at a time
	kick    chan struct{}
	lost    uint64 // samples overwritten in memory before a flush wrote them
	// bucketBatch is how many minutes that are over a series gathers
	// before they are written (all of them at a clean stop). With the
	// samples on disk for longer than that, a crash loses no bucket:
	// Open counts them again from the samples, so a flush need not write
	// a frame of one bucket each time (40 bytes of framing for 38 of
	// bucket, and a write and an fsync more).
	bucketBatch uint64
}

// bucketsPerWrite is bucketBatch when the samples are kept long enough.
const bucketsPerWrite = 60

// Open reads the history on disk in st's directory into h's rings, so
// that the history spans restarts: the newest Samples samples and
// Buckets buckets of each series, their indices continuing where they
// stopped, and the buckets of minutes whose samples were written but
// whose bucket was not (a crash) counted again. It must be called before
// h is fed, and once; h keeps the store, which Flush writes to.
func (h *History) Open(dir string, opt StoreOptions) (*Store, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	loaded := false
	st, err := OpenStore(dir, opt, func(kind int, b batch) {
		if kind == kindFull && !loaded {
			loaded = true
			h.markMinutesLoaded()
		}
		h.load(kind, &b)
	})
	if err != nil {
		return nil, err
	}
	if !loaded {
		h.markMinutesLoaded()
	}
	for _, d := range h.devices {
		for _, s := range d.series {
			s.savedFull = s.full.total
			s.replayAfter = math.MaxInt64
		}
	}
	h.disk = &persistence{store: st, kick: make(chan struct{}, 1), bucketBatch: 1}
	if opt.KeepFull >= 2*bucketsPerWrite*time.Minute {
		h.disk.bucketBatch = bucketsPerWrite
	}
	return st, nil
}

// markMinutesLoaded ends the reading of buckets: a series' newest bucket
// from disk is written again once its minute is over (it may have been
// a clean stop's partial one), and samples of later minutes are counted.
func (h *History) markMinutesLoaded() {
	for _, d := range h.devices {
		for _, s := range d.series {
			s.savedMinutes = s.minutes.oldest()
			s.replayAfter = math.MinInt64
			if b := s.minutes.newest(); b != nil {
				s.savedMinutes, s.replayAfter = s.minutes.total-1, b.start
			}
		}
	}
}

// load puts a record read from disk into its series' ring.
func (h *History) load(kind int, b *batch) {
	d := h.devices[b.device]
	if d == nil {
		d = &deviceSeries{series: map[string]*series{}}
		h.devices[b.device] = d
	}
	if s := d.series[b.field]; s != nil && s.kind != b.kind {
		s.rekind(b.kind, d, b.field, h.opt) // the newer records' kind wins
	}
	s := h.seriesFor(b.device, d, point{field: b.field, kind: b.kind})
	if s == nil {
		return
	}
	s.fromDisk = true
	if kind == kindMinute {
		for i, x := range b.buckets {
			s.minutes.put(b.first+uint64(i), x)
		}
		return
	}
	if s.replayAfter == 0 { // a series with samples only: no bucket read
		s.replayAfter = math.MinInt64
	}
	for i, x := range b.samples {
		prev := s.full.newest()
		s.full.put(b.first+uint64(i), x)
		if minuteOf(x.t) > s.replayAfter {
			if prev != nil {
				s.count(x.t, x.v, prev.v, true)
			} else {
				s.count(x.t, x.v, 0, false)
			}
		}
	}
}

// Flush writes what h's series took since the flush before: samples, and
// the buckets of minutes that are over (all of them when final, at a
// clean stop). The items are copied under h's lock and written after it.
func (h *History) Flush(final bool) error {
	p := h.disk
	if p == nil {
		return nil
	}
	p.flushMu.Lock()
	defer p.flushMu.Unlock()
	full, minutes, marks := h.pending(final)
	if err := p.store.Append(full, minutes); err != nil {
		return fmt.Errorf("write history: %w", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for s, m := range marks {
		s.savedFull, s.savedMinutes = m[0], m[1]
	}
	return nil
}

// pending copies the items of each series not written yet, and the
// marks to set once they are.
func (h *History) pending(final bool) (full, minutes []batch, marks map[*series][2]uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	marks = map[*series][2]uint64{}
	for id, d := range h.devices {
		for field, s := range d.series {
			if from := max(s.savedFull, s.full.oldest()); from < s.full.total {
				if s.savedFull < from {
					h.disk.lost += from - s.savedFull
				}
				full = append(full, batch{device: id, field: field, kind: s.kind, first: from, samples: copyRing(&s.full, from, s.full.total)})
			}
			end := s.minutes.total
			if !final && end > s.minutes.oldest() {
				end-- // the newest minute goes on
			}
			from, savedTo := max(s.savedMinutes, s.minutes.oldest()), s.savedMinutes
			if from < end && (final || end-from >= h.disk.bucketBatch) {
				minutes = append(minutes, batch{device: id, field: field, kind: s.kind, first: from, buckets: copyRing(&s.minutes, from, end)})
				savedTo = end
			}
			marks[s] = [2]uint64{s.full.total, savedTo}
		}
	}
	return full, minutes, marks
}

func copyRing[T any](r *ring[T], from, to uint64) []T {
	out := make([]T, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, *r.at(i))
	}
	return out
}

// Run flushes h every interval, and sooner when a series has half its
// ring unwritten (a chatty device must not overwrite values before they
// are written), until ctx is done; then once more, final. Errors are
// logged: the next flush writes the same items again.
func (h *History) Run(ctx context.Context, interval time.Duration) {
	p := h.disk
	if p == nil {
		return
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			if err := h.Flush(true); err != nil {
				h.opt.Logger.Warn("history not written at stop: the values since the last flush are lost", "err", err)
			}
			return
		case <-tick.C:
		case <-p.kick:
		}
		if err := h.Flush(false); err != nil {
			h.opt.Logger.Warn("history not written; trying again at the next flush", "err", err)
		}
	}
}

// kickIfHalfFull asks Run for a flush when half of s's samples are not
// written yet. It runs under h's lock, and does not wait.
func (h *History) kickIfHalfFull(s *series) {
	if h.disk == nil || s.full.total-s.savedFull < uint64(len(s.full.buf)/2) {
		return
	}
	select {
	case h.disk.kick <- struct{}{}:
	default:
	}
}
