package audit

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// A state directory removed under a running gateway: every Append fails
// (nothing makes the state directory again behind the operator's back);
// once it is made again, the log makes its own directory and lock file
// again and carries on with its seqs, under the same lock as another
// process (the CLI) that opens the new directory.
func TestAppendAfterStateDirRemoved(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	dir := filepath.Join(state, "audit")
	l := openLog(t, dir, Options{})
	first := mustAppend(t, l, Entry{Principal: agent, Action: "write", Outcome: "applied"})

	if err := os.RemoveAll(state); err != nil {
		t.Fatal(err)
	}
	_, err := l.Append(context.Background(), Entry{Principal: agent, Action: "stop", Outcome: "stopped"})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("append with the state directory gone: %v, want a missing-file error", err)
	}
	if _, err := os.Stat(state); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the log made the state directory again: %v", err)
	}

	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	again := mustAppend(t, l, Entry{Principal: agent, Action: "stop", Outcome: "stopped"})
	if again[0] <= first[0] {
		t.Errorf("seq %d after the directory came back, want more than %d", again[0], first[0])
	}
	// Another process's log in the new directory takes turns with this
	// one under the new lock file: seqs stay unique and increasing.
	cli := openLog(t, dir, Options{})
	c := mustAppend(t, cli, Entry{Principal: agent, Action: "token.add", Outcome: "created"})
	last := mustAppend(t, l, Entry{Principal: agent, Action: "resume", Outcome: "resumed"})
	if !(again[0] < c[0] && c[0] < last[0]) {
		t.Errorf("seqs %d, %d (cli), %d: want increasing", again[0], c[0], last[0])
	}
	_, seqs, skipped := listAll(t, l)
	if len(seqs) != 3 || skipped != 0 {
		t.Errorf("the new directory lists seqs %v (%d skipped), want the 3 written since", seqs, skipped)
	}
}
