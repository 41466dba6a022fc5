// Package gpioevent requests one GPIO line through the Linux GPIO
// character device (uAPI v2) and reads the edges the kernel reports on
// it, each with the kernel's timestamp and sequence numbers: what
// periph's gpioioctl does not give back (its WaitForEdge says only that
// an edge came). A pulse counter needs both: the time of every edge for
// its rate, and the line's sequence numbers to tell how many edges the
// kernel dropped when its buffer was full.
//
// A Line's Read blocks in Go's runtime poller on the line's file
// descriptor, which is non-blocking: the kernel wakes it when events
// come, nothing polls, and Close wakes a Read blocked on the line, which
// then returns ErrClosed.
//
// The request and the events are laid out by hand, byte by byte, as
// include/uapi/linux/gpio.h has them (struct gpio_v2_line_request, 592
// bytes; struct gpio_v2_line_event, 48 bytes), rather than as Go structs:
// on 32-bit ARM Go aligns a uint64 field to 4 bytes where the kernel's
// __aligned_u64 is aligned to 8.
//
// Open needs Linux; the types, the encoding and the Source interface do
// not, so that the counter and its tests build anywhere.
package gpioevent

import (
	"errors"
	"fmt"
	"time"
)

// Edge says which transitions of the line the kernel reports.
type Edge uint8

const (
	// Rising reports low-to-high transitions only.
	Rising Edge = iota + 1
	// Falling reports high-to-low transitions only.
	Falling
	// Both reports every transition.
	Both
)

func (e Edge) String() string {
	switch e {
	case Rising:
		return "rising"
	case Falling:
		return "falling"
	case Both:
		return "both"
	}
	return fmt.Sprintf("Edge(%d)", uint8(e))
}

// Bias is the pull the line is requested with.
type Bias uint8

const (
	// BiasDisabled turns the line's pull resistors off (the zero Bias).
	BiasDisabled Bias = iota
	// PullUp biases the line high.
	PullUp
	// PullDown biases the line low.
	PullDown
)

func (b Bias) String() string {
	switch b {
	case BiasDisabled:
		return "none"
	case PullUp:
		return "up"
	case PullDown:
		return "down"
	}
	return fmt.Sprintf("Bias(%d)", uint8(b))
}

// MaxDebounce is the longest debounce the kernel takes: a 32-bit count of
// microseconds.
const MaxDebounce = time.Duration(1<<32-1) * time.Microsecond

// MaxBuffer is the most events the kernel buffers for one line
// (GPIO_V2_LINES_MAX × 16); it caps a larger request to it.
const MaxBuffer = 64 * 16

// Config is how a line is requested.
type Config struct {
	Edge Edge
	Bias Bias
	// Debounce asks the kernel to report an edge only once the line has
	// held its new level this long (the uAPI's debounce attribute), so a
	// glitch shorter than it is no edge at all. It is rounded up to whole
	// microseconds; 0 turns it off. Where the chip has no debounce of its
	// own (a Raspberry Pi's has none), the kernel debounces in software,
	// on a timer counted in jiffies: the hold is then rounded up to the
	// next tick (4 ms at HZ=250), and the edge is stamped when the hold
	// ends rather than when the line moved.
	Debounce time.Duration
	// Consumer labels the line for gpioinfo; at most 31 bytes.
	Consumer string
	// Buffer is how many events the kernel keeps for a reader that is
	// behind, before it drops the oldest; 0: its default (16). At most
	// MaxBuffer. The kernel rounds it up to a power of two.
	Buffer int
}

// Event is one edge as the kernel reported it.
type Event struct {
	// Time is when the kernel saw the edge, on CLOCK_MONOTONIC (the time
	// since boot, not counting suspend); see Source.Now.
	Time time.Duration
	// Rising is true for a low-to-high transition.
	Rising bool
	// Offset is the line's offset on its chip.
	Offset uint32
	// Seqno numbers the events of the whole request; LineSeqno those of
	// this line, from 1. An event that is more than one past the previous
	// one's LineSeqno tells how many the kernel dropped in between.
	Seqno, LineSeqno uint32
}

// Source is a requested line's edges: a Line, or a fake in tests.
type Source interface {
	// Read waits for edges and fills events with those that came, at
	// least one, oldest first. After Close it returns ErrClosed. One
	// goroutine reads.
	Read(events []Event) (int, error)
	// Now is the time on the clock the events are stamped on.
	Now() time.Duration
	// Close releases the line; a second Close does nothing.
	Close() error
}

// ErrClosed is what Read returns once the line is closed.
var ErrClosed = errors.New("gpioevent: line closed")

// Dropped is how many events the kernel dropped between an event whose
// LineSeqno was prev (0: none read yet) and the next one, numbered next:
// the line's numbers go up by one per edge whether or not the event was
// kept. Numbers that do not go forward (a wrap of the 32-bit counter
// aside) drop nothing.
func Dropped(prev, next uint32) uint32 {
	gap := next - prev - 1 // wraps as the kernel's counter does
	if gap >= 1<<31 {
		return 0
	}
	return gap
}
