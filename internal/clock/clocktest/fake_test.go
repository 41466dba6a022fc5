package clocktest

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/clock"
)

var epoch = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func TestAdvanceRunsDueTimersInOrder(t *testing.T) {
	c := NewFake(epoch)
	var got []string
	add := func(name string, d time.Duration) {
		c.AfterFunc(d, func() { got = append(got, fmt.Sprintf("%s@%v", name, c.Now().Sub(epoch))) })
	}
	add("c", 3*time.Second)
	add("a", 1*time.Second)
	add("b1", 2*time.Second)
	add("b2", 2*time.Second) // same instant: scheduling order
	add("late", 10*time.Second)

	c.Advance(5 * time.Second)
	want := []string{"a@1s", "b1@2s", "b2@2s", "c@3s"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ran %v, want %v", got, want)
	}
	if now := c.Now().Sub(epoch); now != 5*time.Second {
		t.Errorf("Now = epoch+%v, want epoch+5s", now)
	}
	if n := c.Pending(); n != 1 {
		t.Errorf("Pending = %d, want 1", n)
	}
}

func TestFollowUpTimerWithinSpanRuns(t *testing.T) {
	c := NewFake(epoch)
	var ticks []time.Duration
	var tick func()
	tick = func() {
		ticks = append(ticks, c.Now().Sub(epoch))
		c.AfterFunc(time.Second, tick)
	}
	c.AfterFunc(time.Second, tick)
	c.Advance(3500 * time.Millisecond)
	want := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}
	if !reflect.DeepEqual(ticks, want) {
		t.Errorf("ticks at %v, want %v", ticks, want)
	}
}

func TestStopAndReset(t *testing.T) {
	tests := []struct {
		name     string
		act      func(c *Fake, tm clock.Timer) bool
		wantRet  bool
		advance  time.Duration
		wantRuns int
	}{
		{"stop pending", func(c *Fake, tm clock.Timer) bool { return tm.Stop() }, true, time.Hour, 0},
		{"stop after run", func(c *Fake, tm clock.Timer) bool {
			c.Advance(time.Second)
			return tm.Stop()
		}, false, 0, 1},
		{"reset pending later", func(c *Fake, tm clock.Timer) bool { return tm.Reset(5 * time.Second) }, true, 4 * time.Second, 0},
		{"reset pending runs once", func(c *Fake, tm clock.Timer) bool { return tm.Reset(5 * time.Second) }, true, 5 * time.Second, 1},
		{"reset after run rearms", func(c *Fake, tm clock.Timer) bool {
			c.Advance(time.Second)
			return tm.Reset(time.Second)
		}, false, time.Second, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewFake(epoch)
			runs := 0
			tm := c.AfterFunc(time.Second, func() { runs++ })
			if got := tt.act(c, tm); got != tt.wantRet {
				t.Errorf("returned %v, want %v", got, tt.wantRet)
			}
			c.Advance(tt.advance)
			if runs != tt.wantRuns {
				t.Errorf("ran %d times, want %d", runs, tt.wantRuns)
			}
		})
	}
}

func TestZeroDelayRunsAtNextAdvance(t *testing.T) {
	c := NewFake(epoch)
	ran := false
	c.AfterFunc(0, func() { ran = true })
	if ran {
		t.Fatal("ran before Advance")
	}
	c.Advance(0)
	if !ran {
		t.Error("did not run at Advance(0)")
	}
}

func TestWaitPending(t *testing.T) {
	c := NewFake(epoch)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go c.AfterFunc(time.Second, func() {})
	if err := c.WaitPending(ctx, 1); err != nil {
		t.Fatalf("WaitPending: %v", err)
	}

	short, cancel2 := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel2()
	if err := c.WaitPending(short, 2); err != context.DeadlineExceeded {
		t.Errorf("WaitPending for a timer never armed = %v, want DeadlineExceeded", err)
	}
}

// TestConcurrentUse is for the race detector: timers armed and stopped from
// other goroutines while the clock advances.
func TestConcurrentUse(t *testing.T) {
	c := NewFake(epoch)
	done := make(chan struct{})
	for i := 0; i < 4; i++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for j := 0; j < 100; j++ {
				tm := c.AfterFunc(time.Duration(j)*time.Millisecond, func() { _ = c.Now() })
				if j%2 == 0 {
					tm.Stop()
				}
			}
		}()
	}
	for i := 0; i < 100; i++ {
		c.Advance(time.Millisecond)
	}
	for i := 0; i < 4; i++ {
		<-done
	}
	c.Advance(time.Second)
	if n := c.Pending(); n != 0 {
		t.Errorf("Pending = %d after advancing past every timer, want 0", n)
	}
}
