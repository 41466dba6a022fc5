//go:build unix

package main

import (
	"io"
	"sync"
)

// wire is the adapter's standard output. Every write is one call under
// one lock, so that the protocol loop, delayed answers and the script
// never interleave inside a line. Silent, it swallows everything.
type wire struct {
	mu     sync.Mutex
	w      io.Writer
	silent bool
}

// line writes b and a '\n' as one write.
func (w *wire) line(b []byte) error {
	buf := make([]byte, 0, len(b)+1)
	return w.raw(append(append(buf, b...), '\n'))
}

// raw writes b exactly as given: whole lines, or deliberately broken bytes.
func (w *wire) raw(b []byte) error {
	if w.silent {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err := w.w.Write(b)
	return err
}
