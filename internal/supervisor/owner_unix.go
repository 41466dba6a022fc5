//go:build unix

package supervisor

import (
	"os"
	"syscall"
)

// ownedBy reports whether fi belongs to the user and group uid and gid.
func ownedBy(fi os.FileInfo, uid, gid uint32) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Uid == uid && st.Gid == gid
}
