package halhub

import (
	"errors"
	"sync"
	"sync/atomic"
	"syscall"
)

// cork lets a WebSocket connection be written by the goroutine that made
// a message without ever waiting for the client, as a line transport is
// (tryWriter): the library (coder/websocket) has no write that gives up
// instead of waiting, and writes and flushes every message on its own.
//
// While corked, the guarded connection under the library keeps what the
// library writes; uncorking writes it all with one write(2) on the
// non-blocking socket. What the socket does not take stays pending, and
// goes out before anything written after it: the connection's writer
// writes it (flush), waiting for the client as a writer may. A batch of
// messages thus costs one write(2), not one each.
//
// The library also writes for itself — a pong, from the goroutine that
// reads, inside its read — through the same connection: corked, the pong
// joins the batch in its place (the library writes one whole frame at a
// time); otherwise it goes after what is pending.
type cork struct {
	used atomic.Bool // Write looks at mu only once set (useCork)

	mu      sync.Mutex
	on      bool
	buf     []byte // gathered while on
	pending []byte // what the socket did not take of the last batch

	rw rawWrite // the socket's write that never waits, under mu
}

// useCork makes c's writes go through its cork, raw being c's socket; it
// is called before anything else writes to c.
func (c *guardedConn) useCork(raw syscall.RawConn) {
	c.cork.rw.raw = raw
	c.cork.used.Store(true)
}

// Write writes p after what is pending, or keeps it while c is corked.
func (c *guardedConn) Write(p []byte) (int, error) {
	if !c.cork.used.Load() {
		return c.Conn.Write(p)
	}
	c.cork.mu.Lock()
	defer c.cork.mu.Unlock()
	if c.cork.on {
		c.cork.buf = append(c.cork.buf, p...)
		return len(p), nil
	}
	if err := c.flushLocked(); err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}

// flush writes what is pending, waiting for the client to take it.
func (c *guardedConn) flush() error {
	c.cork.mu.Lock()
	defer c.cork.mu.Unlock()
	return c.flushLocked()
}

func (c *guardedConn) flushLocked() error {
	if len(c.cork.pending) == 0 {
		return nil
	}
	_, err := c.Conn.Write(c.cork.pending)
	c.cork.pending = c.cork.pending[:0]
	return err
}

// idle reports whether nothing is pending and no write is under way:
// false when the cork is held by a write that may wait (a flush).
func (c *guardedConn) idle() bool {
	if !c.cork.mu.TryLock() {
		return false
	}
	defer c.cork.mu.Unlock()
	return len(c.cork.pending) == 0
}

// corked runs write with c's writes gathered, then writes them with one
// write(2) that never waits. all reports everything written; otherwise
// the rest is pending, for flush. Whoever calls it holds the connection's
// queue (outQueue.claim or take), so that nothing else of the Hub's
// writes meanwhile; only the library's own pong can, and it never waits
// with the cork held unless something is pending, which the queue's
// writer is then flushing: the caller's queue would not be free.
func (c *guardedConn) corked(write func() error, scratch *[]byte) (all bool, err error) {
	c.cork.mu.Lock()
	if len(c.cork.pending) > 0 {
		c.cork.mu.Unlock()
		return false, errors.New("corked write with a batch still pending")
	}
	c.cork.on, c.cork.buf = true, (*scratch)[:0]
	c.cork.mu.Unlock()
	err = write()
	c.cork.mu.Lock()
	defer c.cork.mu.Unlock()
	c.cork.on = false
	*scratch, c.cork.buf = c.cork.buf, nil
	if err != nil {
		return false, err
	}
	if len(*scratch) == 0 {
		return true, nil
	}
	n, err := c.cork.rw.now(*scratch)
	if err != nil {
		return false, err
	}
	if n == len(*scratch) {
		return true, nil
	}
	c.cork.pending = append(c.cork.pending[:0], (*scratch)[n:]...)
	return false, nil
}
