package manifest

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// secretBytes is the content of a file the installer can read and the
// folder's owner cannot: it must never reach an installed folder.
const secretBytes = "ADMIN-TOKEN-5f1e0c9a7b"

func writeSecret(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "admin.token")
	if err := os.WriteFile(p, []byte(secretBytes), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkNoSecret fails when dir holds a symlink or the secret's bytes.
func checkNoSecret(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			t.Errorf("%s is a symlink", p)
		}
		if d.Type().IsRegular() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(secretBytes)) {
				t.Errorf("%s holds the secret", p)
			}
		}
		return nil
	})
}

// The hash streamed during the copy is Hash of the installed folder, in
// the order Hash sorts (where a directory's walk order is not bytewise).
func TestCopyHashIsHashOfCopy(t *testing.T) {
	src := writeFolder(t, validManifest)
	for _, f := range []string{"a.txt", "a/b", "a-b", "a0", "a/c/d", "b/x.sh"} {
		writeFile(t, src, f, "content of "+f, 0o644)
	}
	os.Chmod(filepath.Join(src, "b/x.sh"), 0o700)
	if err := os.MkdirAll(filepath.Join(src, "empty/dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	rec, err := Install(src, state)
	if err != nil {
		t.Fatal(err)
	}
	if got := hashOf(t, Dir(state, "notifier")); rec.Hash != got {
		t.Fatalf("recorded %s, the installed folder hashes to %s", rec.Hash, got)
	}
	if rec.Hash != hashOf(t, src) {
		t.Fatal("the copy does not hash as its source")
	}
	if fi, err := os.Stat(filepath.Join(Dir(state, "notifier"), "b/x.sh")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("installed b/x.sh: %v %v, want 0755", fi, err)
	}
}

// A folder over a limit is refused with an error naming it, and nothing
// is installed.
func TestInstallLimits(t *testing.T) {
	tests := []struct {
		name  string
		make  func(t *testing.T, dir string)
		words string
	}{
		{"bytes", func(t *testing.T, dir string) {
			f, err := os.Create(filepath.Join(dir, "big.bin"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Truncate(MaxFolderBytes + 1); err != nil { // sparse
				t.Fatal(err)
			}
		}, "more than 64 MiB (the limit)"},
		{"entries", func(t *testing.T, dir string) {
			for i := 0; i < MaxFolderEntries; i++ {
				if err := os.WriteFile(filepath.Join(dir, "f"+strconv.Itoa(i)), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}, "more than 4096 files and directories (the limit)"},
		{"depth", func(t *testing.T, dir string) {
			deep := filepath.Join(dir, strings.Repeat("d/", MaxFolderDepth+1))
			if err := os.MkdirAll(deep, 0o755); err != nil {
				t.Fatal(err)
			}
		}, "more than 32 directories deep (the limit)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := writeFolder(t, validManifest)
			tt.make(t, src)
			state := t.TempDir()
			_, err := Install(src, state)
			if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), tt.words) {
				t.Fatalf("Install = %v, want %v saying %q", err, ErrTooLarge, tt.words)
			}
			if recs, _ := List(state); len(recs) != 0 {
				t.Fatalf("installed %+v", recs)
			}
			if _, err := os.Stat(Dir(state, "notifier")); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("installed folder: %v", err)
			}
		})
	}
	// At the limits, it installs.
	src := writeFolder(t, validManifest)
	if err := os.MkdirAll(filepath.Join(src, strings.Repeat("d/", MaxFolderDepth)), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(src, t.TempDir()); err != nil {
		t.Fatalf("a folder %d directories deep: %v", MaxFolderDepth, err)
	}
}

// Between the listing of a directory and the open of an entry, the entry
// is replaced: every replacement is refused and nothing of what replaced
// it is copied. These are the interleavings a racer can only hit now and
// then, made certain.
func TestCopyEntryReplacedAfterListing(t *testing.T) {
	secret := writeSecret(t)
	tests := []struct {
		name    string
		entry   string
		replace func(t *testing.T, p string)
		want    error
	}{
		{"file by a symlink", "notifier.py", func(t *testing.T, p string) {
			swap(t, p, func(tmp string) error { return os.Symlink(secret, tmp) })
		}, ErrNotRegular},
		{"file by another file", "notifier.py", func(t *testing.T, p string) {
			swap(t, p, func(tmp string) error { return os.WriteFile(tmp, []byte("pwn"), 0o644) })
		}, ErrChanged},
		{"file by a FIFO", "notifier.py", func(t *testing.T, p string) {
			swap(t, p, func(tmp string) error { return unix.Mkfifo(tmp, 0o644) })
		}, ErrChanged},
		{"file grown", "notifier.py", func(t *testing.T, p string) {
			f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(secretBytes)
			f.Close()
		}, ErrChanged},
		{"file gone", "notifier.py", func(t *testing.T, p string) { os.Remove(p) }, ErrChanged},
		{"directory by a symlink", "bin", func(t *testing.T, p string) {
			if err := os.Rename(p, p+".old"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Dir(secret), p); err != nil {
				t.Fatal(err)
			}
		}, ErrNotRegular},
		{"directory by another", "bin", func(t *testing.T, p string) {
			if err := os.Rename(p, p+".old"); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}, ErrChanged},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := writeFolder(t, validManifest)
			dst := t.TempDir()
			fd, err := unix.Open(src, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			d := os.NewFile(uintptr(fd), src)
			defer d.Close()
			c := &treeCopy{h: sha256.New()}
			list, err := c.list(d, fd, "")
			if err != nil {
				t.Fatal(err)
			}
			var e *entry
			for i := range list {
				if list[i].name == tt.entry {
					e = &list[i]
				}
			}
			if e == nil {
				t.Fatalf("%s not listed", tt.entry)
			}
			tt.replace(t, filepath.Join(src, tt.entry))
			to := filepath.Join(dst, tt.entry)
			if e.isDir() {
				err = c.subdir(fd, *e, to, tt.entry, 1)
			} else {
				err = c.file(fd, *e, to, tt.entry)
			}
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), `"`+tt.entry+`"`) {
				t.Fatalf("copy = %v, want %v naming %q", err, tt.want, tt.entry)
			}
			checkNoSecret(t, dst)
		})
	}
}

