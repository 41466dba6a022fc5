package history

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// testBatches are n one-sample batches of series d, indices 0.., one a
// second from t0.
func testBatches(n int) [][]batch {
	out := make([][]batch, n)
	for i := range out {
		out[i] = []batch{{device: "d", kind: KindNumber, first: uint64(i), samples: []sample{{t: t0.UnixMilli() + int64(i)*1000, v: float64(i) + 0.5}}}}
	}
	return out
}

func storeOpts(now time.Time) StoreOptions {
	return StoreOptions{KeepFull: 7 * 24 * time.Hour, KeepMinutes: 365 * 24 * time.Hour, MaxBytes: 1 << 30, Now: func() time.Time { return now }}
}

// loaded opens dir and returns the indices of the samples read back.
func loaded(t *testing.T, dir string) ([]uint64, *Store) {
	t.Helper()
	var got []uint64
	st, err := OpenStore(dir, storeOpts(t0), func(kind int, b batch) {
		for i := range b.samples {
			got = append(got, b.first+uint64(i))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, st
}

// A segment cut at any byte, or with any byte changed, keeps every
// record wholly before that byte; Open cuts the rest, and what is
// appended next reads back after them.
func TestStoreTornTail(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	st, err := OpenStore(src, storeOpts(t0), nil)
	if err != nil {
		t.Fatal(err)
	}
	var ends []int64 // each record's end offset
	for _, bs := range testBatches(3) {
		if err := st.Append(bs, nil); err != nil {
			t.Fatal(err)
		}
		ends = append(ends, st.Stats().DiskBytes)
	}
	st.Close()
	seg := filepath.Join(src, "full", "0000000001.seg")
	whole, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	before := func(off int64) []uint64 { // records wholly before off
		var want []uint64
		for i, end := range ends {
			if end <= off {
				want = append(want, uint64(i))
			}
		}
		return want
	}
	for off := int64(0); off <= int64(len(whole)); off++ {
		for _, how := range []string{"cut", "flip"} {
			if how == "flip" && off == int64(len(whole)) {
				continue
			}
			data := slices.Clone(whole[:off])
			if how == "flip" {
				data = slices.Clone(whole)
				data[off] ^= 0x55
			}
			dir := t.TempDir()
			os.MkdirAll(filepath.Join(dir, "full"), 0o700)
			if err := os.WriteFile(filepath.Join(dir, "full", "0000000001.seg"), data, 0o600); err != nil {
				t.Fatal(err)
			}
			got, st := loaded(t, dir)
			if want := before(off); !slices.Equal(got, want) {
				t.Fatalf("%s at %d: read %v, want %v", how, off, got, want)
			}
			next := testBatches(4)[3]
			if err := st.Append(next, nil); err != nil {
				t.Fatalf("%s at %d: append: %v", how, off, err)
			}
			st.Close()
			got, st = loaded(t, dir)
			st.Close()
			if want := append(before(off), 3); !slices.Equal(got, want) {
				t.Fatalf("%s at %d, then appended: read %v, want %v", how, off, got, want)
			}
		}
	}
}

// Segments go whole: past their kind's keep, and the oldest first over
// the size bound; the one appended to stays.
func TestStoreDropsOld(t *testing.T) {
	t.Parallel()
	now := t0
	opt := storeOpts(t0)
	opt.Now = func() time.Time { return now }
	opt.KeepFull = 48 * time.Hour
	dir := t.TempDir()
	st, err := OpenStore(dir, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for day := range 4 { // a segment a day, one sample each, at the day's time
		now = t0.Add(time.Duration(day) * 24 * time.Hour)
		b := batch{device: "d", kind: KindNumber, first: uint64(day), samples: []sample{{t: now.UnixMilli(), v: 1}}}
		if err := st.Append([]batch{b}, nil); err != nil {
			t.Fatal(err)
		}
	}
	names := func() []string {
		ents, _ := os.ReadDir(filepath.Join(dir, "full"))
		var out []string
		for _, e := range ents {
			out = append(out, e.Name())
		}
		return out
	}
	// Day 3: day 0's sample is 72 h old, day 1's 48 h (kept: not older).
	if got, want := names(), []string{"0000000002.seg", "0000000003.seg", "0000000004.seg"}; !slices.Equal(got, want) {
		t.Errorf("after 4 days, keep 48h: %v, want %v", got, want)
	}
	st.opt.MaxBytes = st.Stats().DiskBytes - 1
	if err := st.Append(nil, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := names(), []string{"0000000003.seg", "0000000004.seg"}; !slices.Equal(got, want) {
		t.Errorf("one byte over the size bound: %v, want %v", got, want)
	}
	st.opt.MaxBytes = 1
	if err := st.Append(nil, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := names(), []string{"0000000004.seg"}; !slices.Equal(got, want) {
		t.Errorf("under the size of one segment: %v, want %v (the current one stays)", got, want)
	}
}

// A batch of each kind is one write and one fsync; a new segment adds
// its header's write and the directory's fsync.
func TestStoreWritesPerFlush(t *testing.T) {
	t.Parallel()
	st, err := OpenStore(t.TempDir(), storeOpts(t0), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	bs := testBatches(3)
	bucketBatch := []batch{{device: "d", kind: KindNumber, buckets: []bucket{{start: t0.UnixMilli(), n: 1}}}}
	if err := st.Append(append(bs[0], bs[1]...), bucketBatch); err != nil {
		t.Fatal(err)
	}
	if err := st.Append(bs[2], bucketBatch); err != nil {
		t.Fatal(err)
	}
	s := st.Stats()
	if s.Writes != 2+4 || s.Syncs != 2+4 || s.Flushes != 2 || s.Samples != 3 || s.Buckets != 2 {
		t.Errorf("stats %+v: want 6 writes and 6 syncs (2 segments begun, 2 flushes of 2 kinds), 3 samples, 2 buckets", s)
	}
}

// A history directory removed under the store (the state directory made
// again) gets a new segment at the next append, which reads back.
func TestStoreDirectoryRemoved(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := OpenStore(dir, storeOpts(t0), nil)
	if err != nil {
		t.Fatal(err)
	}
	bs := testBatches(2)
	if err := st.Append(bs[0], nil); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "full")); err != nil {
		t.Fatal(err)
	}
	if err := st.Append(bs[1], nil); err != nil {
		t.Fatalf("append after the directory went: %v", err)
	}
	st.Close()
	if got, st := loaded(t, dir); !slices.Equal(got, []uint64{1}) {
		t.Errorf("read back %v, want the sample written after the removal, 1", got)
	} else {
		st.Close()
	}
}

// A state directory that is gone is not made again by the history: the
// append fails, and succeeds once the directory is back.
func TestStoreStateDirectoryGone(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "state")
	dir := filepath.Join(state, "history")
	st, err := OpenStore(dir, storeOpts(t0), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	bs := testBatches(2)
	if err := os.RemoveAll(state); err != nil {
		t.Fatal(err)
	}
	if err := st.Append(bs[0], nil); err == nil {
		t.Fatal("append with the state directory gone: no error")
	}
	if _, err := os.Stat(state); err == nil {
		t.Fatal("the history made the state directory again")
	}
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := st.Append(bs[1], nil); err != nil {
		t.Fatalf("append once the state directory is back: %v", err)
	}
}
