package history

import (
	"context"
	"slices"
	"testing"
	"time"
)

// openAt opens a History with small rings on dir's disk history, its
// samples kept for keep (0: a week).
func openAt(t *testing.T, dir string, keep ...time.Duration) *History {
	t.Helper()
	h := New(Options{Samples: 8, Buckets: 4})
	opt := storeOpts(t0.Add(time.Hour))
	if len(keep) > 0 {
		opt.KeepFull = keep[0]
	}
	st, err := h.Open(dir, opt)
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
// samples were written are counted again. With samples kept a week,
// buckets are written 60 at a time, so that the crash lost them all and
// they are counted again from the samples; with samples kept an hour,
// each flush writes the minutes that are over.
func TestPersistAcrossCrash(t *testing.T) {
	t.Parallel()
	for _, keep := range []time.Duration{7 * 24 * time.Hour, time.Hour} {
		t.Run(keep.String(), func(t *testing.T) {
			t.Parallel()
			persistAcrossCrash(t, keep)
		})
	}
}

func persistAcrossCrash(t *testing.T, keep time.Duration) {
	dir := t.TempDir()
	h := openAt(t, dir, keep)
	// 30 values, 10 s apart: 5 minutes; 8 kept in memory, 4 buckets.
	for i := range 30 {
		h.Record(value("d", float64(i), t0.Add(time.Duration(i)*10*time.Second)))
		if i%4 == 3 && i <= 19 { // twice a ring: none overwritten unwritten
			if err := h.Flush(false); err != nil {
				t.Fatal(err)
			}
		}
	}
	if st, _ := h.DiskStats(); (keep == time.Hour) != (st.Buckets > 0) {
		t.Errorf("samples kept %v: %d buckets written, want some only when kept an hour", keep, st.Buckets)
	}
	// Crash: values 20..29 never written. Restart.
	h = openAt(t, dir, keep)
	idx, ts := pageOf(t, h, Full, 3)
	if want := seq(0, 20); !slices.Equal(idx, want) {
		t.Fatalf("after the crash, indices %v, want %v", idx, want)
	}
	for i, x := range ts {
		if want := t0.Add(time.Duration(i) * 10 * time.Second).UnixMilli(); x != want {
			t.Errorf("sample %d at %d, want %d", i, x, want)
		}
	}
	// Minutes 0 to 2 were over at the last flush (kept an hour:
	// written); minute 3's samples 18 and 19 were written, its bucket
	// not: counted again.
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
	h = openAt(t, dir, keep)
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

// Run flushes as soon as a series has half its ring unwritten, not
// waiting for the interval, and once more, final, when stopped: the
// minute that goes on is written too.
func TestPersistRun(t *testing.T) {
	t.Parallel()
	h := openAt(t, t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.Run(ctx, time.Hour)
	}()
	for i := range 4 { // half of 8
		h.Record(value("d", float64(i), t0.Add(time.Duration(i)*time.Second)))
	}
	deadline := time.Now().Add(10 * time.Second)
	for st, _ := h.DiskStats(); st.Samples < 4; st, _ = h.DiskStats() {
		if time.Now().After(deadline) {
			t.Fatalf("4 samples of a ring of 8 not written within 10 s: %+v", st)
		}
		<-time.After(time.Millisecond)
	}
	h.Record(value("d", 4.0, t0.Add(4*time.Second)))
	cancel()
	<-done
	if st, _ := h.DiskStats(); st.Samples != 5 || st.Buckets != 1 {
		t.Errorf("after the stop: %d samples and %d buckets written, want 5 and the minute's 1", st.Samples, st.Buckets)
	}
}

// A device whose value changes kind across a restart (its configuration
// did) gets a series of the new kind, its indices following the old
// one's; pages read only their kind's items, from disk too, and the
// next start keeps the newer kind.
func TestPersistKindChange(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := openAt(t, dir)
	for i := range 3 {
		h.Record(value("d", float64(i), t0.Add(time.Duration(i)*time.Second)))
	}
	if err := h.Flush(true); err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		h = openAt(t, dir)
		if round == 0 {
			h.Record(value("d", true, t0.Add(time.Minute)))
			if err := h.Flush(true); err != nil {
				t.Fatal(err)
			}
		}
		p, err := h.Query(Query{Device: "d", FromDisk: true})
		if err != nil {
			t.Fatal(err)
		}
		if p.Kind != KindBoolean || len(p.Samples.V) != 1 || p.Samples.V[0] != true || p.Next != 4 {
			t.Errorf("start %d after the change: %+v %+v, want one boolean, true, of index 3", round+1, p, p.Samples)
		}
	}
}
