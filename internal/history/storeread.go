package history

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// diskRange is what a query reads of one series on disk: items whose
// index is in [from, to) and whose time is in [since, until).
type diskRange struct {
	device, field string
	kind          Kind // a series' items of another kind (before a restart) are not its
	minute        bool
	from, to      uint64
	since, until  int64
}

// Oldest returns the index of the oldest item of the series on disk at
// the resolution, and whether there is one.
func (s *Store) Oldest(device, field string, minute bool) (uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := seriesKey(device, field)
	for _, seg := range s.kinds[s.kindOf(minute)].list {
		if sp := seg.series[key]; sp != nil {
			return sp.first, true
		}
	}
	return 0, false
}

func (s *Store) kindOf(minute bool) int {
	if minute {
		return kindMinute
	}
	return kindFull
}

// each calls fn with the batches of r's series, oldest first, from the
// segments that may hold items in r, until fn returns false. A segment
// is read up to the frames Append had written when each was called, and
// one removed meanwhile is skipped.
func (s *Store) each(r diskRange, fn func(b *batch) bool) error {
	type part struct {
		path string
		size int64
	}
	key := seriesKey(r.device, r.field)
	var parts []part
	s.mu.Lock()
	for _, seg := range s.kinds[s.kindOf(r.minute)].list {
		sp := seg.series[key]
		if sp == nil || sp.last < r.from || sp.first >= r.to || sp.t1 < r.since || sp.t0 >= r.until {
			continue
		}
		parts = append(parts, part{seg.path, seg.size})
	}
	s.mu.Unlock()
	errStop := errors.New("stop")
	for _, p := range parts {
		f, err := os.Open(p.path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("read history: %w", err)
		}
		_, err = readFrames(io.LimitReader(f, p.size), func(payload []byte) error {
			d := decoder{b: payload}
			if h := d.header(); d.err != nil || h.device != r.device || h.field != r.field || h.kind != r.kind {
				return nil
			}
			b, err := decodeRecord(payload)
			if err != nil || fn(&b) {
				return nil
			}
			return errStop
		})
		f.Close()
		if errors.Is(err, errStop) {
			return nil
		}
		if err != nil && !isTorn(err) {
			return fmt.Errorf("read history %s: %w", p.path, err)
		}
	}
	return nil
}
