package cli

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestNeedsLinux checks the refusal a server command gives on another
// system, word for word, and that Linux is not refused.
func TestNeedsLinux(t *testing.T) {
	tests := []struct {
		what, goos, want string
	}{
		{"run", "linux", ""},
		{"run", "darwin", "run needs Linux (this is darwin)"},
		{"token add", "windows", "token add needs Linux (this is windows)"},
		{"adapter install", "darwin", "adapter install needs Linux (this is darwin)"},
	}
	for _, tt := range tests {
		err := needsLinux(tt.what, tt.goos)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("needsLinux(%q, %q) = %q, want %q", tt.what, tt.goos, got, tt.want)
		}
	}
}

// desktops are the systems the client commands build for (issue 13), one
// architecture each: a regression there fails make test rather than a
// user's build. What differs between a system's architectures is the
// compiler's, not the module's (no file of the module names an
// architecture), and `make cross` (CI's test-system) builds the other
// two, so make test does not compile the module twice more for them.
var desktops = []struct{ goos, goarch string }{
	{"darwin", "arm64"}, {"windows", "amd64"},
}

// TestBuildsOnEveryDesktop compiles the whole module for macOS and
// Windows, and vets it for macOS with its tests (the Windows tests are
// Linux-bound whole-binary tests, so only the packages a Windows client
// uses are vetted there). The compiler's cache keeps a second run fast.
func TestBuildsOnEveryDesktop(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("cross-compiles the module; skipped with -short")
	}
	for _, d := range desktops {
		t.Run(d.goos+"/"+d.goarch, func(t *testing.T) {
			goCmd(t, d.goos, d.goarch, "build", "./...")
		})
	}
	t.Run("vet darwin", func(t *testing.T) { goCmd(t, "darwin", "arm64", "vet", "./...") })
	t.Run("vet windows", func(t *testing.T) {
		goCmd(t, "windows", "amd64", "vet", "./halclient/...", "./openhal/...",
			"./jsonrpc/...", "./internal/tlscert/...", "./device/...", "./internal/filelock/...", "./adapter/...", "./adapters/...")
	})
}

// goCmd runs the go command at the module's root for goos/goarch and
// fails the test with its output if it fails.
func goCmd(t *testing.T, goos, goarch string, args ...string) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("GOOS=%s GOARCH=%s go %s: %v\n%s", goos, goarch, strings.Join(args, " "), err, out.String())
	}
}
