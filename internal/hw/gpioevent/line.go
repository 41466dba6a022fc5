package gpioevent

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// maxBatch bounds the events one Read takes from the kernel.
const maxBatch = 64

// Line is a requested line: its events, read from the file the kernel
// gave for the request. One goroutine reads; Close may come from any.
type Line struct {
	f    *os.File
	name string
	now  func() time.Duration
	buf  []byte

	closeOnce sync.Once
	closeErr  error
}

var _ Source = (*Line)(nil)

// Read waits for the kernel's events (in the runtime poller: the file is
// non-blocking) and decodes those that came, at most len(events) and
// 64 per call.
func (l *Line) Read(events []Event) (int, error) {
	n := min(len(events), maxBatch)
	if n == 0 {
		return 0, nil
	}
	k, err := l.f.Read(l.buf[:n*eventSize])
	if errors.Is(err, os.ErrClosed) {
		return 0, ErrClosed
	}
	if err != nil {
		return 0, fmt.Errorf("gpioevent: read events of %s: %w", l.name, err)
	}
	return decodeEvents(l.buf[:k], events)
}

// Now reads CLOCK_MONOTONIC, the clock the events are stamped on.
func (l *Line) Now() time.Duration { return l.now() }

// Close releases the line and wakes a Read blocked on it.
func (l *Line) Close() error {
	l.closeOnce.Do(func() {
		if err := l.f.Close(); err != nil {
			l.closeErr = fmt.Errorf("gpioevent: release %s: %w", l.name, err)
		}
	})
	return l.closeErr
}

// String names the line as Open was given it: "/dev/gpiochip0:17".
func (l *Line) String() string { return l.name }
