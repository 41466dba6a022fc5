package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openhal/gateway/internal/supervisor"
	"github.com/openhal/gateway/openhal/gatewayext"
)

// The adapter commands without a running gateway: what the files hold,
// and "gateway not reachable" where the live state is wanted.
func TestAdapterCommandsOffline(t *testing.T) {
	t.Setenv("GATEWAY_TOKEN", "")
	t.Setenv("GATEWAY_HUB", "")
	src := t.TempDir()
	man := `{"name":"demo","version":"1.2.3","kind":"service","exec":"run.sh","args":[],"env_pass":[],
 "grant":{"level":"read","scope":"all"},"devices":[],"timeouts":{"request_ms":1000}}`
	if err := os.WriteFile(filepath.Join(src, "adapter.json"), []byte(man), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "run.sh"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	off := []string{"--state-dir", state, "--hub", "tcp://127.0.0.1:1", "--token", "x"}

	out, errOut, code := cliRun(append([]string{"adapter", "install", src}, off...)...)
	if code != 0 || !strings.HasPrefix(out, "installed demo 1.2.3\nsha256 ") || !strings.Contains(out, "starts with the gateway if the configuration enables it (adapters.enabled)") {
		t.Fatalf("install: %d %q %q", code, out, errOut)
	}

	out, errOut, code = cliRun(append([]string{"adapter", "list", "--json"}, off...)...)
	var list struct {
		Adapters []struct {
			Name      string
			Installed *struct{ Version, Hash string }
			Status    *gatewayext.AdapterStatus
		}
		Reachable bool
	}
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || list.Reachable || len(list.Adapters) != 1 ||
		list.Adapters[0].Installed == nil || list.Adapters[0].Installed.Version != "1.2.3" || list.Adapters[0].Status != nil {
		t.Errorf("list --json: %d %q %q", code, out, errOut)
	}

	out, errOut, code = cliRun(append([]string{"adapter", "status", "demo"}, off...)...)
	if code != 1 || !strings.HasPrefix(out, "demo 1.2.3 (service), installed ") || !strings.Contains(errOut, "gateway not reachable") {
		t.Errorf("status offline: %d %q %q", code, out, errOut)
	}

	_, errOut, code = cliRun(append([]string{"adapter", "logs", "demo"}, off...)...)
	if code != 1 || !strings.Contains(errOut, "no log of adapter demo") {
		t.Errorf("logs before any run: %d %q", code, errOut)
	}
	logDir := supervisor.LogDir(state)
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(logDir, "demo.log"), []byte("a\nb\nc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code = cliRun(append([]string{"adapter", "logs", "demo", "-n", "2"}, off...)...); code != 0 || out != "b\nc\n" {
		t.Errorf("logs -n 2: %d %q %q", code, out, errOut)
	}

	if out, errOut, code = cliRun(append([]string{"adapter", "remove", "demo"}, off...)...); code != 0 || !strings.HasPrefix(out, "removed demo\n") {
		t.Errorf("remove: %d %q %q", code, out, errOut)
	}
	if _, errOut, code = cliRun(append([]string{"adapter", "remove", "demo"}, off...)...); code != 1 || !strings.Contains(errOut, "adapter demo is not installed") {
		t.Errorf("remove again: %d %q", code, errOut)
	}
	if _, errOut, code = cliRun("adapter", "frobnicate"); code != 2 || !strings.Contains(errOut, `unknown subcommand "frobnicate"`) {
		t.Errorf("unknown subcommand: %d %q", code, errOut)
	}
	if _, _, code = cliRun(append([]string{"adapter", "status"}, off...)...); code != 2 {
		t.Errorf("status without a name: exit %d, want 2", code)
	}
}
