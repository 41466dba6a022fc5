package filelock

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestExclusiveWaits checks that an exclusive lock held on one open file
// keeps a second open file of the same path waiting until it is released,
// and that shared locks do not wait for each other.
func TestExclusiveWaits(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	open := func() *os.File {
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	a, b := open(), open()
	if err := Lock(a, Exclusive); err != nil {
		t.Fatalf("lock a: %v", err)
	}
	got := make(chan error, 1)
	go func() { got <- Lock(b, Shared) }()
	select {
	case err := <-got:
		t.Fatalf("a shared lock was granted beside an exclusive one (err %v)", err)
	case <-time.After(50 * time.Millisecond):
		// Still waiting, as it must: only a release can let it through.
	}
	if err := Unlock(a); err != nil {
		t.Fatalf("unlock a: %v", err)
	}
	if err := <-got; err != nil {
		t.Fatalf("lock b after the release: %v", err)
	}
	if err := Lock(a, Shared); err != nil {
		t.Fatalf("a second shared lock: %v", err)
	}
}
