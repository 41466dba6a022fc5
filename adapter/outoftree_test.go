package adapter

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestOutOfTreeModule builds the README's service in a module of its own,
// with the README's go.mod (its replace pointed at this checkout), offline
// (GOPROXY=off: everything comes from the module cache that building this
// module filled), then runs it through a handshake and a shutdown. It
// proves that another module can import the adapters package, and keeps
// adapter/README.md's example compiling, with the gateway's go line.
func TestOutOfTreeModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module; skipped with -short")
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	mainGo := fenced(t, readme, "go", "package main")
	goMod := fenced(t, readme, "", "module ")
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	goMod = strings.Replace(goMod, "=> ../gateway", "=> "+root, 1)
	if !strings.Contains(goMod, root) {
		t.Fatalf("the README's go.mod has no replace => ../gateway:\n%s", goMod)
	}
	if err := sameGoLine(goMod, filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, body := range map[string]string{"go.mod": goMod, "main.go": mainGo, "go.sum": string(sum)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "logger")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build of the out-of-tree adapter: %v\n%s", err, out)
	}

	run := exec.Command(bin)
	run.Env = []string{"OXIDEPM_ADAPTER_PROTOCOLS=1"}
	run.Stdin = strings.NewReader(initializeFrame + "\n" + `{"jsonrpc":"2.0","method":"initialized","params":{}}` +
		"\n" + `{"jsonrpc":"2.0","id":2,"method":"shutdown","params":{}}` + "\n")
	var stderr bytes.Buffer
	run.Stderr = &stderr
	out, err := run.Output()
	if err != nil {
		t.Fatalf("the adapter: %v\nstderr: %s", err, stderr.String())
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	if !sc.Scan() || !regexp.MustCompile(`"id":1,"result":\{"protocol":1,"name":"logger","version":"0\.1\.0"`).MatchString(sc.Text()) {
		t.Fatalf("the adapter's first frame is not its initialize answer as logger 0.1.0:\n%s", out)
	}
}

// sameGoLine checks that the README's go.mod names the Go the gateway's
// go.mod does: a lower one does not build (the gateway requires its own),
// a higher one would tell adapter authors they need a newer Go than the
// gateway does (docs/install.md, "Building from source").
func sameGoLine(readmeMod, gatewayModPath string) error {
	gw, err := os.ReadFile(gatewayModPath)
	if err != nil {
		return err
	}
	want, got := goLine(string(gw)), goLine(readmeMod)
	if want == "" || got != want {
		return fmt.Errorf("the README's go.mod says go %q, the gateway's %s says go %q: make them the same", got, gatewayModPath, want)
	}
	return nil
}

// goLine returns the version of a go.mod's go directive, "" if none.
func goLine(mod string) string {
	if m := regexp.MustCompile(`(?m)^go ([0-9.]+)\s*$`).FindStringSubmatch(mod); m != nil {
		return m[1]
	}
	return ""
}

// initializeFrame is the daemon's initialize, as the seed shows it.
const initializeFrame = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocols":[1],` +
	`"host":{"name":"gateway","version":"test"},"adapter":{"name":"logger","version":"0.1.0"},"kind":"service",` +
	`"grant":{"level":"read","scope":"all"},"paths":{"state":"/tmp"},` +
	`"limits":{"max_line":262144,"max_in_flight":32,"event_queue":1024}}}`

// fenced returns the first fenced block of md with the info string lang
// whose text starts with prefix.
func fenced(t *testing.T, md []byte, lang, prefix string) string {
	t.Helper()
	parts := strings.Split(string(md), "```")
	for i := 1; i+1 < len(parts); i += 2 {
		info, body, _ := strings.Cut(parts[i], "\n")
		if strings.TrimSpace(info) == lang && strings.HasPrefix(body, prefix) {
			return body
		}
	}
	t.Fatalf("README.md has no ```%s block starting with %q", lang, prefix)
	return ""
}

func TestGoLine(t *testing.T) {
	tests := map[string]string{
		"module m\n\ngo 1.24.0\n":          "1.24.0",
		"module m\ngo 1.24\ntoolchain x\n": "1.24",
		"module m\n// go 1.25\n":           "",
		"module m\n":                       "",
	}
	for mod, want := range tests {
		if got := goLine(mod); got != want {
			t.Errorf("goLine(%q) = %q, want %q", mod, got, want)
		}
	}
}
