package qemutest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestArchiveUnpackedByGNUCpio checks the newc writer against GNU cpio,
// which reads the format as the kernel does: files, their modes and the
// directories they need come out as written.
func TestArchiveUnpackedByGNUCpio(t *testing.T) {
	if _, err := exec.LookPath("cpio"); err != nil {
		t.Skip("needs GNU cpio (apt-get install cpio)")
	}
	files := []File{
		{Name: "gateway", Mode: 0o755, Data: []byte("\x7fELF odd length")},
		{Name: "etc/gateway/gateway.yaml", Mode: 0o644, Data: []byte("board: generic\n")},
		{Name: "etc/gateway/empty", Mode: 0o600},
		{Name: "etc/x", Mode: 0o640, Data: []byte("abcd")},
	}
	dir := t.TempDir()
	cmd := exec.Command("cpio", "-i", "-d", "--quiet", "--no-absolute-filenames")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(Archive(files))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cpio -i: %v\n%s", err, out)
	}
	for _, f := range files {
		p := filepath.Join(dir, f.Name)
		got, err := os.ReadFile(p)
		if err != nil {
			t.Errorf("%s: %v", f.Name, err)
			continue
		}
		if !bytes.Equal(got, f.Data) {
			t.Errorf("%s = %q, want %q", f.Name, got, f.Data)
		}
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode() != os.FileMode(f.Mode) {
			t.Errorf("%s mode %v, want %v", f.Name, st.Mode(), os.FileMode(f.Mode))
		}
	}
	for _, d := range []string{"etc", "etc/gateway"} {
		st, err := os.Stat(filepath.Join(dir, d))
		if err != nil || st.Mode() != os.ModeDir|0o755 {
			t.Errorf("directory %s: %v %v, want drwxr-xr-x", d, st.Mode(), err)
		}
	}
}

// TestWriteInitrd checks that the appended archive starts on a 4-byte
// boundary after the base, whatever the base's length.
func TestWriteInitrd(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 4, 5} {
		dir := t.TempDir()
		base, out := filepath.Join(dir, "base"), filepath.Join(dir, "initrd")
		if err := os.WriteFile(base, bytes.Repeat([]byte{0xAA}, n), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := WriteInitrd(base, out, []File{{Name: "gateway", Mode: 0o755, Data: []byte("x")}}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		at := (n + 3) / 4 * 4
		if !bytes.Equal(b[:n], bytes.Repeat([]byte{0xAA}, n)) || !bytes.Equal(b[n:at], make([]byte, at-n)) {
			t.Errorf("base of %d bytes: head %x, want the base then zeros to %d", n, b[:at], at)
		}
		if !bytes.HasPrefix(b[at:], []byte("070701")) {
			t.Errorf("base of %d bytes: archive at %d starts %q, want the newc magic", n, at, b[at:at+6])
		}
	}
}
