package cli

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/openhal/gateway/"

// public are the module's public packages (DESIGN.md, "Layout"): what a
// third party may import, and all that the command line imports of the
// module.
var public = []string{"halclient", "openhal", "openhal/gatewayext", "jsonrpc", "device", "adapterproto", "adapter"}

// TestImportsOnlyPublic holds the package doc's promise: this package
// imports, of the module, only its public packages, so that what the
// command line does a third party's client could do. The gateway's own
// packages reach it only through the public ones that use them
// (halclient keeps its known-gateways file with internal/filelock and
// internal/atomicfile, and reads pins with internal/tlscert), never
// directly: what the commands need of the server comes in Env.
func TestImportsOnlyPublic(t *testing.T) {
	imports := goList(t, "-f", `{{join .Imports "\n"}}`, ".")
	var direct []string
	for _, p := range imports {
		rel, ok := strings.CutPrefix(p, module)
		switch {
		case !ok:
		case slices.Contains(public, rel):
			direct = append(direct, p)
		default:
			t.Errorf("internal/cli imports %s, which is not one of the module's public packages %v", p, public)
		}
	}
	if len(direct) == 0 {
		t.Fatal("internal/cli imports none of the module's public packages: the list above is out of date")
	}
	allowed := map[string]bool{module + "internal/cli": true}
	for _, p := range goList(t, append([]string{"-deps"}, direct...)...) {
		allowed[p] = true
	}
	for _, p := range goList(t, "-deps", ".") {
		if strings.HasPrefix(p, module) && !allowed[p] {
			t.Errorf("internal/cli depends on %s, not through the public packages it imports", p)
		}
	}
}

// goList runs go list in this package's directory and returns its lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return strings.Fields(string(out))
}
