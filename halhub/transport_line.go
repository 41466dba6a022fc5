package halhub

import (
	"bufio"
	"context"
	"errors"
	"net"

	"gateway/jsonrpc"
)

// lineTransport carries one message per '\n'-ended line: the TCP and Unix
// socket transports.
type lineTransport struct {
	c    net.Conn
	lr   *jsonrpc.LineReader
	bw   *bufio.Writer
	addr string
}

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
		tr := &lineTransport{
			c:    c,
			lr:   jsonrpc.NewLineReader(c, h.opt.Limits.InitMessageBytes),
			bw:   bufio.NewWriterSize(c, 16<<10),
			addr: g.peer,
		}
		s := newSession(h, tr, "")
		s.ticket = g.ticket
		h.register(s)
		go s.serve()
	}
}

// raiseLimit lets an authenticated peer send lines up to maxBytes.
func (t *lineTransport) raiseLimit(maxBytes int) { t.lr.SetMax(maxBytes) }

func (t *lineTransport) read(context.Context) ([]byte, error) {
	for {
		line, err := t.lr.Next()
		if errors.Is(err, jsonrpc.ErrLineTooLong) {
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

func (t *lineTransport) close() error { return t.c.Close() }

// shutdown closes: every answer has been written by now, and a line
// transport has no close message of its own.
func (t *lineTransport) shutdown() error { return t.c.Close() }
func (t *lineTransport) remote() string  { return t.addr }
