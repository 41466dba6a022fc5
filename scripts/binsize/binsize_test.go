package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestPackageOf(t *testing.T) {
	for name, want := range map[string]string{
		"net/http.(*conn).serve":                                  "net/http",
		"github.com/openhal/gateway/internal/halhub.(*Hub).Close": "github.com/openhal/gateway/internal/halhub",
		"go:itab.*net/http.conn,io.Reader":                        "net/http",
		"go:itab.github.com/coder/websocket.netConn,net.Conn":     "github.com/coder/websocket",
		"slices.SortFunc[go.shape.struct { Name string }]":        "slices",
		"slices.pdqsortCmpFunc[go.shape.*github.com/a/b.T]":       "slices",
		"main.run":               "main",
		"runtime.memmove":        "runtime",
		"go:string.*":            "",
		"type:*net/http.Request": "",
		"go:func.*":              "",
		"$f64.3ff0000000000000":  "",
		"_rt0_arm_linux":         "",
	} {
		if got := packageOf(name); got != want {
			t.Errorf("packageOf(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestGrouping(t *testing.T) {
	g := grouping{
		main:    "github.com/openhal/gateway",
		mainPkg: "github.com/openhal/gateway/cmd/gateway",
		deps:    []string{"periph.io/x/host/v3", "periph.io/x/conn/v3", "golang.org/x/net"},
	}
	for pkg, want := range map[string]string{
		"main": "./cmd/gateway",
		"github.com/openhal/gateway/internal/halhub/token": "./internal/halhub",
		"github.com/openhal/gateway/halclient":             "./halclient",
		"github.com/openhal/gateway/openhal/gatewayext":    "./openhal",
		"periph.io/x/host/v3/bcm283x":                      "periph.io/x/host/v3",
		"golang.org/x/net/ipv4":                            "golang.org/x/net",
		"vendor/golang.org/x/net/idna":                     "std: net/http",
		"crypto/internal/fips140/nistec":                   "std: crypto and TLS",
		"internal/runtime/maps":                            "std: runtime",
		"sync/atomic":                                      "std: runtime",
		"netip":                                            "std: other",
		"net/netip":                                        "std: net",
		"encoding/json":                                    "std: encoding/json",
		"encoding/base64":                                  "std: encoding: binary, base64...",
	} {
		if got := g.of(pkg); got != want {
			t.Errorf("of(%q) = %q, want %q", pkg, got, want)
		}
	}
}

// TestTally checks that what no symbol names is shared out by code, and
// that the shares add up to the total.
func TestTally(t *testing.T) {
	syms := []symbol{
		{name: "a.f", size: 300, code: true},
		{name: "a.table", size: 50},
		{name: "b.g", size: 100, code: true},
		{name: "go:func.*", size: 999}, // unnamed: shared out
	}
	rows := tally(syms, func(pkg string) string { return pkg }, 850)
	// rest = 850 - 450 named = 400: a gets 300/400 of it, b 100/400.
	want := []row{{name: "a", code: 300, data: 50, share: 650}, {name: "b", code: 100, share: 200}}
	if len(rows) != len(want) {
		t.Fatalf("rows = %+v, want %+v", rows, want)
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Errorf("row %d = %+v, want %+v", i, rows[i], want[i])
		}
	}
}

// TestRunOnItself builds binsize with its symbol table and reads it.
func TestRunOnItself(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("binsize reads ELF binaries")
	}
	if testing.Short() {
		t.Skip("builds a binary")
	}
	exe := filepath.Join(t.TempDir(), "binsize")
	build := exec.Command("go", "build", "-o", exe, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var out bytes.Buffer
	if err := run([]string{exe}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"std: runtime", "./scripts/binsize", "total"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in the table:\n%s", want, out.String())
		}
	}
	err := run([]string{"-stripped", exe, "-budget", "1000", exe}, &out)
	if err == nil || !strings.Contains(err.Error(), "over its budget") {
		t.Errorf("a budget of 1000 bytes: err = %v, want over its budget", err)
	}
}
