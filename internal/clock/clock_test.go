package clock

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestRealAfterFunc(t *testing.T) {
	c := Real()
	start := c.Now()
	done := make(chan time.Time, 1)
	c.AfterFunc(time.Millisecond, func() { done <- c.Now() })
	select {
	case at := <-done:
		if at.Sub(start) < time.Millisecond {
			t.Errorf("ran after %v, want at least 1ms", at.Sub(start))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("AfterFunc never ran")
	}
}

func TestRealStop(t *testing.T) {
	tm := Real().AfterFunc(time.Hour, func() { t.Error("stopped timer ran") })
	if !tm.Stop() {
		t.Error("Stop of a pending timer returned false")
	}
	if tm.Stop() {
		t.Error("second Stop returned true")
	}
}

func TestSleep(t *testing.T) {
	if err := SleepReal(t.Context(), time.Microsecond); err != nil {
		t.Errorf("sleep: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := SleepReal(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("sleep with cancelled ctx: %v", err)
	}
}
