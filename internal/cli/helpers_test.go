package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/openhal/gateway/internal/cli"
	"github.com/openhal/gateway/internal/gatewayd"
)

// env is the command line's environment as cmd/gateway gives it.
var env = gatewayd.Env("dev", "unknown")

// cliRun runs one command line as main does.
func cliRun(args ...string) (stdout, stderr string, code int) {
	var out, errOut bytes.Buffer
	code = cli.Run(args, &out, &errOut, env)
	return out.String(), errOut.String(), code
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// filepathGlob lists what a directory holds.
func filepathGlob(dir string) ([]string, error) {
	return filepath.Glob(filepath.Join(dir, "*"))
}
