//go:build go1.25

// These tests run in a testing/synctest bubble, whose API (synctest.Test)
// is in Go 1.25 and later; Go 1.24 has only an experimental one behind
// GOEXPERIMENT=synctest. The build line keeps them out of a Go 1.24 build
// of the tests, which the module supports (see docs/testing.md).

package eventq

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

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
