package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

func hashOf(t *testing.T, dir string) string {
	t.Helper()
	h, err := Hash(dir)
	if err != nil {
		t.Fatalf("Hash: %v", err)
	}
	return h
}

func TestHashStable(t *testing.T) {
	// The same content created in different orders hashes the same; the
	// walk order ("a/" before "a.txt" in a directory listing is not
	// bytewise order) does not matter either.
	a, b := t.TempDir(), t.TempDir()
	writeFile(t, a, "a.txt", "1", 0o644)
	writeFile(t, a, "a/b", "2", 0o755)
	writeFile(t, a, "z", "", 0o644)
	writeFile(t, b, "z", "", 0o600)
	writeFile(t, b, "a/b", "2", 0o700)
	writeFile(t, b, "a.txt", "1", 0o664)
	if err := os.Mkdir(filepath.Join(b, "empty"), 0o700); err != nil {
		t.Fatal(err)
	}
	ha, hb := hashOf(t, a), hashOf(t, b)
	if ha != hb {
		t.Errorf("same content, different hashes: %s %s", ha, hb)
	}
	if again := hashOf(t, a); again != ha {
		t.Errorf("hash changed between runs: %s %s", ha, again)
	}
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(ha) {
		t.Errorf("hash %q is not hex SHA-256", ha)
	}
}

func TestHashChanges(t *testing.T) {
	base := func(t *testing.T) string {
		dir := t.TempDir()
		writeFile(t, dir, "run", "#!/bin/sh\nexec ./lib/code\n", 0o755)
		writeFile(t, dir, "lib/code", "payload", 0o644)
		return dir
	}
	want := hashOf(t, base(t))
	tests := []struct {
		name   string
		change func(t *testing.T, dir string)
	}{
		{"a byte", func(t *testing.T, dir string) { writeFile(t, dir, "lib/code", "paylaad", 0o644) }},
		{"a byte in the wrapper", func(t *testing.T, dir string) { writeFile(t, dir, "run", "#!/bin/sh\nexec ./lib/cod\n", 0o755) }},
		{"a rename", func(t *testing.T, dir string) {
			if err := os.Rename(filepath.Join(dir, "lib/code"), filepath.Join(dir, "lib/cod")); err != nil {
				t.Fatal(err)
			}
		}},
		{"a move across folders", func(t *testing.T, dir string) {
			if err := os.Rename(filepath.Join(dir, "lib/code"), filepath.Join(dir, "code")); err != nil {
				t.Fatal(err)
			}
		}},
		{"an added file", func(t *testing.T, dir string) { writeFile(t, dir, "lib/extra", "", 0o644) }},
		{"a removed file", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "lib/code")) }},
		{"chmod -x", func(t *testing.T, dir string) { os.Chmod(filepath.Join(dir, "run"), 0o644) }},
		{"chmod +x", func(t *testing.T, dir string) { os.Chmod(filepath.Join(dir, "lib/code"), 0o744) }},
		{"bytes moved between files", func(t *testing.T, dir string) {
			writeFile(t, dir, "run", "#!/bin/sh\nexec ./lib/code\np", 0o755)
			writeFile(t, dir, "lib/code", "ayload", 0o644)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := base(t)
			tt.change(t, dir)
			if got := hashOf(t, dir); got == want {
				t.Errorf("hash unchanged after %s", tt.name)
			}
		})
	}
	t.Run("directory mode ignored", func(t *testing.T) {
		dir := base(t)
		if err := os.Chmod(filepath.Join(dir, "lib"), 0o700); err != nil {
			t.Fatal(err)
		}
		if got := hashOf(t, dir); got != want {
			t.Errorf("a directory's mode changed the hash")
		}
	})
}

func TestHashRefusesSymlinks(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "run", "x", 0o755)
	if err := os.Symlink("run", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := Hash(dir); !errors.Is(err, ErrNotRegular) {
		t.Errorf("Hash with a symlink = %v, want ErrNotRegular", err)
	}
}
