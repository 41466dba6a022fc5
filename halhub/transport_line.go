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
		// Valid until the next read, which is all the session needs: it
		// handles a message (decoding copies what it keeps) before it
		// reads on. A copy would cost a whole message per message.
		return line, nil
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
