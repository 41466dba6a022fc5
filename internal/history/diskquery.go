package history

import (
	"fmt"
	"math"
)

// fromDisk reads the items of q's series on disk whose index is in
// [q.From, to) and whose time is in q's window, at most q.Limit, and
// fills in p's Dropped, Next and More as far as the disk goes: More and
// Next after the last item when the page is full, else Next is to, where
// memory takes over. A bucket written twice (the newest one at a clean
// stop, then again once its minute was over) counts as its later copy.
func fromDisk[T any](st *Store, q Query, kind Kind, to uint64, p *Page, items func(*batch) []T, at func(*T) int64) ([]T, error) {
	minute := q.Resolution == Minute
	r := diskRange{device: q.Device, field: q.Field, kind: kind, minute: minute, from: q.From, to: to, since: math.MinInt64, until: math.MaxInt64}
	if q.Since != nil {
		r.since = *q.Since
	}
	if q.Until != nil {
		r.until = *q.Until
	}
	if oldest, ok := st.Oldest(q.Device, q.Field, minute); ok && q.From < oldest {
		p.Dropped = min(oldest, to) - q.From
	} else if !ok {
		p.Dropped = to - q.From
	}
	var out []T
	var last uint64
	full := false
	err := st.each(r, func(b *batch) bool {
		for i, it := range items(b) {
			idx := b.first + uint64(i)
			t := at(&it)
			switch {
			case idx < r.from || idx >= r.to:
				continue
			case len(out) > 0 && idx == last:
				out[len(out)-1] = it
				continue
			case len(out) > 0 && idx < last, t < r.since || t >= r.until:
				continue
			case len(out) == q.Limit:
				full = true
				return false
			}
			out, last = append(out, it), idx
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("read history of %s from disk: %w", q.Device, err)
	}
	p.Next, p.More = to, false
	if full {
		p.Next, p.More = last+1, true
	}
	return out, nil
}
