package halhub

import (
	"net"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// unixPeer returns the budget key of a Unix-socket peer, "uid:N" from
// SO_PEERCRED, and whether the uid is exempt from the socket's total
// (root, and the gateway's own user: both may read admin.token anyway).
// A peer whose credentials cannot be read shares the key "uid:?".
func unixPeer(c *net.UnixConn) (peer string, exempt bool) {
	raw, err := c.SyscallConn()
	if err != nil {
		return "uid:?", false
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil || credErr != nil {
		return "uid:?", false
	}
	return "uid:" + strconv.FormatUint(uint64(cred.Uid), 10), cred.Uid == 0 || int(cred.Uid) == os.Geteuid()
}
