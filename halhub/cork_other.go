//go:build !unix

package halhub

import "errors"

// writeOnce is never called: without unix's non-blocking write(2) no
// connection is corked (rawWriter).
func (k *cork) writeOnce(uintptr) bool {
	k.wrote, k.werr = 0, errors.New("no non-blocking write on this system")
	return true
}
