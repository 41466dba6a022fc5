package gatewayd

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openhal/gateway/internal/cli"
	"github.com/openhal/gateway/internal/hw/sysfstest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -update rewrites it): got\n%s\nwant\n%s", path, got, want)
	}
}

// runCLI runs one command line as the binary would, and returns its exit
// code, standard output and standard error.
func runCLI(args ...string) (int, string, string) {
	var stdout, stderr strings.Builder
	code := cli.Run(args, &stdout, &stderr, Env("dev", "unknown"))
	return code, stdout.String(), stderr.String()
}

// gateway hardware on a Raspberry Pi's /sys, as text and as JSON, and
// its errors as the other commands give them.
func TestHardwareCommand(t *testing.T) {
	s := sysfstest.Pi(t)
	code, out, errs := runCLI("hardware", "--sys", s.Root)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	golden(t, "hardware.txt", strings.ReplaceAll(out, s.Root, "/sys"))

	code, out, errs = runCLI("hardware", "--json", "--sys", s.Root)
	if code != 0 || errs != "" || strings.Count(out, "\n") != 1 {
		t.Fatalf("--json: exit %d, stderr %q, %d lines", code, errs, strings.Count(out, "\n"))
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("--json: %v", err)
	}
	indented, _ := json.MarshalIndent(v, "", "  ")
	golden(t, "hardware.json", string(indented)+"\n")

	for _, tt := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"hardware", "--sys", filepath.Join(s.Root, "none")}, 1,
			"gateway: hardware: " + filepath.Join(s.Root, "none") + " is not a sysfs tree: it has no bus directory\n"},
		{[]string{"hardware", "w1"}, 2, "gateway: hardware: unexpected argument \"w1\"\nusage: gateway hardware [--sys DIR] [--json]\n"},
		{[]string{"hardware", "--bus", "1"}, 2, "gateway: hardware: flag provided but not defined: -bus\nusage: gateway hardware [--sys DIR] [--json]\n"},
	} {
		code, out, errs := runCLI(tt.args...)
		if code != tt.code || out != "" || !strings.HasPrefix(errs, tt.stderr) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d, stderr %q", tt.args, code, out, errs, tt.code, tt.stderr)
		}
	}
	code, out, _ = runCLI("help", "hardware")
	if code != 0 || !strings.Contains(out, "--sys DIR") || !strings.Contains(out, "--json") {
		t.Errorf("help hardware: exit %d\n%s", code, out)
	}
}
