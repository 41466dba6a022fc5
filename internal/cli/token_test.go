package cli_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/openhal/gateway/internal/cli"
	"github.com/openhal/gateway/internal/halhub/token"
)

// run calls `gateway token` and returns its stdout, stderr and error.
func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := cli.CommandOf(env, "token")(args, &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

var tokenLine = regexp.MustCompile(`^gw_[A-Za-z0-9_-]{43}\n$`)

func TestTokenAddListRevoke(t *testing.T) {
	dir := t.TempDir()
	out, errOut, err := run(t, "add", "--init", "--state-dir", dir, "--name", "bot", "--kind", "agent", "--scope", "control_low", "--devices", "sim.*, relay")
	if err != nil {
		t.Fatal(err)
	}
	if !tokenLine.MatchString(out) || errOut != "" {
		t.Fatalf("add printed stdout %q, stderr %q; want the token alone", out, errOut)
	}
	tok := strings.TrimSpace(out)
	tab, err := token.Open(dir).Load()
	if err != nil {
		t.Fatal(err)
	}
	e, ok := tab.Lookup(tok)
	if !ok || e.Name != "bot" || e.Kind != "agent" || e.Scope != "control_low" || strings.Join(e.Devices, ",") != "sim.*,relay" {
		t.Fatalf("the printed token stands for %+v, %v", e, ok)
	}
	if _, _, err := run(t, "add", "--state-dir", dir, "--name", "ops", "--kind", "operator", "--scope", "admin"); err != nil {
		t.Fatal(err)
	}

	sum := sha256.Sum256([]byte(tok))
	hash := hex.EncodeToString(sum[:])
	out, _, err = run(t, "list", "--state-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "NAME") ||
		!regexp.MustCompile(`^bot +agent +control_low +sim\.\*,relay +\d{4}-`).MatchString(lines[1]) ||
		!regexp.MustCompile(`^ops +operator +admin +all +\d{4}-`).MatchString(lines[2]) {
		t.Errorf("list printed:\n%s", out)
	}
	if strings.Contains(out, hash) || strings.Contains(out, tok) {
		t.Errorf("list shows a hash or a token:\n%s", out)
	}

	out, _, err = run(t, "list", "--json", "--state-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	var entries []map[string]any
	if err := json.Unmarshal([]byte(out), &entries); err != nil {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	if len(entries) != 2 || entries[0]["name"] != "bot" || entries[0]["created"] == nil {
		t.Errorf("list --json printed %s", out)
	}
	if strings.Contains(out, hash) || strings.Contains(out, "hash") {
		t.Errorf("list --json shows a hash:\n%s", out)
	}

	// The name may come before the flags; revoke says what it revoked.
	out, _, err = run(t, "revoke", "bot", "--state-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := `revoked token "bot" (agent, scope control_low, devices sim.*,relay); a running gateway refuses it within a second` + "\n"; out != want {
		t.Errorf("revoke printed %q, want %q", out, want)
	}
	out, _, err = run(t, "list", "--state-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "bot") || !strings.Contains(out, "ops") {
		t.Errorf("list after revoke:\n%s", out)
	}
	_, _, err = run(t, "revoke", "--state-dir", dir, "bot")
	if err == nil || !strings.Contains(err.Error(), `"bot"`) {
		t.Errorf("revoking twice: %v, want an error naming bot", err)
	}
}

// A new directory is listed, with --init, as empty; a state directory
// whose every token was revoked too.
func TestTokenListEmpty(t *testing.T) {
	dir := t.TempDir()
	out, _, err := run(t, "list", "--init", "--state-dir", dir, "--json")
	if err != nil || strings.TrimSpace(out) != "[]" {
		t.Errorf("list --init --json of a new directory = %q, %v; want []", out, err)
	}
	if _, _, err := run(t, "add", "--init", "--state-dir", dir, "--name", "a", "--kind", "agent", "--scope", "read"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "revoke", "a", "--state-dir", dir); err != nil {
		t.Fatal(err)
	}
	out, _, err = run(t, "list", "--state-dir", dir, "--json")
	if err != nil || strings.TrimSpace(out) != "[]" {
		t.Errorf("list --json of no tokens = %q, %v; want []", out, err)
	}
}

func TestTokenErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, token.FileName), `{"tokens":[]}`+"\n")
	add := []string{"add", "--state-dir", dir}
	tests := []struct {
		args []string
		want string
	}{
		{nil, "subcommand"},
		{[]string{"mint"}, `unknown subcommand "mint"`},
		{append(add, "--kind", "agent", "--scope", "read"), "--name is required"},
		{append(add, "--name", "a", "--scope", "read"), "--kind is required"},
		{append(add, "--name", "a", "--kind", "agent"), "--scope is required"},
		{append(add, "--name", "a", "--kind", "robot", "--scope", "read"), "principal kind"},
		{append(add, "--name", "a", "--kind", "agent", "--scope", "root"), "scope"},
		{append(add, "--name", "a", "--kind", "agent", "--scope", "read", "--devices", "a,,b"), "empty pattern"},
		{append(add, "--name", "a", "--kind", "agent", "--scope", "read", "--devices", "Bad*"), "device pattern"},
		{append(add, "--name", "a", "--kind", "agent", "--scope", "read", "extra"), `unexpected argument "extra"`},
		{append(add, "--bogus"), "flag provided but not defined"},
		{[]string{"list", "--state-dir", dir, "x"}, "unexpected argument"},
		{[]string{"revoke", "--state-dir", dir}, "missing token name"},
		{[]string{"revoke", "--state-dir", dir, "nobody"}, `"nobody"`},
	}
	for _, tt := range tests {
		out, _, err := run(t, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("token %q: error %v, want one line with %q", tt.args, err, tt.want)
		}
		if out != "" {
			t.Errorf("token %q printed %q on stdout", tt.args, out)
		}
	}
	if list, err := token.Open(dir).List(); err != nil || len(list) != 0 {
		t.Errorf("failed commands left tokens: %+v, %v", list, err)
	}
}
