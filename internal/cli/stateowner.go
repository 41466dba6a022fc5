//go:build unix

package cli

import (
	"fmt"
	"os"
	"syscall"
)

// asStateOwner makes a command that writes the state directory (token add
// and revoke, adapter install and remove) run as the directory's owner
// when it is started as root for a directory that another user owns — the
// service's user. The files it creates (tokens.json, audit segments, an
// installed adapter) then belong to that user, and the running gateway
// can read them: `sudo gateway token add` just works. Go applies the new
// credentials to every thread of the process.
//
// Started by anyone else, or for a root-owned directory, it does nothing.
func asStateOwner(dir string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil // the command reports the missing directory itself
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Uid == 0 {
		return nil
	}
	if err := syscall.Setgroups(nil); err != nil {
		return fmt.Errorf("become the owner of %s: drop groups: %w", dir, err)
	}
	if err := syscall.Setgid(int(st.Gid)); err != nil {
		return fmt.Errorf("become the owner of %s: gid %d: %w", dir, st.Gid, err)
	}
	if err := syscall.Setuid(int(st.Uid)); err != nil {
		return fmt.Errorf("become the owner of %s: uid %d: %w", dir, st.Uid, err)
	}
	return nil
}
