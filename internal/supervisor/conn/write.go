package conn

import (
	"io"
	"sync"
)

// writer is the one goroutine that writes to the adapter's standard input,
// so that frames never interleave and a writer blocked on an adapter that
// does not read holds up nobody else: every wait on a frame (a ping, an
// event, shutdown) is bounded by its own timer, not by the write.
type writer struct {
	w      io.Writer
	mu     sync.Mutex
	queue  []outFrame
	closed bool
	wake   chan struct{}
	stop   chan struct{}
}

// outFrame is one frame to write and, when set, a channel closed once it
// is written.
type outFrame struct {
	b       []byte
	written chan struct{}
}

func newWriter(w io.Writer) *writer {
	return &writer{w: w, wake: make(chan struct{}, 1), stop: make(chan struct{})}
}

// send queues a frame (without its newline). It reports false when the
// writer has stopped.
func (w *writer) send(b []byte, written chan struct{}) bool {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return false
	}
	w.queue = append(w.queue, outFrame{b: b, written: written})
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return true
}

// close stops the writer: no frame is queued after it, and the frames
// queued before it are still written, in order, before the writer stops.
// A frame queued just before the connection ends is often the one that
// matters most (the cancel of the third missed ping, a reply the adapter
// waits for), and whoever queued it did so while the connection lived.
// The drain cannot hold anyone up: a write blocked on an adapter that
// does not read returns once the process is killed and its pipe closes,
// and nobody waits for the writer to stop.
func (w *writer) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.closed = true
		close(w.stop)
	}
}

// run writes queued frames in batches, one write per batch, until the
// queue is drained after close, or a write error, which ends the
// connection: an adapter that closed its standard input can no longer be
// spoken to.
func (w *writer) run(c *Conn) {
	var buf []byte
	var batch []outFrame
	for {
		stopping := false
		select {
		case <-w.stop:
			stopping = true
		case <-w.wake:
		}
		w.mu.Lock()
		batch, w.queue = w.queue, batch[:0]
		w.mu.Unlock()
		buf = buf[:0]
		for _, f := range batch {
			buf = append(append(buf, f.b...), '\n')
		}
		if len(buf) > 0 {
			if _, err := w.w.Write(buf); err != nil {
				c.end(&EndError{Reason: "write_error", Detail: err.Error()})
				return
			}
		}
		for i, f := range batch {
			if f.written != nil {
				close(f.written)
			}
			batch[i] = outFrame{}
		}
		if stopping {
			return // send queues nothing once closed: this was the last
		}
	}
}
