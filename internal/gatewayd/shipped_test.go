package gatewayd

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openhal/gateway/internal/supervisor/manifest"
)

// writeShipped writes an adapter folder named name into dir, its
// executable holding body.
func writeShipped(t *testing.T, dir, name, body string) {
	t.Helper()
	src := filepath.Join(dir, name)
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	man := `{"name":"` + name + `","version":"0.1.0","kind":"service","exec":"run","args":[],"env_pass":[],` +
		`"grant":{"level":"read","scope":"all"},"devices":[]}`
	writeFile(t, filepath.Join(src, "adapter.json"), man)
	if err := os.WriteFile(filepath.Join(src, "run"), []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
}

// An enabled shipped adapter is installed when missing, left alone when
// installed from the same build, and reinstalled from another build; one
// not enabled, or not shipped, is not touched.
func TestInstallShipped(t *testing.T) {
	shipped, state := t.TempDir(), t.TempDir()
	writeShipped(t, shipped, "mqtt", "#!/bin/sh\necho v1\n")
	writeShipped(t, shipped, "spare", "#!/bin/sh\n")
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))

	installShipped(shipped, state, []string{"mqtt", "notifier"}, log)
	first, _, err := manifest.Load(state, "mqtt")
	if err != nil {
		t.Fatalf("mqtt not installed: %v\n%s", err, logs.String())
	}
	if _, _, err := manifest.Load(state, "spare"); err == nil {
		t.Fatal("an adapter not enabled was installed")
	}

	logs.Reset()
	installShipped(shipped, state, []string{"mqtt"}, log)
	again, _, _ := manifest.Load(state, "mqtt")
	if !again.InstalledAt.Equal(first.InstalledAt) || logs.Len() != 0 {
		t.Fatalf("the same build was installed again: %v then %v; log %q", first.InstalledAt, again.InstalledAt, logs.String())
	}

	writeShipped(t, shipped, "mqtt", "#!/bin/sh\necho v2\n") // the package upgraded
	installShipped(shipped, state, []string{"mqtt"}, log)
	upgraded, _, _ := manifest.Load(state, "mqtt")
	if upgraded.Hash == first.Hash || !strings.Contains(logs.String(), "installed the shipped adapter") {
		t.Fatalf("a new build was not installed: hash %s → %s; log %q", first.Hash, upgraded.Hash, logs.String())
	}
	if err := manifest.Verify(state, "mqtt"); err != nil {
		t.Fatalf("the installed copy does not verify: %v", err)
	}

	writeFile(t, filepath.Join(shipped, "mqtt", "adapter.json"), "{")
	logs.Reset()
	installShipped(shipped, state, []string{"mqtt"}, log)
	if kept, _, _ := manifest.Load(state, "mqtt"); kept.Hash != upgraded.Hash || !strings.Contains(logs.String(), "not installed") {
		t.Fatalf("a broken shipped folder replaced the install: %s; log %q", kept.Hash, logs.String())
	}
}
