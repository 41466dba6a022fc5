package halclient_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openhal/gateway/internal/halhub/hubtest"
)

// outOfTreeMain is a client program of a module of its own: what a third
// party writes against the public packages. It lists the devices its
// token sees with their last known values, asking the gateway's own
// gateway/values (package gatewayext) rather than reading each device.
const outOfTreeMain = `package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"time"

	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal/gatewayext"
)

func main() {
	hub := flag.String("hub", "", "the gateway's URL")
	token := flag.String("token", "", "a token")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := halclient.Dial(ctx, *hub, halclient.Options{Token: *token, ClientName: "devlist"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	init := c.Init()
	fmt.Printf("OpenHAL %s as %s %s\n", init.ProtocolVersion, init.Principal.Kind, init.Principal.Name)
	devices, err := c.Devices(ctx)
	if err != nil {
		log.Fatal(err)
	}
	var values gatewayext.ValuesResult
	if err := c.Call(ctx, gatewayext.MethodValues, nil, &values); err != nil {
		log.Fatal(halclient.Describe(err, gatewayext.MethodValues, ""))
	}
	last := map[string]any{}
	for _, v := range values.Values {
		last[v.Device] = v.Value
	}
	for _, d := range devices {
		fmt.Printf("%s (%s, %s) = %v\n", d.ID, d.Kind, d.Access, last[d.ID])
	}
}
`

// TestOutOfTreeClient builds a client program of halclient and gatewayext
// in a module of its own, whose go.mod points at this checkout with a
// replace, offline (GOPROXY=off: everything comes from the module cache
// that building this module filled), runs it against the Hub and checks
// what it prints: a third party can build on the public packages alone.
func TestOutOfTreeClient(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module; skipped with -short")
	}
	mod := newOutOfTreeModule(t, "example.com/devlist")
	bin := mod.build(t, outOfTreeMain)

	b := hubtest.New(t)
	url := b.Listen("tcp")
	out, err := exec.Command(bin, "-hub", url, "-token", b.Agent).CombinedOutput()
	if err != nil {
		t.Fatalf("the out-of-tree client: %v\n%s", err, out)
	}
	want := "OpenHAL 0.1 as agent bench-agent\n" +
		"sim.door (gpio.input, r) = false\n" +
		"sim.heater (gpio.output, rw) = false\n" +
		"sim.led (gpio.output, rw) = false\n" +
		"sim.temperature (sensor, r) = map[temperature:20.5]\n"
	if string(out) != want {
		t.Errorf("the out-of-tree client printed:\n%s\nwant:\n%s", out, want)
	}
}

// TestOutOfTreeInternal checks that a module of its own cannot import
// the gateway's internal packages: go build refuses it.
func TestOutOfTreeInternal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module; skipped with -short")
	}
	mod := newOutOfTreeModule(t, "example.com/internal")
	for _, pkg := range []string{"internal/halhub", "internal/supervisor"} {
		path := "github.com/openhal/gateway/" + pkg
		out, err := mod.tryBuild(t, "package main\n\nimport _ \""+path+"\"\n\nfunc main() {}\n")
		want := "use of internal package " + path + " not allowed"
		if err == nil || !strings.Contains(out, want) {
			t.Errorf("go build of a module importing %s: err %v, output:\n%s\nwant an error saying %q", pkg, err, out, want)
		}
	}
}

// outOfTreeModule is a temporary module that requires this one, replaced
// by this checkout.
type outOfTreeModule struct{ dir string }

func newOutOfTreeModule(t *testing.T, path string) outOfTreeModule {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	goMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	mod := "module " + path + "\n\ngo " + goVersion(t, string(goMod)) + "\n\n" +
		"require github.com/openhal/gateway v0.0.0\n\n" +
		"replace github.com/openhal/gateway => " + root + "\n"
	dir := t.TempDir()
	for name, body := range map[string][]byte{"go.mod": []byte(mod), "go.sum": sum} {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return outOfTreeModule{dir: dir}
}

// build writes main.go and builds it, failing the test if it does not.
func (m outOfTreeModule) build(t *testing.T, mainGo string) string {
	t.Helper()
	out, err := m.tryBuild(t, mainGo)
	if err != nil {
		t.Fatalf("go build of the out-of-tree module: %v\n%s", err, out)
	}
	return filepath.Join(m.dir, "prog")
}

// tryBuild writes main.go and runs go build, offline.
func (m outOfTreeModule) tryBuild(t *testing.T, mainGo string) (string, error) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(m.dir, "main.go"), []byte(mainGo), 0o644); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", "prog", ".")
	build.Dir = m.dir
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	return string(out), err
}

// goVersion returns the go line of a go.mod.
func goVersion(t *testing.T, goMod string) string {
	t.Helper()
	for _, line := range strings.Split(goMod, "\n") {
		if v, ok := strings.CutPrefix(line, "go "); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatal("the gateway's go.mod has no go line")
	return ""
}
