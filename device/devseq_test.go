package device

import (
	"testing"
	"time"
)

// TestDevSeqCountsEachDevice: each device counts its own values, whatever
// the others do, and an id added again goes on from where it was.
func TestDevSeqCountsEachDevice(t *testing.T) {
	r := NewRegistry(nil)
	var got []Event
	defer r.Subscribe(func(e Event) {
		if e.Kind == EventValue {
			got = append(got, e)
		}
	})()
	a, err := r.Add(newStub("bench.a"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.Add(newStub("bench.b"))
	if err != nil {
		t.Fatal(err)
	}
	a.Value(true, time.Time{})
	for range 5 {
		b.Value(true, time.Time{})
	}
	a.Value(false, time.Time{})
	if err := r.Remove("bench.a", "unplugged"); err != nil {
		t.Fatal(err)
	}
	a2, err := r.Add(newStub("bench.a"))
	if err != nil {
		t.Fatal(err)
	}
	a2.Value(true, time.Time{})

	want := []struct {
		device      string
		seq, devSeq uint64
	}{
		{"bench.a", 1, 1},
		{"bench.b", 2, 1}, {"bench.b", 3, 2}, {"bench.b", 4, 3}, {"bench.b", 5, 4}, {"bench.b", 6, 5},
		{"bench.a", 7, 2},
		{"bench.a", 8, 3}, // added again: counting goes on
	}
	if len(got) != len(want) {
		t.Fatalf("%d value events, want %d", len(got), len(want))
	}
	for i, w := range want {
		if e := got[i]; e.Device != w.device || e.Seq != w.seq || e.DevSeq != w.devSeq {
			t.Errorf("event %d: %s seq %d devSeq %d, want %s seq %d devSeq %d", i, e.Device, e.Seq, e.DevSeq, w.device, w.seq, w.devSeq)
		}
	}
	if snap, _ := r.Value("bench.a"); snap.DevSeq != 3 || snap.Seq != 8 {
		t.Errorf("snapshot of bench.a: seq %d devSeq %d, want 8 and 3", snap.Seq, snap.DevSeq)
	}
}
