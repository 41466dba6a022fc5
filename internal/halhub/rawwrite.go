package halhub

import (
	"errors"
	"syscall"
)

// rawWrite is one write(2) on a non-blocking socket that never waits for
// room: the socket takes what it has room for now, and the caller deals
// with the rest (the line transport's tryWrite, a WebSocket's cork). It
// is used by one goroutine at a time (the queue's claim or take).
type rawWrite struct {
	raw   syscall.RawConn // the socket
	out   []byte          // what writeOnce writes
	wrote int
	werr  error
	write func(fd uintptr) bool // writeOnce, made once: a method value allocates
}

// now writes b and returns how much the socket took (EAGAIN: nothing).
func (w *rawWrite) now(b []byte) (int, error) {
	if w.write == nil {
		w.write = w.writeOnce
	}
	w.out = b
	err := w.raw.Write(w.write)
	n, werr := w.wrote, w.werr
	w.out = nil
	if err == nil && werr != nil && !errors.Is(werr, syscall.EAGAIN) && !errors.Is(werr, syscall.EINTR) {
		err = werr
	}
	if err != nil {
		return 0, err
	}
	return max(n, 0), nil
}
