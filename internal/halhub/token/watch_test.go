//go:build linux

package token

import (
	"context"
	"github.com/openhal/gateway/internal/atomicfile"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/openhal"
)

// watcher runs Watch on dir and gathers what it reports.
type watcher struct {
	tables chan *Table
	logs   chan string
	done   chan error
}

// lineWriter hands each write (one slog record) to a channel.
type lineWriter chan string

func (w lineWriter) Write(p []byte) (int, error) {
	w <- string(p)
	return len(p), nil
}

func startWatch(t *testing.T, dir string) *watcher {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &watcher{tables: make(chan *Table, 100), logs: make(chan string, 100), done: make(chan error, 1)}
	log := slog.New(slog.NewTextHandler(lineWriter(w.logs), &slog.HandlerOptions{Level: slog.LevelInfo}))
	go func() { w.done <- Open(dir).Watch(ctx, log, func(t *Table) { w.tables <- t }) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-w.done:
			if err != nil {
				t.Errorf("Watch: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Watch did not return after cancel")
		}
	})
	// The first table comes once the watch is in place.
	w.next(t, 5*time.Second)
	return w
}

// next waits for the next table.
func (w *watcher) next(t *testing.T, within time.Duration) *Table {
	t.Helper()
	select {
	case tab := <-w.tables:
		return tab
	case err := <-w.done:
		t.Fatalf("Watch returned: %v", err)
	case <-time.After(within):
		t.Fatalf("no table within %v", within)
	}
	return nil
}

// until waits, up to within, for a table for which ok holds.
func (w *watcher) until(t *testing.T, within time.Duration, ok func(*Table) bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if ok(w.next(t, time.Until(deadline))) {
			return
		}
	}
}

func TestWatchSeesAddAndRevoke(t *testing.T) {
	dir := t.TempDir()
	w := startWatch(t, dir)
	other := Open(dir)

	tok, err := other.Add("late", openhal.KindAgent, openhal.ScopeRead, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.until(t, time.Second, func(tab *Table) bool { _, ok := tab.Lookup(tok); return ok })

	if err := other.Revoke("late"); err != nil {
		t.Fatal(err)
	}
	w.until(t, time.Second, func(tab *Table) bool { _, ok := tab.Lookup(tok); return !ok })
}

func TestWatchKeepsTableOnCorruptFile(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir)
	tok, err := s.Add("bot", openhal.KindAgent, openhal.ScopeRead, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := startWatch(t, dir)

	if err := atomicfile.Write(s.Path(), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case line := <-w.logs:
		if !strings.Contains(line, "rejected") || strings.Contains(line, tok) {
			t.Errorf("log line %q", line)
		}
	case tab := <-w.tables:
		t.Fatalf("Watch handed on a table from a corrupt file: %d tokens", tab.Len())
	case <-time.After(time.Second):
		t.Fatal("corrupt file not reported within 1s")
	}
	// The log comes from the same goroutine that would have called
	// onChange, and after it would have: no table can be on its way.
	select {
	case tab := <-w.tables:
		t.Fatalf("Watch handed on a table from a corrupt file: %d tokens", tab.Len())
	default:
	}
}

func TestWatchMissingDir(t *testing.T) {
	err := Open(t.TempDir()+"/none").Watch(context.Background(), nil, func(*Table) {})
	if err == nil {
		t.Error("Watch of a missing directory returned nil")
	}
}

func TestWatchEndsWhenDirRemoved(t *testing.T) {
	dir := t.TempDir() + "/state"
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	ready := make(chan struct{}, 1)
	go func() {
		done <- Open(dir).Watch(context.Background(), nil, func(*Table) { ready <- struct{}{} })
	}()
	select {
	case <-ready:
	case <-time.After(5 * time.Second):
		t.Fatal("Watch did not start")
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Error("Watch returned nil when its directory went away")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Watch did not return when its directory went away")
	}
}
