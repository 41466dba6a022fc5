package discovery

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGatewayIDStableAcrossStarts(t *testing.T) {
	dir := t.TempDir()
	first, err := GatewayID(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !validID(first) {
		t.Fatalf("id %q is not 32 hex digits", first)
	}
	again, err := GatewayID(dir)
	if err != nil || again != first {
		t.Fatalf("second start: %q, %v; want %q", again, err, first)
	}
	other, err := GatewayID(t.TempDir())
	if err != nil || other == first {
		t.Fatalf("another state directory: %q, %v; want an id other than %q", other, err, first)
	}
}

func TestGatewayIDRefusesAMangledFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, IDFile)
	if err := os.WriteFile(path, []byte("not-an-id\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := GatewayID(dir)
	if err == nil || !strings.Contains(err.Error(), `want 32 hex digits, got "not-an-id"`) {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "not-an-id\n" {
		t.Errorf("the file was changed: %q", b)
	}
}
