package gpioevent

import (
	"errors"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// pipeLine is a Line over a non-blocking pipe, made as Open makes one
// over the kernel's line file: what the kernel would write, the test
// writes.
func pipeLine(t *testing.T) (*Line, *os.File) {
	t.Helper()
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		t.Fatal(err)
	}
	w := os.NewFile(uintptr(fds[1]), "kernel side")
	t.Cleanup(func() { w.Close() })
	l := &Line{f: os.NewFile(uintptr(fds[0]), "line"), name: "pipe:0", now: monotonic, buf: make([]byte, maxBatch*eventSize)}
	t.Cleanup(func() { l.Close() })
	return l, w
}

// A Read blocks until events come, and takes every whole event there.
func TestLineReadsEvents(t *testing.T) {
	l, w := pipeLine(t)
	got := make(chan int, 1)
	evs := make([]Event, 8)
	go func() {
		n, err := l.Read(evs)
		if err != nil {
			t.Error(err)
		}
		got <- n
	}()
	w.Write(append(event(10, 1, 3, 1, 1), event(20, 2, 3, 2, 2)...))
	select {
	case n := <-got:
		if n != 2 || evs[0].LineSeqno != 1 || evs[1].Time != 20 || evs[1].Rising {
			t.Errorf("read %d: %+v", n, evs[:n])
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Read did not return once events were there")
	}
}

// Close wakes a Read blocked in the poller: it returns ErrClosed, and a
// second Close does nothing.
func TestLineCloseWakesRead(t *testing.T) {
	l, _ := pipeLine(t)
	done := make(chan error, 1)
	go func() {
		_, err := l.Read(make([]Event, 4))
		done <- err
	}()
	// A Read that has not blocked yet when Close comes returns ErrClosed
	// as well: either order is the same to the caller.
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("Read after Close: %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not wake the Read")
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// Now reads CLOCK_MONOTONIC: it goes forward with real time.
func TestLineNow(t *testing.T) {
	l, _ := pipeLine(t)
	start, a := time.Now(), l.Now()
	for l.Now()-a < time.Millisecond {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("Now stands at %v", l.Now())
		}
	}
	if a <= 0 || time.Since(start) < time.Millisecond {
		t.Errorf("Now %v, a millisecond of it in %v", a, time.Since(start))
	}
}

func TestOpenMissingChip(t *testing.T) {
	_, err := Open("/dev/no-such-gpiochip", 0, Config{Edge: Rising})
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open of a missing chip: %v", err)
	}
}
