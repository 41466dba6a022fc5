package token

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/openhal/gateway/openhal"
)

func TestTokensAreRandom(t *testing.T) {
	seen := make(map[string]bool)
	for range 1000 {
		tok, err := newToken()
		if err != nil {
			t.Fatal(err)
		}
		body, ok := strings.CutPrefix(tok, Prefix)
		if !ok {
			t.Fatalf("token %q lacks prefix %q", tok, Prefix)
		}
		raw, err := base64.RawURLEncoding.DecodeString(body)
		if err != nil {
			t.Fatalf("token %q: %v", tok, err)
		}
		if len(raw)*8 < 128 {
			t.Fatalf("token %q has %d bits, want at least 128", tok, len(raw)*8)
		}
		if seen[tok] {
			t.Fatalf("token %q made twice", tok)
		}
		seen[tok] = true
	}
}

func TestFileHoldsNoToken(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir)
	tok, err := s.Add("bot", openhal.KindAgent, openhal.ScopeRead, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	body := strings.TrimPrefix(tok, Prefix)
	if bytes.Contains(b, []byte(body)) {
		t.Errorf("%s holds the token:\n%s", FileName, b)
	}
	if !bytes.Contains(b, []byte(hashHex(tok))) {
		t.Errorf("%s lacks the token's hash:\n%s", FileName, b)
	}
	fi, err := os.Stat(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if m := fi.Mode().Perm(); m != 0o600 {
		t.Errorf("%s mode = %o, want 600", FileName, m)
	}
	tab, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	e, ok := tab.Lookup(tok)
	if !ok || e.Name != "bot" || e.Kind != openhal.KindAgent || e.Scope != openhal.ScopeRead {
		t.Errorf("Lookup = %+v, %v", e, ok)
	}
	if _, ok := tab.Lookup(tok + "x"); ok {
		t.Error("Lookup accepted a wrong token")
	}
	if _, ok := (*Table)(nil).Lookup(tok); ok {
		t.Error("nil Table accepted a token")
	}
}

func TestAddRefuses(t *testing.T) {
	s := Open(t.TempDir())
	if _, err := s.Add("taken", openhal.KindAgent, openhal.ScopeRead, nil); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, kind string
		scope      openhal.Scope
		devices    []string
		want       string
	}{
		{"taken", "agent", "read", nil, "already taken"},
		{"", "agent", "read", nil, "must match"},
		{"Upper", "agent", "read", nil, "must match"},
		{"-dash", "agent", "read", nil, "must match"},
		{strings.Repeat("a", 65), "agent", "read", nil, "must match"},
		{"ok", "adapter", "read", nil, "unknown principal kind"},
		{"ok", "agent", "root", nil, "unknown scope"},
		{"ok", "agent", "read", []string{"*"}, "device pattern"},
		{"ok", "agent", "read", []string{""}, "device pattern"},
		{"ok", "agent", "read", []string{"a.*.b"}, "device pattern"},
		{"ok", "agent", "read", []string{"Bad"}, "device pattern"},
	}
	for _, tt := range tests {
		_, err := s.Add(tt.name, tt.kind, tt.scope, tt.devices)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Add(%q, %q, %q, %q) = %v, want error with %q", tt.name, tt.kind, tt.scope, tt.devices, err, tt.want)
		}
	}
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 {
		t.Errorf("List has %d entries, want 1: %+v", len(list), list)
	}
}

