package systemd

import (
	"context"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// wedgeable is a probe that answers at once until wedged, and then never
// (until its deadline), as a part stuck on a lock would.
type wedgeable struct{ wedged atomic.Bool }

func (w *wedgeable) check(ctx context.Context) error {
	if !w.wedged.Load() {
		return nil
	}
	<-ctx.Done()
	return ctx.Err()
}

func TestWatchdogTickPetsOnlyWhenAllAnswer(t *testing.T) {
	sock := newNotifySocket(t)
	log, logs := newLog()
	hub, audit := &wedgeable{}, &wedgeable{}
	summary := "ok"
	w, err := NewWatchdog(NewNotifier(log), WatchdogOptions{
		Interval: 200 * time.Millisecond,
		Probes:   []Probe{{"hub", hub.check}, {"audit", audit.check}},
		Summary:  func() string { return summary },
		Log:      log,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// expect ticks once and returns the messages sent, up to a marker.
	expect := func(want ...string) []string {
		t.Helper()
		stuck := w.Tick(ctx)
		NewNotifier(nil).Ready()
		var got []string
		for m := sock.next(5 * time.Second); m != "READY=1"; m = sock.next(5 * time.Second) {
			got = append(got, m)
		}
		if !slices.Equal(got, want) {
			t.Errorf("tick sent %q, want %q", got, want)
		}
		return stuck
	}
	expect("WATCHDOG=1", "STATUS=ok")
	expect("WATCHDOG=1") // the summary did not change
	audit.wedged.Store(true)
	if stuck := expect("STATUS=watchdog: stuck: audit"); !slices.Equal(stuck, []string{"audit"}) {
		t.Errorf("stuck = %q, want [audit]", stuck)
	}
	hub.wedged.Store(true)
	summary = "changed"
	expect("STATUS=watchdog: stuck: audit, hub") // no petting; the status names them
	if got := w.Stuck(); !slices.Equal(got, []string{"audit", "hub"}) {
		t.Errorf("Stuck() = %q, want [audit hub]", got)
	}
	expect() // the same parts stuck: logged once, not again
	if n := strings.Count(logs.String(), "parts stuck"); n != 2 {
		t.Errorf("logged %d stuck lines over two changes and one repeat, want 2:\n%s", n, logs)
	}
	if !strings.Contains(logs.String(), "stuck=audit,hub") {
		t.Errorf("log does not name the stuck parts:\n%s", logs)
	}
	hub.wedged.Store(false)
	audit.wedged.Store(false)
	expect("WATCHDOG=1", "STATUS=changed")
	if w.Stuck() != nil {
		t.Errorf("Stuck() = %q after recovery", w.Stuck())
	}
	if !strings.Contains(logs.String(), "every part answers again") {
		t.Errorf("recovery not logged:\n%s", logs)
	}
}

// TestWatchdogRunFromEnvironment runs the watchdog as systemd sets it up:
// WATCHDOG_USEC and WATCHDOG_PID, petting repeatedly at half the interval
// until a part wedges.
func TestWatchdogRunFromEnvironment(t *testing.T) {
	sock := newNotifySocket(t)
	t.Setenv("WATCHDOG_USEC", "300000")
	t.Setenv("WATCHDOG_PID", strconv.Itoa(os.Getpid()))
	part := &wedgeable{}
	log, logs := newLog()
	w, err := NewWatchdog(NewNotifier(log), WatchdogOptions{Probes: []Probe{{"supervisor", part.check}}, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	if w.Interval() != 300*time.Millisecond {
		t.Fatalf("Interval() = %v, want 300ms", w.Interval())
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- w.Run(ctx) }()
	start := time.Now()
	for range 3 {
		if m := sock.next(5 * time.Second); m != "WATCHDOG=1" {
			t.Fatalf("got %q, want WATCHDOG=1", m)
		}
	}
	// Three pets, the first at once: two half intervals at least.
	if el := time.Since(start); el < 250*time.Millisecond {
		t.Errorf("three pets in %v: faster than every half interval", el)
	}
	part.wedged.Store(true)
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "stuck=supervisor") {
		if time.Now().After(deadline) {
			t.Fatalf("the wedged part is not named in the log:\n%s", logs)
		}
		sock.conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		sock.conn.Read(make([]byte, 64)) // drain pets sent before the wedge
	}
	// Pets of ticks before the logged one may still be queued.
	buf := make([]byte, 64)
	for {
		sock.conn.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		if _, err := sock.conn.Read(buf); err != nil {
			break
		}
	}
	// From the logged tick on, nothing is petted: the socket stays quiet
	// for more than a whole interval.
	sock.conn.SetReadDeadline(time.Now().Add(400 * time.Millisecond))
	if n, err := sock.conn.Read(buf); err == nil {
		t.Errorf("sent %q while a part is wedged", buf[:n])
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run returned %v, want context.Canceled", err)
	}
}

func TestWatchdogOff(t *testing.T) {
	for _, tc := range []struct {
		name, usec, pid string
		wantErr         bool
	}{
		{"unset", "", "", false},
		{"another pid", "1000000", "1", false},
		{"malformed", "soon", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("WATCHDOG_USEC", tc.usec)
			t.Setenv("WATCHDOG_PID", tc.pid)
			w, err := NewWatchdog(NewNotifier(nil), WatchdogOptions{})
			if tc.wantErr {
				if err == nil {
					t.Fatal("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if w.Interval() != 0 {
				t.Errorf("Interval() = %v, want 0", w.Interval())
			}
			if err := w.Run(context.Background()); err != nil {
				t.Errorf("Run of a watchdog that is off: %v", err)
			}
		})
	}
}

// A summary that wedges (its part wedged after the probe answered) does
// not wedge the watchdog: the tick still returns, having petted.
func TestWatchdogSummaryWedged(t *testing.T) {
	sock := newNotifySocket(t)
	log, logs := newLog()
	wedged := make(chan struct{})
	defer close(wedged)
	w, err := NewWatchdog(NewNotifier(log), WatchdogOptions{
		Interval: 200 * time.Millisecond,
		Probes:   []Probe{{"hub", (&wedgeable{}).check}},
		Summary:  func() string { <-wedged; return "late" },
		Log:      log,
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan []string)
	go func() { done <- w.Tick(context.Background()) }()
	select {
	case stuck := <-done:
		if stuck != nil {
			t.Errorf("stuck = %q", stuck)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a wedged summary wedged the tick")
	}
	if m := sock.next(5 * time.Second); m != "WATCHDOG=1" {
		t.Errorf("sent %q, want WATCHDOG=1", m)
	}
	if !strings.Contains(logs.String(), "summary did not answer") {
		t.Errorf("not logged:\n%s", logs)
	}
}
