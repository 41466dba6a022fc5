package gatewayd

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/openhal/gateway/internal/board"
	"github.com/openhal/gateway/internal/halhub/audit"
	"github.com/openhal/gateway/internal/halhub/token"
)

// The first admin token is a token created: it has its audit entry, once.
func TestFirstAdminTokenAudited(t *testing.T) {
	dir := t.TempDir()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	al, err := audit.Open(auditDir(dir), audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer al.Close()
	for i := 0; i < 2; i++ {
		tab, err := loadTokens(token.Open(dir), al, log)
		if err != nil || tab.Len() != 1 {
			t.Fatalf("start %d: %v, %d tokens", i, err, tab.Len())
		}
	}
	pg, err := al.List(0, audit.ListOptions{})
	entries := pg.Entries
	if err != nil || len(entries) != 1 {
		t.Fatalf("%d entries, %v", len(entries), err)
	}
	e := string(entries[0])
	for _, want := range []string{`"action":"token.add"`, `"outcome":"created"`, `"kind":"hub"`, `\"admin\"`} {
		if !strings.Contains(e, want) {
			t.Errorf("entry %s lacks %s", e, want)
		}
	}
}

// A hardware board opens what its file declares; on this machine, which
// is no Raspberry Pi 4, the first line or bus fails to open and the error
// names the device, the pin or bus, and why.
func TestRunOpensHardwareBoards(t *testing.T) {
	cfg, err := board.Load("../../docs/examples/bench-rpi4.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg.StateDir = t.TempDir()
	err = runGateway(context.Background(), build{version: "dev", commit: "unknown"}, cfg, configSource{}, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err == nil {
		t.Fatal("run on rpi4b succeeded on a machine without its GPIO chip")
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "board rpi4b: devices.bench.") ||
		!strings.Contains(msg, "pinctrl-bcm2711:") && !strings.Contains(msg, "I2C bus 1") {
		t.Errorf("run on rpi4b: %v; want the device and its pin or bus named", err)
	}
}
