package history

// ring keeps the last len(buf) items pushed, in a buffer allocated once,
// so that a series' memory is fixed from its first value on. Each item
// has an index, its place among every item ever pushed (0 for the first),
// which a client pages by: it stays valid while items are dropped.
type ring[T any] struct {
	buf   []T
	total uint64 // items ever pushed; the newest has index total-1
	// first is the oldest index that was ever kept: items before it were
	// lost (a history read back from disk, with a gap, starts there).
	first uint64
}

func newRing[T any](n int) ring[T] { return ring[T]{buf: make([]T, n)} }

// push adds v, dropping the oldest item when the ring is full.
func (r *ring[T]) push(v T) {
	r.buf[r.total%uint64(len(r.buf))] = v
	r.total++
}

// oldest is the index of the oldest item kept (total when empty).
func (r *ring[T]) oldest() uint64 {
	if n := uint64(len(r.buf)); r.total > n {
		return max(r.total-n, r.first)
	}
	return r.first
}

// restart empties r, its next item to have index i.
func (r *ring[T]) restart(i uint64) { r.total, r.first = i, i }

// put adds v as the item of index i, read back from disk: the newest
// when i is its index (a bucket written again), the next when i follows
// it, and after a gap when i is further on; an older i is ignored.
func (r *ring[T]) put(i uint64, v T) {
	switch {
	case r.total > r.first && i == r.total-1:
		*r.at(i) = v
	case i == r.total:
		r.push(v)
	case i > r.total:
		r.restart(i)
		r.push(v)
	}
}

// at returns the item of index i, which must be in [oldest, total).
func (r *ring[T]) at(i uint64) *T { return &r.buf[i%uint64(len(r.buf))] }

// newest returns the newest item, nil when the ring is empty.
func (r *ring[T]) newest() *T {
	if r.total == r.oldest() {
		return nil
	}
	return r.at(r.total - 1)
}
