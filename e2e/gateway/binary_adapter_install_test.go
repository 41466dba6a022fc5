package gateway_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Whole-binary tests of `gateway adapter install` as an attacker who owns
// the folder being installed would try it: the installer (root, or the
// gateway's user) can read files the attacker cannot, such as the admin
// token, and the installed folder is world-readable.

// installSecret is a 0600 file only the installer can read.
const installSecret = "gw-admin-token-1f6b0e2d8c"

// installFolder makes an adapter folder: a manifest, an executable and a
// data file. It returns the folder.
func installFolder(t *testing.T) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "racy")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	man := `{"name":"racy","version":"1.0.0","kind":"tool","exec":"run","args":[],"env_pass":[],
 "grant":{"level":"read","scope":"all"},"devices":[],"timeouts":{"request_ms":10000}}`
	for name, f := range map[string]struct {
		data string
		mode os.FileMode
	}{"adapter.json": {man, 0o644}, "run": {"#!/bin/sh\nexit 0\n", 0o755}, "data.txt": {"real data\n", 0o644}} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(f.data), f.mode); err != nil {
			t.Fatal(err)
		}
	}
	return src
}

// noSecretInstalled fails when the state directory holds a symlink or the
// secret's bytes anywhere.
func noSecretInstalled(t *testing.T, state string) {
	t.Helper()
	filepath.WalkDir(state, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
		case d.Type()&fs.ModeSymlink != 0:
			t.Errorf("%s is a symlink", p)
		case d.Type().IsRegular():
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(installSecret)) {
				t.Errorf("%s holds the secret", p)
			}
		}
		return nil
	})
}

// TestBinaryAdapterInstallSymlinkRace: a racer swaps a file of the folder
// for a symlink to a 0600 secret and back, in a tight loop, while
// `gateway adapter install` runs again and again. Each install either
// succeeds with the real file or fails with a clear error naming the
// file; the installed folder never holds the secret's bytes nor a
// symlink.
func TestBinaryAdapterInstallSymlinkRace(t *testing.T) {
	t.Parallel()
	secret := filepath.Join(t.TempDir(), "admin.token")
	if err := os.WriteFile(secret, []byte(installSecret), 0o600); err != nil {
		t.Fatal(err)
	}
	src := installFolder(t)
	target := filepath.Join(src, "data.txt")
	side := filepath.Dir(src) // the same file system, outside the folder
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
			os.WriteFile(file, []byte("real data\n"), 0o644)
			os.Rename(file, target)
		}
	}()
	defer func() { close(stop); wg.Wait() }()
	state := filepath.Join(t.TempDir(), "state")
	var ok, refused int
	for i := 0; i < 60; i++ {
		r := gw(t, "adapter", "install", src, "--state-dir", state, "--hub", "tcp://127.0.0.1:1")
		switch {
		case r.code == 0:
			ok++
			b, err := os.ReadFile(filepath.Join(state, "adapters", "racy", "data.txt"))
			if err != nil || string(b) != "real data\n" {
				t.Fatalf("install %d succeeded with data.txt %q (%v)", i, b, err)
			}
		case r.code == 1 && strings.Contains(r.stderr, `"data.txt"`) && !strings.Contains(r.stderr, "panic"):
			refused++
		default:
			t.Fatalf("install %d: exit %d, stdout %q, stderr %q; want success or a clear error naming data.txt", i, r.code, r.stdout, r.stderr)
		}
		noSecretInstalled(t, state)
		if t.Failed() {
			t.FailNow()
		}
	}
	t.Logf("%d installs succeeded, %d refused", ok, refused)
}

// TestBinaryAdapterInstallRefusesSymlink: a symlink already in the folder
// is refused by the manifest check, naming it, and nothing is installed;
// and a folder over the size limit is refused with an error naming the
// limit.
func TestBinaryAdapterInstallRefusesSymlink(t *testing.T) {
	t.Parallel()
	secret := filepath.Join(t.TempDir(), "admin.token")
	if err := os.WriteFile(secret, []byte(installSecret), 0o600); err != nil {
		t.Fatal(err)
	}
	src := installFolder(t)
	if err := os.Symlink(secret, filepath.Join(src, "token")); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(t.TempDir(), "state")
	r := gw(t, "adapter", "install", src, "--state-dir", state, "--hub", "tcp://127.0.0.1:1")
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, `"token" is a symlink: symlinks are refused`) {
		t.Fatalf("install with a symlink: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	noSecretInstalled(t, state)
	if _, err := os.Stat(filepath.Join(state, "adapters", "racy")); err == nil {
		t.Fatal("an adapter was installed")
	}

	if err := os.Remove(filepath.Join(src, "token")); err != nil {
		t.Fatal(err)
	}
	big, err := os.Create(filepath.Join(src, "big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	defer big.Close()
	if err := big.Truncate(64<<20 + 1); err != nil { // sparse
		t.Fatal(err)
	}
	r = gw(t, "adapter", "install", src, "--state-dir", state, "--hub", "tcp://127.0.0.1:1")
	wantOneLineError(t, r, "adapter folder too large: its files hold more than 64 MiB (the limit)")
	if _, err := os.Stat(filepath.Join(state, "adapters", "racy")); err == nil {
		t.Fatal("an adapter was installed")
	}
}
