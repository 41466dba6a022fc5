package adapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/openhal/gateway/adapterproto"
	"github.com/openhal/gateway/jsonrpc"
)

// ErrTooLong is the error of a frame longer than the daemon's
// limits.max_line: the daemon would discard it and count a strike, so it
// is not written at all.
var ErrTooLong = errors.New("frame longer than limits.max_line")

// writer writes whole frames, one at a time, so that frames from
// concurrent callbacks never interleave. The first write error is kept:
// standard output is the only way to the daemon, and Run ends on it.
type writer struct {
	w       io.Writer
	mu      sync.Mutex
	ready   bool // initialize has been answered: the adapter may speak
	maxLine int
	buf     []byte
	err     error
	broken  chan struct{} // closed with the first write error
}

func newWriter(w io.Writer) *writer {
	return &writer{w: w, maxLine: adapterproto.DefaultLimits().MaxLine, broken: make(chan struct{})}
}

// isReady reports whether initialize has been answered; under the lock,
// so that whoever has read the answer sees it.
func (w *writer) isReady() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ready
}

func (w *writer) setMaxLine(n int) {
	w.mu.Lock()
	w.maxLine = n
	w.mu.Unlock()
}

// write writes frame and its '\n' in one Write. A frame of the adapter's
// own (a call or notification) needs the adapter to be ready; answers do
// not. ready is checked under the lock that the answer to initialize
// sets it under, so that whoever has seen that answer may send.
func (w *writer) write(frame []byte, own bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if own && !w.ready {
		return ErrNotReady
	}
	return w.writeLocked(frame)
}

// writeReady writes the answer to initialize and makes the adapter ready.
func (w *writer) writeReady(frame []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.writeLocked(frame); err != nil {
		return err
	}
	w.ready = true
	return nil
}

func (w *writer) writeLocked(frame []byte) error {
	if w.err != nil {
		return w.err
	}
	if len(frame) > w.maxLine {
		return fmt.Errorf("%d bytes: %w (%d)", len(frame), ErrTooLong, w.maxLine)
	}
	w.buf = append(append(w.buf[:0], frame...), '\n')
	if _, err := w.w.Write(w.buf); err != nil {
		w.err = fmt.Errorf("write to daemon: %w", err)
		close(w.broken)
		return w.err
	}
	return nil
}

// failure returns the write error that broke the connection, or nil.
func (w *writer) failure() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Call sends the daemon a request and waits for its answer, which it
// decodes into result (a pointer; nil ignores it). params nil sends {}.
// Request ids count from 1 and are never reused. An error answer is
// returned as a wrapped *Error (errors.As finds it). When ctx ends first,
// Call returns ctx's error and the daemon's late answer is dropped.
// Calls fail with ErrNotReady before initialize is answered and with
// ErrClosed once Run is ending.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	if !c.out.isReady() { // before taking an id, so that the first one sent is 1
		return fmt.Errorf("call %s: %w", method, ErrNotReady)
	}
	if params == nil {
		params = adapterproto.Empty{}
	}
	id := c.nextID.Add(1)
	frame, err := jsonrpc.AppendRequest(nil, jsonrpc.IntID(id), method, params)
	if err != nil {
		return fmt.Errorf("call %s: %w", method, err)
	}
	answer := make(chan jsonrpc.Message, 1)
	c.mu.Lock()
	c.calls[id] = answer
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.calls, id)
		c.mu.Unlock()
	}()
	select {
	case <-c.closing:
		return fmt.Errorf("call %s: %w", method, ErrClosed)
	default:
	}
	if err := c.out.write(frame, true); err != nil {
		return fmt.Errorf("call %s: %w", method, err)
	}
	select {
	case m := <-answer:
		if m.Error != nil {
			return fmt.Errorf("call %s: %w", method, m.Error)
		}
		if result == nil {
			return nil
		}
		if err := json.Unmarshal(m.Result, result); err != nil {
			return fmt.Errorf("call %s: decode result: %w", method, err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("call %s: %w", method, ctx.Err())
	case <-c.closing:
		return fmt.Errorf("call %s: %w", method, ErrClosed)
	}
}

// Notify sends the daemon a notification; params nil sends none (read as
// {}). It fails with ErrNotReady before initialize is answered.
func (c *Conn) Notify(method string, params any) error {
	frame, err := jsonrpc.AppendNotification(nil, method, params)
	if err != nil {
		return fmt.Errorf("notify %s: %w", method, err)
	}
	if err := c.out.write(frame, true); err != nil {
		return fmt.Errorf("notify %s: %w", method, err)
	}
	return nil
}