func TestRevoke(t *testing.T) {
	s := Open(t.TempDir())
	keep, err := s.Add("keep", openhal.KindService, openhal.ScopeControlLow, []string{"sim.*", "relay"})
	if err != nil {
		t.Fatal(err)
	}
	gone, err := s.Add("gone", openhal.KindOperator, openhal.ScopeAdmin, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Revoke("gone"); err != nil {
		t.Fatal(err)
	}
	err = s.Revoke("gone")
	if err == nil || !strings.Contains(err.Error(), `"gone"`) {
		t.Errorf("second Revoke = %v, want an error naming the token", err)
	}
	tab, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tab.Lookup(gone); ok {
		t.Error("revoked token still works")
	}
	e, ok := tab.Lookup(keep)
	if !ok || e.Name != "keep" || strings.Join(e.Devices, ",") != "sim.*,relay" {
		t.Errorf("Lookup(keep) = %+v, %v", e, ok)
	}
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Name != "keep" || list[0].Created.IsZero() {
		t.Errorf("List = %+v", list)
	}
}

func TestEnsureAdmin(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir)
	path, created, err := s.EnsureAdmin()
	if err != nil {
		t.Fatal(err)
	}
	if !created || path != filepath.Join(dir, AdminFile) {
		t.Fatalf("EnsureAdmin = %q, %v", path, created)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if m := fi.Mode().Perm(); m != 0o600 {
		t.Errorf("%s mode = %o, want 600", path, m)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	e, ok := tab.Lookup(strings.TrimSpace(string(b)))
	if !ok || e.Name != AdminName || e.Kind != openhal.KindOperator || e.Scope != openhal.ScopeAdmin {
		t.Errorf("admin.token stands for %+v, %v", e, ok)
	}

	_, created, err = s.EnsureAdmin()
	if err != nil || created {
		t.Errorf("second EnsureAdmin: created %v, err %v", created, err)
	}
	if b2, _ := os.ReadFile(path); !bytes.Equal(b, b2) {
		t.Error("second EnsureAdmin rewrote admin.token")
	}
	if list, _ := s.List(); len(list) != 1 {
		t.Errorf("List = %+v, want the admin alone", list)
	}
}

func TestEnsureAdminLeavesOtherAdmins(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir)
	if _, err := s.Add("root", openhal.KindOperator, openhal.ScopeAdmin, nil); err != nil {
		t.Fatal(err)
	}
	if _, created, err := s.EnsureAdmin(); err != nil || created {
		t.Errorf("EnsureAdmin: created %v, err %v", created, err)
	}
	if _, err := os.Stat(filepath.Join(dir, AdminFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("admin.token written although an admin exists: %v", err)
	}

	s = Open(t.TempDir())
	if _, err := s.Add(AdminName, openhal.KindOperator, openhal.ScopeRead, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.EnsureAdmin(); err == nil {
		t.Error("EnsureAdmin succeeded although a read-scope token holds the name admin")
	}
}

func TestVisible(t *testing.T) {
	tests := []struct {
		devices []string
		id      string
		want    bool
	}{
		{nil, "anything", true},
		{[]string{"relay"}, "relay", true},
		{[]string{"relay"}, "relay2", false},
		{[]string{"relay"}, "relay.a", false},
		{[]string{"sim.*"}, "sim.led", true},
		{[]string{"sim.*"}, "sim.a.b", true},
		{[]string{"sim.*"}, "sim", false},
		{[]string{"sim.*"}, "simx.led", false},
		{[]string{"sim.*"}, "sim2.led", false},
		{[]string{"a.b.*"}, "a.b.c", true},
		{[]string{"a.b.*"}, "a.c", false},
		{[]string{"relay", "sim.*"}, "sim.led", true},
		{[]string{"relay", "sim.*"}, "fan", false},
	}
	for _, tt := range tests {
		if got := (Entry{Devices: tt.devices}).Visible(tt.id); got != tt.want {
			t.Errorf("Entry{Devices: %q}.Visible(%q) = %v, want %v", tt.devices, tt.id, got, tt.want)
		}
	}
}

func TestCorruptFileIsRefused(t *testing.T) {
	for _, bad := range []string{
		"{",
		`{"tokens":[{"name":"a","kind":"agent","scope":"read","hash":"00","created":"2026-01-01T00:00:00Z"}]}`,
		`{"tokens":[],"extra":1}`,
		`{"tokens":[{"name":"a","kind":"hub","scope":"read","hash":"` + strings.Repeat("0", 64) + `","created":"2026-01-01T00:00:00Z"}]}`,
		`{"tokens":[{"name":"a","kind":"agent","scope":"read","hash":"` + strings.Repeat("0", 64) + `","created":"2026-01-01T00:00:00Z"},` +
			`{"name":"a","kind":"agent","scope":"read","hash":"` + strings.Repeat("1", 64) + `","created":"2026-01-01T00:00:00Z"}]}`,
	} {
		s := Open(t.TempDir())
		if err := os.WriteFile(s.Path(), []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Load(); err == nil {
			t.Errorf("Load accepted %s", bad)
		}
		if _, err := s.Add("new", openhal.KindAgent, openhal.ScopeRead, nil); err == nil {
			t.Errorf("Add wrote over %s", bad)
		}
		if b, _ := os.ReadFile(s.Path()); string(b) != bad {
			t.Errorf("file changed from %s to %s", bad, b)
		}
	}
}

// TestConcurrentAdd adds from many goroutines through several Stores on
// one directory: the lock is per open file, so each Store contends like
// a separate process would.
func TestConcurrentAdd(t *testing.T) {
	dir := t.TempDir()
	const stores, perStore, each = 4, 4, 5
	tokens := make(map[string]string)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range stores {
		s := Open(dir)
		for g := range perStore {
			wg.Go(func() {
				for k := range each {
					name := fmt.Sprintf("s%d-g%d-%d", i, g, k)
					tok, err := s.Add(name, openhal.KindAgent, openhal.ScopeRead, nil)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					tokens[name] = tok
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	checkAll(t, Open(dir), tokens, stores*perStore*each)
}

// checkAll checks that the store holds exactly want entries and that
// every token in tokens stands for its name.
func checkAll(t *testing.T, s *Store, tokens map[string]string, want int) {
	t.Helper()
	tab, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if tab.Len() != want {
		t.Errorf("table has %d tokens, want %d", tab.Len(), want)
	}
	for name, tok := range tokens {
		if e, ok := tab.Lookup(tok); !ok || e.Name != name {
			t.Errorf("token of %q: Lookup = %+v, %v", name, e, ok)
		}
	}
}

// helperEnv makes the test binary, run as a child, add tokens and exit.
const helperEnv = "TOKEN_TEST_ADD_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperEnv); dir != "" {
		os.Exit(addAsChild(dir, os.Getenv("TOKEN_TEST_ADD_PREFIX")))
	}
	os.Exit(m.Run())
}

// addAsChild adds 10 tokens and prints "name token" lines.
func addAsChild(dir, prefix string) int {
	s := Open(dir)
	for k := range 10 {
		name := fmt.Sprintf("%s-%d", prefix, k)
		tok, err := s.Add(name, openhal.KindService, openhal.ScopeControlLow, []string{"sim.*"})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println(name, tok)
	}
	return 0
}

func TestConcurrentAddProcesses(t *testing.T) {
	dir := t.TempDir()
	const procs = 4
	outs := make([]bytes.Buffer, procs)
	cmds := make([]*exec.Cmd, procs)
	for i := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"="+dir, fmt.Sprintf("TOKEN_TEST_ADD_PREFIX=p%d", i))
		cmd.Stdout = &outs[i]
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	// This process adds too, while the children run.
	tokens := make(map[string]string)
	s := Open(dir)
	for k := range 10 {
		name := fmt.Sprintf("parent-%d", k)
		tok, err := s.Add(name, openhal.KindAgent, openhal.ScopeRead, nil)
		if err != nil {
			t.Fatal(err)
		}
		tokens[name] = tok
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child %d: %v", i, err)
		}
		for line := range strings.Lines(outs[i].String()) {
			name, tok, _ := strings.Cut(strings.TrimSpace(line), " ")
			tokens[name] = tok
		}
	}
	if len(tokens) != (procs+1)*10 {
		t.Fatalf("got %d tokens back, want %d", len(tokens), (procs+1)*10)
	}
	checkAll(t, s, tokens, (procs+1)*10)
}

// A table read where the token file is missing says so (Absent), so that
// a gateway tells a lost file from a file with every token revoked.
func TestLoadAbsentFile(t *testing.T) {
	s := Open(t.TempDir())
	tab, err := s.Load()
	if err != nil || !tab.Absent() || tab.Len() != 0 {
		t.Fatalf("load of no file: absent %v, %d tokens, %v", tab.Absent(), tab.Len(), err)
	}
	if _, err := s.Add("a", openhal.KindAgent, openhal.ScopeRead, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Revoke("a"); err != nil {
		t.Fatal(err)
	}
	if tab, err := s.Load(); err != nil || tab.Absent() || tab.Len() != 0 {
		t.Errorf("load of a file with no tokens: absent %v, %v", tab.Absent(), err)
	}
}
