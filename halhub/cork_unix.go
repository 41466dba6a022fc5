//go:build unix

package halhub

import "syscall"

// writeOnce is writeNow's write(2), which RawConn.Write runs with the
// socket locked for writing.
func (k *cork) writeOnce(fd uintptr) bool {
	k.wrote, k.werr = syscall.Write(int(fd), k.out)
	return true // never wait for the socket to have room
}
