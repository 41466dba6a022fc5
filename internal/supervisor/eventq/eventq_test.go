package eventq

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func TestOrderAndDrops(t *testing.T) {
	// Each op is a push of the named type or a pop ("-"); for a push, want
	// says whether it is dropped; for a pop, the type, seq and dropped count
	// it must return.
	type op struct {
		push    string
		dropped bool   // push: wanted result
		typ     string // pop: wanted type
		seq     uint64
		carried uint64
	}
	tests := []struct {
		name  string
		limit int
		ops   []op
		total uint64
	}{
		{"order kept", 4, []op{
			{push: "a"}, {push: "b"}, {push: "c"},
			{typ: "a", seq: 1}, {typ: "b", seq: 2},
			{push: "d"},
			{typ: "c", seq: 3}, {typ: "d", seq: 4},
		}, 0},
		{"newest dropped when full, carried by the next delivery", 2, []op{
			{push: "a"}, {push: "b"}, {push: "c", dropped: true}, {push: "d", dropped: true},
			{typ: "a", seq: 1, carried: 2}, {typ: "b", seq: 2},
		}, 2},
		{"count resets after a delivery", 1, []op{
			{push: "a"}, {push: "b", dropped: true},
			{typ: "a", seq: 1, carried: 1},
			{push: "c"}, {push: "d", dropped: true}, {push: "e", dropped: true}, {push: "f", dropped: true},
			{typ: "c", seq: 2, carried: 3},
			{push: "g"},
			{typ: "g", seq: 3},
		}, 4},
		{"zero limit is the default", 0, []op{
			{push: "a"}, {typ: "a", seq: 1},
		}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := New(tc.limit)
			for i, o := range tc.ops {
				if o.push != "" {
					if got := q.Push(Event{Type: o.push, Data: i}); got != o.dropped {
						t.Fatalf("op %d: Push(%s) dropped = %v, want %v", i, o.push, got, o.dropped)
					}
					continue
				}
				ev, carried, err := q.Pop(context.Background())
				if err != nil {
					t.Fatalf("op %d: Pop: %v", i, err)
				}
				if ev.Type != o.typ || ev.Seq != o.seq || carried != o.carried {
					t.Fatalf("op %d: Pop = (%s seq %d, dropped %d), want (%s seq %d, dropped %d)",
						i, ev.Type, ev.Seq, carried, o.typ, o.seq, o.carried)
				}
			}
			if q.Len() != 0 {
				t.Errorf("Len = %d after popping everything", q.Len())
			}
			if q.Dropped() != tc.total {
				t.Errorf("Dropped = %d, want %d", q.Dropped(), tc.total)
			}
		})
	}
}

func TestDefaultLimit(t *testing.T) {
	q := New(0)
	for i := range DefaultLimit {
		if q.Push(Event{Type: "value"}) {
			t.Fatalf("push %d dropped below the default limit", i+1)
		}
	}
	if !q.Push(Event{Type: "value"}) {
		t.Error("push over the default limit was kept")
	}
	if q.Len() != DefaultLimit {
		t.Errorf("Len = %d, want %d", q.Len(), DefaultLimit)
	}
}

// TestPopBlocks runs in a synctest bubble: synctest.Wait returns only when
// the popper is durably blocked on a channel, so a busy-waiting Pop would
// hang this test instead of passing it.
func TestPopBlocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(4)
		got := make(chan Event, 1)
		go func() {
			ev, _, err := q.Pop(context.Background())
			if err != nil {
				t.Errorf("Pop: %v", err)
			}
			got <- ev
		}()
		synctest.Wait()
		select {
		case ev := <-got:
			t.Fatalf("Pop returned %v from an empty queue", ev)
		default:
		}
		q.Push(Event{Type: "value"})
		if ev := <-got; ev.Type != "value" || ev.Seq != 1 {
			t.Errorf("Pop = %+v, want value seq 1", ev)
		}
	})
}

func TestPopContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(4)
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			_, _, err := q.Pop(ctx)
			errc <- err
		}()
		synctest.Wait()
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("Pop after cancel: %v, want context.Canceled", err)
		}
	})
}

func TestClose(t *testing.T) {
	q := New(4)
	q.Push(Event{Type: "a"})
	q.Close()
	q.Close()
	if !q.Push(Event{Type: "b"}) {
		t.Error("Push after Close was kept")
	}
	if ev, _, err := q.Pop(context.Background()); err != nil || ev.Type != "a" {
		t.Fatalf("Pop after Close = %v, %v; want the queued event", ev, err)
	}
	if _, _, err := q.Pop(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Pop of a closed empty queue: %v, want ErrClosed", err)
	}
	if q.Dropped() != 1 {
		t.Errorf("Dropped = %d, want 1", q.Dropped())
	}
}

func TestDrainWritesQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(8)
		for range 3 {
			q.Push(Event{Type: "value"})
		}
		var popped []uint64
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				ev, _, err := q.Pop(context.Background())
				if err != nil {
					return
				}
				popped = append(popped, ev.Seq)
			}
		}()
		if err := q.Drain(context.Background(), time.Now().Add(time.Second)); err != nil {
			t.Fatalf("Drain: %v", err)
		}
		<-done
		if len(popped) != 3 || popped[0] != 1 || popped[2] != 3 {
			t.Errorf("popped seqs %v, want [1 2 3]", popped)
		}
	})
}

func TestDrainDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(8)
		q.Push(Event{Type: "value"})
		q.Push(Event{Type: "value"})
		start := time.Now()
		err := q.Drain(context.Background(), start.Add(time.Second))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Drain with no writer: %v, want DeadlineExceeded", err)
		}
		if d := time.Since(start); d != time.Second {
			t.Errorf("Drain gave up after %v, want 1s", d)
		}
		if q.Len() != 2 {
			t.Errorf("Len = %d, want 2 left", q.Len())
		}
	})
}

func TestDrainEmpty(t *testing.T) {
	q := New(1)
	if err := q.Drain(context.Background(), time.Time{}); err != nil {
		t.Errorf("Drain of an empty queue: %v", err)
	}
}

// TestConcurrent pushes from several goroutines while one pops: every push
// is either delivered once or counted as dropped, seqs are consecutive, and
// the dropped counts carried add up to the total.
func TestConcurrent(t *testing.T) {
	const pushers, each = 8, 2000
	q := New(16)
	var wg sync.WaitGroup
	var mu sync.Mutex
	refused := 0
	for range pushers {
		wg.Go(func() {
			n := 0
			for range each {
				if q.Push(Event{Type: "value"}) {
					n++
				}
			}
			mu.Lock()
			refused += n
			mu.Unlock()
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var delivered int
	var carried, last uint64
	popErr := make(chan error, 1)
	go func() {
		for {
			ev, d, err := q.Pop(ctx)
			if err != nil {
				if errors.Is(err, ErrClosed) {
					err = nil
				}
				popErr <- err
				return
			}
			if ev.Seq != last+1 {
				popErr <- errors.New("seq out of order")
				return
			}
			last = ev.Seq
			delivered++
			carried += d
		}
	}()
	wg.Wait()
	q.Close()
	if err := <-popErr; err != nil {
		t.Fatal(err)
	}
	if delivered+refused != pushers*each {
		t.Errorf("delivered %d + dropped %d != pushed %d", delivered, refused, pushers*each)
	}
	if q.Dropped() != uint64(refused) {
		t.Errorf("Dropped = %d, want %d", q.Dropped(), refused)
	}
	// A push is dropped only while the queue is full, so some event is
	// always delivered after it and carries it; Close refuses nothing here
	// since every push happened before it.
	if carried != q.Dropped() {
		t.Errorf("carried %d, want every drop (%d)", carried, q.Dropped())
	}
}

// PopBatch takes what is queued, up to max, in order; the drops before
// the batch go with its first event.
func TestPopBatch(t *testing.T) {
	q := New(3)
	for i := 0; i < 5; i++ {
		q.Push(Event{Type: "value", Data: i})
	}
	got, err := q.PopBatch(context.Background(), nil, 2)
	if err != nil || len(got) != 2 || got[0].Seq != 1 || got[0].Dropped != 2 || got[1].Seq != 2 || got[1].Dropped != 0 {
		t.Fatalf("first batch %+v, %v", got, err)
	}
	got, err = q.PopBatch(context.Background(), got[:0], 10)
	if err != nil || len(got) != 1 || got[0].Seq != 3 || got[0].Dropped != 0 {
		t.Fatalf("second batch %+v, %v", got, err)
	}
	q.Close()
	if _, err := q.PopBatch(context.Background(), nil, 10); err != ErrClosed {
		t.Fatalf("closed and empty: %v", err)
	}
}

// The ring holds room for the most events that have waited at once, not
// for limit from the start; growing keeps their order across the wrap,
// and the limit still drops the newest.
func TestGrowsKeepingOrder(t *testing.T) {
	q := New(20)
	if cap(q.buf) != 0 {
		t.Fatalf("a new queue holds room for %d events, want none", cap(q.buf))
	}
	ctx := context.Background()
	for i := range 6 {
		q.Push(Event{Type: fmt.Sprint(i)})
	}
	got, _ := q.PopBatch(ctx, nil, 4) // the head moves: the next pushes wrap
	for i := 6; i < 30; i++ {
		q.Push(Event{Type: fmt.Sprint(i)})
	}
	got, _ = q.PopBatch(ctx, got, 100)
	for i, d := range got {
		if d.Type != fmt.Sprint(i) || d.Seq != uint64(i+1) {
			t.Fatalf("delivery %d: %+v, want event %d with seq %d", i, d, i, i+1)
		}
	}
	if len(got) != 24 || got[4].Dropped != 6 {
		t.Errorf("%d delivered, the first after the drops says %d dropped; want 24 and 6", len(got), got[4].Dropped)
	}
	if len(q.buf) != 20 {
		t.Errorf("the ring grew to %d, want the limit, 20", len(q.buf))
	}
}
