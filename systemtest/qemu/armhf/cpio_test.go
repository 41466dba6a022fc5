package armhf_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestNewc checks the initramfs writer against GNU cpio, which reads the
// same "newc" format as the kernel: files, their modes and the
// directories they need come out as written. Runs without QEMU.
func TestNewc(t *testing.T) {
	if _, err := exec.LookPath("cpio"); err != nil {
		t.Skip("needs cpio (apt-get install cpio)")
	}
	files := []cpioFile{
		{name: "gateway", mode: 0o755, data: []byte("\x7fELF odd length")},
		{name: "etc/gateway/gateway.yaml", mode: 0o644, data: []byte("board: generic\n")},
		{name: "etc/empty", mode: 0o600, data: nil},
	}
	dir := t.TempDir()
	cmd := exec.Command("cpio", "-i", "-d", "--quiet")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(newc(files))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cpio -i: %v\n%s", err, out)
	}
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		got, err := os.ReadFile(p)
		if err != nil {
			t.Errorf("%s: %v", f.name, err)
			continue
		}
		if !bytes.Equal(got, f.data) {
			t.Errorf("%s = %q, want %q", f.name, got, f.data)
		}
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != os.FileMode(f.mode) {
			t.Errorf("%s mode %v, want %v", f.name, st.Mode().Perm(), os.FileMode(f.mode))
		}
	}
}
