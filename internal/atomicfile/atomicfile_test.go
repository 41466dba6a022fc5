package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	for _, content := range []string{"one", "two, longer", "3"} {
		if err := Write(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil || string(b) != content {
			t.Fatalf("read %q, %v; want %q", b, err, content)
		}
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", fi.Mode(), err)
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 1 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

func TestWritePerm(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cert.pem")
	if err := Write(path, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
}

func TestWriteIntoMissingDir(t *testing.T) {
	err := Write(filepath.Join(t.TempDir(), "nope", "f"), []byte("x"), 0o600)
	if err == nil {
		t.Fatal("no error for a missing directory")
	}
}
