package history

import (
	"slices"
	"testing"
	"time"
)

// openAt opens a History with small rings on dir's disk history.
func openAt(t *testing.T, dir string) *History {
	t.Helper()
	h := New(Options{Samples: 8, Buckets: 4})
	st, err := h.Open(dir, storeOpts(t0.Add(time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return h
}

// pageOf reads the whole series d, at the resolution, following pages
// from index 0 (from disk, then memory), limit items a page.
func pageOf(t *testing.T, h *History, res Resolution, limit int) (idx []uint64, ts []int64) {
	t.Helper()
	from := uint64(0)
	for {
		p, err := h.Query(Query{Device: "d", Resolution: res, From: from, FromDisk: true, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		var tt []int64
		if res == Minute {
			tt = p.Buckets.(*NumberBuckets).T
		} else {
			tt = p.Samples.T
		}
		for i, x := range tt {
			idx, ts = append(idx, from+p.Dropped+uint64(i)), append(ts, x)
		}
		if !p.More {
			return idx, ts
		}
		from = p.Next
	}
}

// Values flushed before a crash (no final flush) read back after it,
// with their indices, across disk and memory; those not flushed are
// gone, and new values follow on; the buckets of the minutes whose
// samples were written are counted again.
func TestPersistAcrossCrash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := openAt(t, dir)
	// 30 values, 10 s apart: 5 minutes; 8 kept in memory, 4 buckets.
	for i := range 30 {
		h.Record(value("d", float64(i), t0.Add(time.Duration(i)*10*time.Second)))
		if i%4 == 3 && i <= 19 { // twice a ring: none overwritten unwritten
			if err := h.Flush(false); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Crash: values 20..29 never written. Restart.
	h = openAt(t, dir)
	idx, ts := pageOf(t, h, Full, 3)
	if want := seq(0, 20); !slices.Equal(idx, want) {
		t.Fatalf("after the crash, indices %v, want %v", idx, want)
	}
	for i, x := range ts {
		if want := t0.Add(time.Duration(i) * 10 * time.Second).UnixMilli(); x != want {
			t.Errorf("sample %d at %d, want %d", i, x, want)
		}
	}
	// Minutes 0 and 1 were over at the flush: written; minute 3's
	// samples 18 and 19 were written, its bucket not: counted again.
	_, bts := pageOf(t, h, Minute, 2)
	if want := []int64{t0.UnixMilli(), t0.UnixMilli() + 60e3, t0.UnixMilli() + 120e3, t0.UnixMilli() + 180e3}; !slices.Equal(bts, want) {
		t.Errorf("buckets at %v, want %v", bts, want)
	}
	p, _ := h.Query(Query{Device: "d", Resolution: Minute})
	if n := p.Buckets.(*NumberBuckets).N; n[len(n)-1] != 2 {
		t.Errorf("the replayed minute counts %v, want 2 values (18 and 19)", n)
	}
	// New values follow on from index 20, and a clean stop writes all.
	h.Record(value("d", 99.0, t0.Add(time.Hour)))
	if err := h.Flush(true); err != nil {
		t.Fatal(err)
	}
	h = openAt(t, dir)
	if idx, _ := pageOf(t, h, Full, 100); !slices.Equal(idx, seq(0, 21)) {
		t.Errorf("after a clean stop, indices %v, want 0..20", idx)
	}
	// Without a place asked, a page is memory's, as before disks.
	p, _ = h.Query(Query{Device: "d"})
	if len(p.Samples.T) != 8 || p.Dropped != 13 {
		t.Errorf("a page without from: %d samples, %d dropped; want memory's 8, 13 dropped", len(p.Samples.T), p.Dropped)
	}
}

func seq(from, to uint64) []uint64 {
	var out []uint64
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// Since reaches the disk: the items from then on, across disk and memory.
func TestPersistSince(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := openAt(t, dir)
	for i := range 30 {
		h.Record(value("d", float64(i), t0.Add(time.Duration(i)*time.Second)))
		if err := h.Flush(false); err != nil {
			t.Fatal(err)
		}
	}
	since := t0.Add(5 * time.Second).UnixMilli()
	p, err := h.Query(Query{Device: "d", Since: &since, FromDisk: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Samples.T) != 25 || p.Samples.T[0] != since || p.More {
		t.Errorf("since 5 s: %d samples from %v (more %v), want 25 from %d", len(p.Samples.T), p.Samples.T[:1], p.More, since)
	}
}
