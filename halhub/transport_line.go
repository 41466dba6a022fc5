package halhub

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"time"

	"gateway/jsonrpc"
)

// lineTransport carries one message per '\n'-ended line: the TCP and Unix
// socket transports.
type lineTransport struct {
	c    net.Conn
	lr   *jsonrpc.LineReader
	bw   *bufio.Writer
	addr string
	cut  atomic.Bool // a line too long ended the stream: close lingers
}

// lingerAfterCut is how long a connection cut for a line too long is
// still read, and what comes discarded, once the answer is written:
// closing a socket with unread data resets it, and the client would lose
// the answer.
const lingerAfterCut = time.Second

// ServeLines accepts TCP or Unix connections on ln until ln is closed. A
// connection past the limits is closed at accept.
func (h *Hub) ServeLines(ln net.Listener) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		tr := &lineTransport{
			c:    c,
			lr:   jsonrpc.NewLineReader(c, h.opt.Limits.MaxMessageBytes),
			bw:   bufio.NewWriterSize(c, 16<<10),
			addr: hostOf(c.RemoteAddr().String()),
		}
		s := newSession(h, tr, "")
		if !h.admit(s) {
			c.Close()
			continue
		}
		go s.serve()
	}
}

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
		// The reader reuses its buffer; the message outlives the next read.
		return append([]byte(nil), line...), nil
	}
}

func (t *lineTransport) write(_ context.Context, msgs [][]byte) error {
	for _, m := range msgs {
		t.bw.Write(m)
		t.bw.WriteByte('\n')
	}
	return t.bw.Flush()
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
