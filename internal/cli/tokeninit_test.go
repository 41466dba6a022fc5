package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openhal/gateway/internal/halhub/token"
)

// TestTokenRefusesNotAStateDir: token add, list and revoke refuse a
// directory without tokens.json (a typo, a new one) with one clear line,
// and make nothing there; add --init makes it a state directory.
func TestTokenRefusesNotAStateDir(t *testing.T) {
	typo := filepath.Join(t.TempDir(), "typo")
	empty := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"add, missing directory", []string{"add", "--state-dir", typo, "--name", "a", "--kind", "agent", "--scope", "read"},
			typo + " is not a gateway state directory (no tokens.json); pass --init to make one"},
		{"add, empty directory", []string{"add", "--state-dir", empty, "--name", "a", "--kind", "agent", "--scope", "read"},
			empty + " is not a gateway state directory (no tokens.json); pass --init to make one"},
		{"list", []string{"list", "--state-dir", typo},
			typo + " is not a gateway state directory (no tokens.json); pass --init to make one"},
		{"revoke", []string{"revoke", "a", "--state-dir", typo},
			typo + " is not a gateway state directory (no tokens.json)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := run(t, tt.args...)
			if err == nil || err.Error() != tt.want || out != "" {
				t.Errorf("printed %q, error %v; want %q", out, err, tt.want)
			}
		})
	}
	if _, err := os.Stat(typo); !os.IsNotExist(err) {
		t.Errorf("a refused command made %s: %v", typo, err)
	}
	if names, _ := os.ReadDir(empty); len(names) != 0 {
		t.Errorf("a refused command wrote in %s: %v", empty, names)
	}

	out, _, err := run(t, "add", "--init", "--state-dir", typo, "--name", "a", "--kind", "agent", "--scope", "read")
	if err != nil || !tokenLine.MatchString(out) {
		t.Fatalf("add --init: %q, %v", out, err)
	}
	if _, err := os.Stat(filepath.Join(typo, token.FileName)); err != nil {
		t.Errorf("add --init made no token file: %v", err)
	}
	if out, _, err := run(t, "list", "--state-dir", typo); err != nil || !strings.Contains(out, "\na ") {
		t.Errorf("list after add --init: %q, %v", out, err)
	}
}
