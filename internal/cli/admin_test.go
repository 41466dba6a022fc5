package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/openhal/gateway/internal/cli"
	"github.com/openhal/gateway/internal/halhub/audit"
	"github.com/openhal/gateway/internal/halhub/token"
	"github.com/openhal/gateway/openhal"
)

// The admin commands against the files of a real state directory, as
// internal/gatewayd reads and writes them for the command line.

// TestTokenAudit: token add and revoke each leave one entry in the state
// directory's audit log, naming the token, never holding it; a token add
// that cannot be recorded leaves no token behind.
func TestTokenAudit(t *testing.T) {
	dir := t.TempDir()
	out, _, err := run(t, "add", "--init", "--state-dir", dir, "--name", "bot", "--kind", "agent", "--scope", "control_low", "--devices", "sim.*")
	if err != nil {
		t.Fatal(err)
	}
	tok := strings.TrimSpace(out)
	if _, _, err := run(t, "revoke", "bot", "--state-dir", dir); err != nil {
		t.Fatal(err)
	}
	// Token changes are kept apart from the writes: no flood rotates them.
	if kept, err := os.ReadFile(filepath.Join(dir, "audit", "kept.log")); err != nil || strings.Count(string(kept), `"action":"token.`) != 2 {
		t.Errorf("kept.log: %v\n%s", err, kept)
	}
	log, err := audit.Open(filepath.Join(dir, "audit"), audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	pg, err := log.List(0, audit.ListOptions{})
	raw, skipped := pg.Entries, pg.Skipped
	if err != nil || skipped != 0 || len(raw) != 2 {
		t.Fatalf("audit log: %d entries, %d skipped, %v; want 2", len(raw), skipped, err)
	}
	me := cli.CLIPrincipal()
	for i, want := range []audit.Entry{
		{Seq: 1, Principal: me, Action: "token.add", Outcome: "created", Reason: `token "bot": agent, scope control_low, devices sim.*`},
		{Seq: 2, Principal: me, Action: "token.revoke", Outcome: "revoked", Reason: `token "bot"`},
	} {
		var e audit.Entry
		if err := json.Unmarshal(raw[i], &e); err != nil {
			t.Fatal(err)
		}
		want.TS = e.TS
		if e.TS.IsZero() || fmt.Sprint(e) != fmt.Sprint(want) {
			t.Errorf("entry %d = %+v, want %+v", i+1, e, want)
		}
	}
	if me.Kind != openhal.KindOperator || me.Name == "" {
		t.Errorf("CLIPrincipal() = %+v", me)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "audit", "*"))
	for _, f := range files {
		if b, _ := os.ReadFile(f); strings.Contains(string(b), tok) || strings.Contains(string(b), tok[len(token.Prefix):]) {
			t.Errorf("%s holds the token", f)
		}
	}

	// An audit directory that cannot be opened: the add fails and the
	// token is gone again.
	bad := t.TempDir()
	writeFile(t, filepath.Join(bad, "audit"), "not a directory\n")
	out, _, err = run(t, "add", "--init", "--state-dir", bad, "--name", "ghost", "--kind", "agent", "--scope", "read")
	if err == nil || out != "" || !strings.Contains(err.Error(), "the audit log could not record it") || !strings.Contains(err.Error(), "the token was removed again") {
		t.Errorf("token add with a broken audit log printed %q, returned %v", out, err)
	}
	if names, _ := token.Open(bad).List(); slices.ContainsFunc(names, func(e token.Entry) bool { return e.Name == "ghost" }) {
		t.Error("the unrecorded token is still in the store")
	}
}

// adapter install of an adapter's source, not built, says to build it
// first: with make adapters for this repository's examples.
func TestAdapterInstallUnbuilt(t *testing.T) {
	state := t.TempDir()
	example := filepath.Join("..", "..", "adapters", "examples", "notifier")
	_, errOut, code := cliRun("adapter", "install", example, "--state-dir", state)
	want := "gateway: " + example + ": exec: not found in the folder; build it first: make adapters, then gateway adapter install bin/adapters/notifier\n"
	if code != 1 || errOut != want {
		t.Errorf("install of the unbuilt example: exit %d, stderr %q; want %q", code, errOut, want)
	}

	src := t.TempDir()
	manifest, err := os.ReadFile(filepath.Join(example, "adapter.json"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(src, "adapter.json"), string(manifest))
	writeFile(t, filepath.Join(src, "main.go"), "package main\n")
	_, errOut, code = cliRun("adapter", "install", src, "--state-dir", state)
	if code != 1 || !strings.HasSuffix(errOut, ": exec: not found in the folder; build it first (the folder holds Go source: go build -o <exec> .)\n") {
		t.Errorf("install of Go source: exit %d, stderr %q", code, errOut)
	}
	os.Remove(filepath.Join(src, "main.go"))
	_, errOut, code = cliRun("adapter", "install", src, "--state-dir", state)
	if code != 1 || !strings.HasSuffix(errOut, ": exec: not found in the folder\n") {
		t.Errorf("install of a folder without its exec: exit %d, stderr %q", code, errOut)
	}
}
