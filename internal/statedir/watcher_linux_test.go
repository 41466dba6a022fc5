package statedir

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// told waits for c to say something changed.
func told(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(waitLimit):
		t.Fatalf("%s: not told within %s", what, waitLimit)
	}
}

// notTold checks that c says nothing within a short quiet window, once
// what could have told it is seen handled.
func notTold(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
		t.Errorf("%s: told", what)
	case <-time.After(100 * time.Millisecond):
	}
}

// One watch tells each subscriber of the names it subscribed to: the
// token file's follower of the token file, the Monitor of the directory
// and its lock; both when the directory is made again, which is then
// the one watched.
func TestWatcherTellsSubscribers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	w, err := NewWatcher(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	tokens, monitor := w.Subscribe("tokens.json"), w.Subscribe("", LockName)

	writeFile := func(name string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeFile("tokens.json")
	told(t, tokens, "tokens.json written")
	writeFile("stop.json") // nobody's: the latch
	writeFile(LockName)
	told(t, monitor, "the lock file written")
	notTold(t, tokens, "other files written")

	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	told(t, monitor, "the directory's mode changed")
	os.Chmod(dir, 0o700)
	told(t, monitor, "the directory's mode changed back")

	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	told(t, tokens, "tokens.json removed")
	told(t, monitor, "the directory removed")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	told(t, tokens, "the directory made again")
	told(t, monitor, "the directory made again")
	writeFile("tokens.json")
	told(t, tokens, "tokens.json written in the directory made again")
}
