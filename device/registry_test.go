package device

import (
	"sync"
	"testing"
	"time"
)

type stub struct{ desc Descriptor }

func (s stub) Descriptor() Descriptor { return s.desc }

func newStub(id string) stub {
	return stub{Descriptor{ID: id, Kind: KindGPIOOutput, Source: "board", Access: AccessReadWrite, Risk: RiskLow, Schema: Schema{Type: TypeBoolean}}}
}

func TestRegistryAddPublishRemove(t *testing.T) {
	now := time.Unix(100, 0)
	r := NewRegistry(func() time.Time { return now })
	var events []Event
	cancel := r.Subscribe(func(e Event) { events = append(events, e) })
	defer cancel()

	rep, err := r.Add(newStub("bench.led"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Add(newStub("bench.led")); err == nil {
		t.Error("a second device with the same id was accepted")
	}
	if _, err := r.Add(newStub("Bad Id")); err == nil {
		t.Error("a bad id was accepted")
	}
	if _, ok := r.Value("bench.led"); ok {
		t.Error("a new device has a value")
	}
	rep.Value(true, time.Time{})
	snap, ok := r.Value("bench.led")
	if !ok || snap.Value != true || snap.Seq != 1 || !snap.TS.Equal(now) || !snap.At.Equal(now) {
		t.Fatalf("snapshot %+v", snap)
	}
	rep.State(StateFault, "i2c: no ack")
	rep.State(StateFault, "i2c: no ack") // unchanged: no event
	if d, _ := r.Describe("bench.led"); d.State != StateFault || d.Fault != "i2c: no ack" {
		t.Errorf("descriptor %+v", d)
	}
	rep.State(StateOK, "ignored")
	if d, _ := r.Describe("bench.led"); d.State != StateOK || d.Fault != "" {
		t.Errorf("fault text kept outside fault: %+v", d)
	}
	if err := r.Remove("bench.led", "unplugged"); err != nil {
		t.Fatal(err)
	}
	rep.Value(false, time.Time{}) // a removed device's reports are ignored
	kinds := []EventKind{EventAdded, EventValue, EventState, EventState, EventRemoved}
	if len(events) != len(kinds) {
		t.Fatalf("%d events, want %d: %+v", len(events), len(kinds), events)
	}
	for i, k := range kinds {
		if events[i].Kind != k {
			t.Errorf("event %d is %v, want %v", i, events[i].Kind, k)
		}
	}
}

// A reporter of a removed device must not write into a later device that
// took the same id.
func TestStaleReporterIgnored(t *testing.T) {
	r := NewRegistry(nil)
	old, _ := r.Add(newStub("x.led"))
	r.Remove("x.led", "gone")
	if _, err := r.Add(newStub("x.led")); err != nil {
		t.Fatal(err)
	}
	old.Value(true, time.Time{})
	old.State(StateOffline, "")
	if _, ok := r.Value("x.led"); ok {
		t.Error("the old reporter wrote a value into the new device")
	}
	if d, _ := r.Describe("x.led"); d.State != StateOK {
		t.Errorf("the old reporter changed the new device's state to %s", d.State)
	}
}

// seq is one counter for all devices, and every subscriber sees events in
// seq order even when devices publish from many goroutines.
func TestSeqOrderedAcrossGoroutines(t *testing.T) {
	r := NewRegistry(nil)
	var mu sync.Mutex
	var seen []uint64
	r.Subscribe(func(e Event) {
		if e.Kind == EventValue {
			mu.Lock()
			seen = append(seen, e.Seq)
			mu.Unlock()
		}
	})
	var reps []Reporter
	for _, id := range []string{"a", "b", "c", "d"} {
		rep, _ := r.Add(newStub(id))
		reps = append(reps, rep)
	}
	var wg sync.WaitGroup
	for _, rep := range reps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				rep.Value(i%2 == 0, time.Time{})
			}
		}()
	}
	wg.Wait()
	if len(seen) != 2000 || r.Seq() != 2000 {
		t.Fatalf("%d events, seq %d", len(seen), r.Seq())
	}
	for i, s := range seen {
		if s != uint64(i+1) {
			t.Fatalf("event %d has seq %d", i, s)
		}
	}
}

func TestListSortedWithState(t *testing.T) {
	r := NewRegistry(nil)
	for _, id := range []string{"c", "a", "b"} {
		r.Add(newStub(id))
	}
	r.SetState("b", StateOffline, "")
	l := r.List()
	if len(l) != 3 || l[0].ID != "a" || l[1].ID != "b" || l[2].ID != "c" || l[1].State != StateOffline {
		t.Fatalf("%+v", l)
	}
}

func TestUnsubscribe(t *testing.T) {
	r := NewRegistry(nil)
	n := 0
	cancel := r.Subscribe(func(Event) { n++ })
	r.Add(newStub("a"))
	cancel()
	r.Add(newStub("b"))
	if n != 1 {
		t.Fatalf("%d events after cancel, want 1", n)
	}
}
