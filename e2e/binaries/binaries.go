// Package binaries builds the programs the end-to-end tests run — the
// gateway, its fault-injecting build, adapters, halbench — each at most
// once per test process, as tailscale's tstest/integration.GetBinaries
// does: every whole-binary, browser and LAN test of the process shares
// one build, and a failed build fails every test that needs it with the
// go command's output.
//
// Programs are built by the go command (the one on PATH, else the
// toolchain's own) at the root of the gateway's module, as `go build`
// would there (so a test in another module, e2e/browser, gets the
// module's own dependency versions), and without -race: they are the
// product, not the test. Each lands in a
// directory of its own, so a test may put files beside it (an adapter's
// manifest); a package that uses binaries calls Cleanup from its
// TestMain after m.Run.
//
// This package is test support: it carries no promise of stability.
package binaries

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// ReleaseTags are the build tags the gateway ships with (the Makefile's
// GOTAGS): nethttpomithttp2, net/http without HTTP/2, which the gateway
// never speaks.
const ReleaseTags = "nethttpomithttp2"

// Gateway returns the path of the gateway (./cmd/gateway) as shipped.
func Gateway(t testing.TB) string {
	t.Helper()
	return Build(t, Program{Pkg: "./cmd/gateway", Tags: ReleaseTags})
}

// GatewayTestHang returns the path of the gateway built with -tags
// testhang, where GATEWAY_TEST_HANG wedges a part on demand.
func GatewayTestHang(t testing.TB) string {
	t.Helper()
	return Build(t, Program{Pkg: "./cmd/gateway", Tags: "testhang," + ReleaseTags})
}

// Program is what to build: a package of the gateway's module, as a
// path from the module's root ("./adapters/mqtt"), with build tags and
// variables added to the environment of the go command.
type Program struct {
	Pkg  string
	Tags string   // comma-separated, as go build -tags takes them
	Env  []string // e.g. CGO_ENABLED=0, as `make adapters` builds
}

// Build returns the path of p's binary, named after its package's last
// element, building it the first time a test of this process asks for
// it. It fails t when the build failed.
func Build(t testing.TB, p Program) string {
	t.Helper()
	b := builds.get(p)
	b.once.Do(func() { b.bin, b.err = b.build(p) })
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.bin
}

// Cleanup removes every binary built by this process.
func Cleanup() {
	builds.mu.Lock()
	defer builds.mu.Unlock()
	if builds.dir != "" {
		os.RemoveAll(builds.dir)
		builds.dir = ""
	}
}

// builds are the programs built or being built by this process: one set
// per process is the point, so it is the package's one variable.
var builds = buildSet{byKey: map[string]*build{}}

type buildSet struct {
	mu    sync.Mutex
	dir   string // made by the first build; Cleanup removes it
	root  string // the module's root directory
	byKey map[string]*build
}

type build struct {
	set  *buildSet
	n    int // its directory under set.dir
	once sync.Once
	bin  string
	err  error
}

func (s *buildSet) get(p Program) *build {
	key := p.Pkg + "\x00" + p.Tags + "\x00" + strings.Join(p.Env, "\x00")
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.byKey[key]
	if !ok {
		b = &build{set: s, n: len(s.byKey)}
		s.byKey[key] = b
	}
	return b
}

func (b *build) build(p Program) (string, error) {
	dir, root, err := b.set.prepare()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, strconv.Itoa(b.n))
	if err := os.Mkdir(out, 0o755); err != nil {
		return "", fmt.Errorf("build %s: %w", p.Pkg, err)
	}
	bin := filepath.Join(out, path.Base(p.Pkg))
	args := []string{"build", "-o", bin}
	if p.Tags != "" {
		args = append(args, "-tags", p.Tags)
	}
	cmd := exec.Command(goTool(), append(args, p.Pkg)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), p.Env...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %s (%s): %v\n%s", strings.Join(cmd.Args[1:], " "), strings.Join(p.Env, " "), err, msg)
	}
	return bin, nil
}

// goTool is the go command on PATH, or else the one of the Go that built
// this test.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// prepare makes the process's directory and finds the module's root,
// the first time a build needs them.
func (s *buildSet) prepare() (dir, root string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.root == "" {
		cmd := exec.Command(goTool(), "list", "-m", "-f", "{{.Dir}}", "github.com/openhal/gateway")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return "", "", fmt.Errorf("find the gateway's module: go list -m: %v\n%s", err, stderr.Bytes())
		}
		s.root = string(bytes.TrimSpace(out))
	}
	if s.dir == "" {
		if s.dir, err = os.MkdirTemp("", "gateway-e2e-bin-"); err != nil {
			return "", "", fmt.Errorf("make a directory for the binaries: %w", err)
		}
	}
	return s.dir, s.root, nil
}
