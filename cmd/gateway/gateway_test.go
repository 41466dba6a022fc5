package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"gateway/board"
	"gateway/halhub/audit"
	"gateway/halhub/token"
)

// The first admin token is a token created: it has its audit entry, once.
func TestFirstAdminTokenAudited(t *testing.T) {
	dir := t.TempDir()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	al, err := audit.Open(auditDir(dir), audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer al.Close()
	for i := 0; i < 2; i++ {
		tab, err := loadTokens(token.Open(dir), al, log)
		if err != nil || tab.Len() != 1 {
			t.Fatalf("start %d: %v, %d tokens", i, err, tab.Len())
		}
	}
	entries, _, err := al.List(0, 0)
	if err != nil || len(entries) != 1 {
		t.Fatalf("%d entries, %v", len(entries), err)
	}
	e := string(entries[0])
	for _, want := range []string{`"action":"token.add"`, `"outcome":"created"`, `"kind":"hub"`, `\"admin\"`} {
		if !strings.Contains(e, want) {
			t.Errorf("entry %s lacks %s", e, want)
		}
	}
}

// Until real hardware is wired in, a hardware board is refused at run
// rather than served as the sim bench under its name.
func TestRunRefusesHardwareBoards(t *testing.T) {
	cfg, err := board.Load("../../docs/examples/bench-rpi4.yaml")
	if err != nil {
		t.Fatal(err)
	}
	err = runGateway(context.Background(), cfg, t.TempDir(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err == nil || !strings.Contains(err.Error(), `board "rpi4b"`) {
		t.Fatalf("run on rpi4b: %v", err)
	}
}
