package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// A program at <checkout>/bin/gateway keeps its state in
// <checkout>/state; any other program does not.
func TestCheckoutStateDir(t *testing.T) {
	root := t.TempDir()
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "gw", "go.mod"), "// the gateway\nmodule github.com/openhal/gateway\n\ngo 1.25.0\n")
	write(filepath.Join(root, "other", "go.mod"), "module example.com/other\n")
	write(filepath.Join(root, "quoted", "go.mod"), "module \"github.com/openhal/gateway\"\n")
	tests := []struct {
		exe, want string
	}{
		{filepath.Join(root, "gw", "bin", "gateway"), filepath.Join(root, "gw", "state")},
		{filepath.Join(root, "quoted", "bin", "gateway"), filepath.Join(root, "quoted", "state")},
		{filepath.Join(root, "gw", "gateway"), ""},           // not in bin/
		{filepath.Join(root, "gw", "bin", "cross", "g"), ""}, // bin/cross/ is for other machines
		{filepath.Join(root, "other", "bin", "gateway"), ""}, // another module
		{filepath.Join(root, "none", "bin", "gateway"), ""},  // no go.mod
		{"/usr/bin/gateway", ""},
	}
	for _, tt := range tests {
		if got := checkoutStateDirOf(tt.exe); got != tt.want {
			t.Errorf("checkoutStateDirOf(%s) = %q, want %q", tt.exe, got, tt.want)
		}
	}
}
