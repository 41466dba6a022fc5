//go:build unix

package halhub

import "syscall"

// writeOnce is now's write(2), which RawConn.Write runs with the socket
// locked for writing; the result is left in w.wrote and w.werr.
func (w *rawWrite) writeOnce(fd uintptr) bool {
	w.wrote, w.werr = syscall.Write(int(fd), w.out)
	return true // never wait for the socket to have room
}
