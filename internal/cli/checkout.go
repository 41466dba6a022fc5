package cli

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// modulePath is the gateway's Go module, as a checkout's go.mod names it.
const modulePath = "github.com/openhal/gateway"

// checkoutStateDir is the state directory of a gateway run from a
// development checkout: <checkout>/state (git-ignored), when this
// program is <checkout>/bin/gateway, as `make build` leaves it. Then
// `make run` and the client commands typed after it agree on one
// directory that the developer owns, and root's `make run` does not make
// /var/lib/gateway, an installed gateway's. "" for any other program
// (an installed one, go run's, a test's build).
func checkoutStateDir() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return checkoutStateDirOf(exe)
}

// checkoutStateDirOf is checkoutStateDir for the program at exe.
func checkoutStateDirOf(exe string) string {
	bin := filepath.Dir(exe)
	if filepath.Base(bin) != "bin" {
		return ""
	}
	root := filepath.Dir(bin)
	if !isGatewayModule(filepath.Join(root, "go.mod")) {
		return ""
	}
	return filepath.Join(root, "state")
}

// isGatewayModule reports whether the go.mod at path is the gateway's.
func isGatewayModule(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if mod, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(mod), `"`) == modulePath
		}
	}
	return false
}