// swap replaces p at once (rename) by what mk makes at a temporary path.
func swap(t *testing.T, p string, mk func(tmp string) error) {
	t.Helper()
	tmp := filepath.Join(t.TempDir(), "new")
	if err := mk(tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
}

// A racer swaps a file of the folder for a symlink to a 0600 secret and
// back while the folder is installed again and again: an install either
// succeeds with the real file or fails naming the entry; the secret and
// the symlink never land in the installed folder.
func TestInstallRacedBySymlinkSwap(t *testing.T) {
	secret := writeSecret(t)
	src := writeFolder(t, validManifest)
	target := filepath.Join(src, "notifier.py")
	real := "print('hi')\n"
	side := t.TempDir() // same file system as src: both under the test's temp dir
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		link, file := filepath.Join(side, "link"), filepath.Join(side, "file")
		for {
			select {
			case <-stop:
				return
			default:
			}
			os.Symlink(secret, link)
			os.Rename(link, target)
			os.WriteFile(file, []byte(real), 0o644)
			os.Rename(file, target)
		}
	}()
	defer func() { close(stop); wg.Wait() }()
	state := t.TempDir()
	var ok, refused int
	for i := 0; i < 300; i++ {
		rec, err := Install(src, state)
		var errs Errors
		switch {
		case err == nil:
			ok++
			dir := Dir(state, "notifier")
			if b, _ := os.ReadFile(filepath.Join(dir, "notifier.py")); string(b) != real {
				t.Fatalf("install %d: notifier.py is %q", i, b)
			}
			if got := hashOf(t, dir); got != rec.Hash {
				t.Fatalf("install %d: recorded %s, folder hashes to %s", i, rec.Hash, got)
			}
		case errors.Is(err, ErrNotRegular), errors.Is(err, ErrChanged):
			refused++
			if !strings.Contains(err.Error(), `"notifier.py"`) {
				t.Fatalf("install %d: %v does not name the entry", i, err)
			}
		case errors.As(err, &errs) && strings.Contains(err.Error(), `"notifier.py" is a symlink`):
			refused++ // seen by the manifest check before the copy
		default:
			t.Fatalf("install %d: %v", i, err)
		}
		checkNoSecret(t, filepath.Join(state, "adapters"))
		if t.Failed() {
			t.FailNow()
		}
	}
	t.Logf("%d installed, %d refused", ok, refused)
	if ok == 0 {
		t.Log("no install won the race this time; the refusals were checked")
	}
}
