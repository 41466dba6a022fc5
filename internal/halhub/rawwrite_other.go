//go:build !unix

package halhub

import "errors"

// writeOnce is never called: without unix's non-blocking write(2) no
// transport has a raw socket (rawWriter).
func (w *rawWrite) writeOnce(uintptr) bool {
	w.wrote, w.werr = 0, errors.New("no non-blocking write on this system")
	return true
}
