package modbus

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"
)

// TCP is a Transport over one TCP connection (Modbus Messaging on TCP/IP
// Implementation Guide V1.0b): each request has an MBAP header with a
// transaction id, and its reply must carry the same. A reply of an
// earlier transaction (one that timed out or was cancelled) is read and
// dropped.
type TCP struct {
	conn net.Conn

	mu     sync.Mutex // one request at a time; guards the rest
	tid    uint16     // the last transaction id sent
	buf    []byte     // bytes received and not yet taken: part of the next ADU
	broken error      // set when the stream lost its framing
}

// mbapLen is the MBAP header's length: transaction id, protocol id,
// length, unit id.
const mbapLen = 7

// DialTCP connects to a Modbus TCP server at addr ("host:port"). ctx
// bounds the connect.
func DialTCP(ctx context.Context, addr string) (*TCP, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", addr, err)
	}
	return NewTCP(conn), nil
}

// NewTCP returns a TCP transport on conn, a connection to a Modbus TCP
// server. Close closes conn.
func NewTCP(conn net.Conn) *TCP {
	return &TCP{conn: conn}
}

// Close closes the connection; a request in flight ends with a link
// error.
func (t *TCP) Close() error { return t.conn.Close() }

// Do sends pdu to unit and awaits the reply of the same transaction.
func (t *TCP) Do(ctx context.Context, unit byte, pdu []byte) ([]byte, error) {
	if err := checkRequest(pdu); err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.broken != nil {
		return nil, t.broken
	}
	if err := ctx.Err(); err != nil {
		return nil, doneErr(ctx, "not sent")
	}
	deadline, _ := ctx.Deadline()
	if err := t.conn.SetDeadline(deadline); err != nil {
		return nil, fmt.Errorf("set deadline: %w", err)
	}
	// A cancel sets a deadline of now, which ends a read or write at
	// once; stop waits for that to be done before the next request sets
	// its own.
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		t.conn.SetDeadline(time.Now())
		close(fired)
	})
	defer func() {
		if !stop() {
			<-fired
		}
	}()
	t.tid++
	adu := make([]byte, mbapLen, mbapLen+len(pdu))
	binary.BigEndian.PutUint16(adu[0:], t.tid)
	binary.BigEndian.PutUint16(adu[4:], uint16(1+len(pdu)))
	adu[6] = unit
	adu = append(adu, pdu...)
	if _, err := t.conn.Write(adu); err != nil {
		// A partly written request leaves the server's stream cut.
		return nil, t.fail(ctx, fmt.Errorf("write: %w", err))
	}
	return t.await(ctx, unit, pdu[0])
}

// await reads ADUs until the one of the current transaction, dropping
// those of earlier ones.
func (t *TCP) await(ctx context.Context, unit, fc byte) ([]byte, error) {
	for {
		tid, u, pdu, err := t.next(ctx)
		if err != nil {
			return nil, err
		}
		if tid != t.tid {
			continue // the late reply of a request that timed out
		}
		if u != unit {
			return nil, fmt.Errorf("%w: unit %d answered a request to unit %d", ErrBadReply, u, unit)
		}
		return checkReply(fc, pdu)
	}
}

// next returns the next whole ADU of the stream, reading as needed. On
// a timeout what was read stays in t.buf: the rest of it will come and
// be dropped as a stale transaction.
func (t *TCP) next(ctx context.Context) (tid uint16, unit byte, pdu []byte, err error) {
	for {
		if len(t.buf) >= mbapLen {
			tid, proto, n := binary.BigEndian.Uint16(t.buf), binary.BigEndian.Uint16(t.buf[2:]), int(binary.BigEndian.Uint16(t.buf[4:]))
			if proto != 0 || n < 2 || n > 1+MaxPDU {
				t.broken = fmt.Errorf("lost the stream's framing: MBAP header % x (protocol %d, length %d)", t.buf[:mbapLen], proto, n)
				t.conn.Close()
				return 0, 0, nil, t.broken
			}
			if len(t.buf) >= mbapLen-1+n {
				adu := t.buf[:mbapLen-1+n]
				pdu = append([]byte(nil), adu[mbapLen:]...)
				t.buf = append(t.buf[:0], t.buf[len(adu):]...)
				return tid, adu[6], pdu, nil
			}
		}
		var chunk [260]byte
		k, err := t.conn.Read(chunk[:])
		t.buf = append(t.buf, chunk[:k]...)
		if err != nil {
			return 0, 0, nil, t.readErr(ctx, err)
		}
	}
}

// readErr turns a read's error into a timeout, a cancel or a link error.
func (t *TCP) readErr(ctx context.Context, err error) error {
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("read: %w", err)
	}
	if len(t.buf) == 0 {
		return doneErr(ctx, "no answer")
	}
	return doneErr(ctx, fmt.Sprintf("%d bytes then silence: %s", len(t.buf), hexHead(t.buf, 32)))
}

// fail returns the error of a failed write: a deadline or cancel that
// stopped it, or the link's failure. Either way the server may have a
// partial request, so the connection is done with.
func (t *TCP) fail(ctx context.Context, err error) error {
	t.broken = fmt.Errorf("an earlier request was cut short: %w", err)
	t.conn.Close()
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return doneErr(ctx, "request cut short")
	}
	return err
}
