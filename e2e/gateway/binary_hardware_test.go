package gateway_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openhal/gateway/internal/hw/sysfstest"
)

// TestBinaryHardwareAndCheck (issue 30): the real binary lists a
// Raspberry Pi's /sys (a copy laid out as the kernel does), and gateway
// check takes the entries it prints, pasted into a file, though this
// machine has none of that hardware: check looks at no hardware.
func TestBinaryHardwareAndCheck(t *testing.T) {
	t.Parallel()
	s := sysfstest.Pi(t)
	r := gw(t, "hardware", "--sys", s.Root)
	_, entries, ok := strings.Cut(r.stdout, "to paste under devices: (the ids are yours to choose):\n")
	if r.code != 0 || r.stderr != "" || !ok || !strings.Contains(entries, "w1Id: 28-0316a2797dff") {
		t.Fatalf("gateway hardware: exit %d, stderr %q, stdout\n%s", r.code, r.stderr, r.stdout)
	}
	file := filepath.Join(t.TempDir(), "pi.yaml")
	if err := os.WriteFile(file, []byte("board: rpi4b\ndevices:\n"+entries), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := gw(t, "check", "--config", file); r.code != 0 || !strings.HasSuffix(r.stdout, ": ok\n") {
		t.Errorf("gateway check of the entries: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}

	r = gw(t, "hardware", "--json", "--sys", s.Root)
	var inv struct {
		W1 []struct{ ID, Driver string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &inv); r.code != 0 || err != nil || len(inv.W1) != 4 {
		t.Errorf("gateway hardware --json: exit %d, %v, stdout %q", r.code, err, r.stdout)
	}
	if r := gw(t, "hardware", "--sys", t.TempDir()); r.code != 1 || !strings.Contains(r.stderr, "is not a sysfs tree") {
		t.Errorf("gateway hardware on an empty directory: exit %d, stderr %q", r.code, r.stderr)
	}
}
