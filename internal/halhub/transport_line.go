package halhub

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openhal/gateway/jsonrpc"
)

// lineTransport carries one message per '\n'-ended line: the TCP and Unix
// socket transports.
type lineTransport struct {
	c       net.Conn
	lr      *jsonrpc.LineReader
	writers *sync.Pool // the Hub's lineWriters
	addr    string
	cut     atomic.Bool // a line too long ended the stream: close lingers

	// tryWrite's, used under the queue's claim or take only
	// (trywrite_unix.go): rw.raw is the socket, nil for none (TLS, a
	// pipe); line is the batch's buffer when the caller gives none.
	rw   rawWrite
	line []byte
}

// lingerAfterCut is how long a connection cut for a line too long is
// still read, and what comes discarded, once the answer is written:
// closing a socket with unread data resets it, and the client would lose
// the answer.
const lingerAfterCut = time.Second

// ServeLines accepts TCP or Unix connections on ln until ln is closed. A
// listener that Guard did not return is guarded here, named for its
// network: connections past the budget of those not yet authenticated are
// closed at accept, and errors at accept that are not the peer's back off
// instead of ending the listener.
func (h *Hub) ServeLines(ln net.Listener) error {
	if _, ok := ln.(*guardedListener); !ok {
		ln = h.Guard(ln.Addr().Network(), ln, nil)
	}
	defer ln.Close() // a guarded listener leaves /healthz's list
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		g := guardedOf(c) // a guarded listener's connection is one, or runs over one
		h.serveLine(c, g.peer, g.ticket)
	}
}

// serveLine serves c, one message per line, as a session of peer (the
// remote address failed tokens count against) holding tk (nil: none
// of the budget of connections not yet authenticated).
func (h *Hub) serveLine(c net.Conn, peer string, tk *ticket) {
	tr := &lineTransport{
		c:       c,
		lr:      jsonrpc.NewLineReader(c, h.opt.Limits.InitMessageBytes),
		writers: h.lineWriters,
		addr:    peer,
	}
	s := newSession(h, tr, "")
	if tr.rw.raw = rawWriter(c); tr.rw.raw != nil {
		s.useTryWriter(tr)
	}
	s.ticket = tk
	h.register(s)
	go s.serve()
}

// raiseLimit lets an authenticated peer send lines up to maxBytes.
func (t *lineTransport) raiseLimit(maxBytes int) { t.lr.SetMax(maxBytes) }

// read returns the next line. A line over the limit is reported as soon
// as the limit passes, without waiting for its newline, which a peer may
// never send (spec §2: the Hub answers too_large and closes).
func (t *lineTransport) read(context.Context) ([]byte, error) {
	for {
		line, err := t.lr.NextStrict()
		if errors.Is(err, jsonrpc.ErrLineTooLong) {
			t.cut.Store(true)
			return nil, errTooLarge
		}
		if err != nil {
			return nil, err
		}
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		if len(line) == 0 {
			continue // a blank line (a person at a terminal) is not a message
		}
		// Valid until the next read, which is all the session needs: it
		// handles a message (decoding copies what it keeps) before it
		// reads on. A copy would cost a whole message per message.
		return line, nil
	}
}

// newLineWriters returns the pool of the buffers of the line transports'
// writes in progress: a connection borrows one for a batch only, so that
// an idle connection holds none (16 KiB each would be a third of what an
// idle connection costs, BenchmarkIdleConnection).
func newLineWriters() *sync.Pool {
	return &sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 16<<10) }}
}

func (t *lineTransport) write(_ context.Context, msgs [][]byte) error {
	bw := t.writers.Get().(*bufio.Writer)
	bw.Reset(t.c)
	for _, m := range msgs {
		bw.Write(m)
		bw.WriteByte('\n')
	}
	err := bw.Flush()
	bw.Reset(nil) // hold no connection in the pool
	t.writers.Put(bw)
	return err
}

// close closes the connection. After a line too long it first ends the
// sending side, then reads and discards what the client still sends for
// lingerAfterCut before closing, in the background.
func (t *lineTransport) close() error {
	if !t.cut.Load() {
		return t.c.Close()
	}
	if cw, ok := t.c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	go func() {
		t.c.SetReadDeadline(time.Now().Add(lingerAfterCut))
		io.Copy(io.Discard, t.c)
		t.c.Close()
	}()
	return nil
}

// shutdown closes: every answer has been written by now, and a line
// transport has no close message of its own.
func (t *lineTransport) shutdown() error { return t.c.Close() }
func (t *lineTransport) remote() string  { return t.addr }
