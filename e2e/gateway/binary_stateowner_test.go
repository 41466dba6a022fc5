package gateway_test

import (
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// Run as root for a state directory that the service's user owns, the
// commands that write it act as that user: the files they make stay
// readable by the gateway (`sudo gateway token add`).
func TestBinaryCommandsAsStateOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: it is about commands started with sudo (CI runs as root)")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	gid, _ := strconv.Atoi(nobody.Gid)
	root := t.TempDir()
	for _, d := range []string{filepath.Dir(root), root} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(root, "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Fatal(err)
	}
	gwOK(t, "token", "add", "--init", "--state-dir", dir, "--name", "agent", "--kind", "agent", "--scope", "read")
	for _, f := range []string{"tokens.json", "audit"} {
		fi, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != uid {
			t.Fatalf("%s is owned by uid %d, want the state directory's owner %d", f, st.Uid, uid)
		}
	}
}
