package gateway_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/e2e/binaries"
	"github.com/openhal/gateway/internal/supervisor/manifest"
)

// Whole-binary tests of the adapters (adapter protocol 1): installing
// with the CLI, running under the gateway, and never outliving it.

// TestBinaryAdapterInstallBadManifest: a manifest error names every bad
// field, one a line as `field.path: what is wrong`, exits 1 and installs
// nothing (section 2).
func TestBinaryAdapterInstallBadManifest(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	bad := `{"name":"Bad","version":"","kind":"daemon","exec":"../x","args":[],"env_pass":[],
 "grant":{"level":"admin","scope":"all"},"devices":[],"timeouts":{"request_ms":10000}}`
	if err := os.WriteFile(filepath.Join(src, "adapter.json"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(t.TempDir(), "state")
	r := gw(t, "adapter", "install", src, "--state-dir", state)
	if r.code != 1 || r.stdout != "" {
		t.Fatalf("install of a bad manifest: exit %d, stdout %q, stderr %q; want exit 1 and nothing on stdout", r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	wantPaths := []string{"name", "version", "kind", "exec", "grant.level"}
	if len(lines) != len(wantPaths) {
		t.Errorf("stderr has %d lines, want one per bad field (%d):\n%s", len(lines), len(wantPaths), r.stderr)
	}
	for i, line := range lines {
		rest, named := strings.CutPrefix(line, "gateway: "+src+": ")
		path, msg, ok := strings.Cut(rest, ": ")
		if !named || !ok || msg == "" || i >= len(wantPaths) || path != wantPaths[i] {
			t.Errorf("line %d %q: want \"gateway: %s: %s: what is wrong\"", i, line, src, wantPaths[min(i, len(wantPaths)-1)])
		}
	}
	if _, err := os.Stat(filepath.Join(state, "adapters", "Bad")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("something was installed: %v", err)
	}
	if out := gwOK(t, "adapter", "list", "--state-dir", state, "--hub", "tcp://127.0.0.1:1"); strings.Contains(out, "Bad") {
		t.Errorf("adapter list shows the refused adapter:\n%s", out)
	}
}

// buildAdapter makes an installable folder of the Go adapter at pkg (a
// path from the module's root), built once per test run as `make
// adapters` builds it, and the manifest man.
func buildAdapter(t testing.TB, pkg, exe string, man []byte) string {
	t.Helper()
	skipShort(t)
	bin := binaries.Build(t, binaries.Program{Pkg: pkg, Env: []string{"CGO_ENABLED=0"}})
	dir := t.TempDir()
	b, err := os.ReadFile(bin)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, exe), b, 0o755)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "adapter.json"), man, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// buildNotifier builds the notifier example as `make adapters` does.
func buildNotifier(t *testing.T) string {
	t.Helper()
	man, err := os.ReadFile("../../adapters/examples/notifier/adapter.json")
	if err != nil {
		t.Fatal(err)
	}
	return buildAdapter(t, "./adapters/examples/notifier", "notifier", man)
}

// adapterGateway installs the adapter folder src (adapter name) into a
// fresh state directory, enables it in a configuration and starts the
// gateway, and returns it with the adapter's pid once it runs. The adapter runs as nobody: the
// tests run as root, and an adapter never runs as root. Its user must
// reach its install folder, so the temporary directories above the state
// directory are made traversable.
func adapterGateway(t *testing.T, src, name string) (*gateway, int) {
	t.Helper()
	state, cfg := installAdapter(t, src, name, "")
	g := startGateway(t, state, "--config", cfg)
	return g, adapterRunning(t, g, name)
}

// installAdapter installs the adapter folder src (adapter name) into a
// fresh state directory and writes a configuration that enables it, with
// more lines (indented YAML) at the end of its adapters section: the
// adapters' settings. It returns the state directory and the
// configuration file.
func installAdapter(t *testing.T, src, name, more string) (string, string) {
	t.Helper()
	tmp := t.TempDir()
	for _, d := range []string{tmp, filepath.Dir(tmp)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	state := filepath.Join(tmp, "state")
	out := gwOK(t, "adapter", "install", src, "--state-dir", state, "--hub", "tcp://127.0.0.1:1")
	if !regexp.MustCompile(`(?m)^installed `+name+` 0\.1\.0\nsha256 [0-9a-f]{64}\n`).MatchString(out) ||
		!strings.Contains(out, "starts with the gateway if the configuration enables it") {
		t.Fatalf("install: %q", out)
	}
	cfg := filepath.Join(tmp, "gateway.yaml")
	conf := "board: sim\nadapters:\n  enabled: [" + name + "]\n  user: nobody\n" + more
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	gwOK(t, "check", "--config", cfg)
	return state, cfg
}

// adapterRunning waits until the gateway g has the adapter name running
// as nobody, and returns its pid.
func adapterRunning(t *testing.T, g *gateway, name string) int {
	t.Helper()
	g.err.waitFor(t, 0, `msg="adapter state" .*adapter=`+name+` from=starting to=running`, waitLong)
	st := adapterStatusJSON(t, g, name)
	if st.State != "running" || st.Pid <= 0 || st.User != "nobody" {
		t.Fatalf("status: %+v, want running as nobody with a pid", st)
	}
	return st.Pid
}

type statusJSON struct {
	Name  string `json:"name"`
	State string `json:"state"`
	Pid   int    `json:"pid"`
	User  string `json:"user"`
}

func adapterStatusJSON(t *testing.T, g *gateway, name string) statusJSON {
	t.Helper()
	out := gwOK(t, "adapter", "status", name, "--json", "--hub", g.ws, "--state-dir", g.dir)
	var st statusJSON
	if err := json.Unmarshal([]byte(out), &st); err != nil || st.Name != name {
		t.Fatalf("adapter status --json: %q: %v", out, err)
	}
	return st
}

// alive reports whether pid is a live process (a zombie is dead: it is
// its parent's to reap, and runs nothing).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// TestBinaryAdapterRuns: an installed, enabled adapter runs under the
// gateway, gets the Hub's events, shows in status, logs and /metrics, and
// is stopped with the gateway: none of its processes remains (section 8).
func TestBinaryAdapterRuns(t *testing.T) {
	t.Parallel()
	g, pid := adapterGateway(t, buildNotifier(t), "notifier")

	gwOK(t, "write", "sim.led", "true", "--hub", g.ws, "--state-dir", g.dir)
	events := filepath.Join(g.dir, "adapters", "state", "notifier", "events.jsonl")
	// The notifier's file is the only sign of the event: polled.
	deadline := time.Now().Add(waitLong)
	for {
		b, _ := os.ReadFile(events)
		if strings.Contains(string(b), `"device":"sim.led","value":true`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the write of sim.led is not in %s within %s:\n%s", events, waitLong, b)
		}
		<-time.After(20 * time.Millisecond)
	}

	logs := gwOK(t, "adapter", "logs", "notifier", "-n", "5", "--state-dir", g.dir)
	if !strings.Contains(logs, "appending events") || len(strings.Split(strings.TrimSpace(logs), "\n")) > 5 {
		t.Errorf("adapter logs: %q", logs)
	}
	list := gwOK(t, "adapter", "list", "--hub", g.ws, "--state-dir", g.dir)
	if !regexp.MustCompile(fmt.Sprintf(`(?m)^notifier\s+0\.1\.0\s+service\s+.*running pid %d$`, pid)).MatchString(list) {
		t.Errorf("adapter list:\n%s", list)
	}
	if body := metrics(t, g); !strings.Contains(body, "\ngateway_adapter_up{adapter=\"notifier\"} 1\n") ||
		!strings.Contains(body, fmt.Sprintf("\ngateway_adapter_pid{adapter=\"notifier\"} %d\n", pid)) {
		t.Errorf("/metrics lacks the notifier:\n%s", body)
	}

	g.stop(t)
	if alive(pid) {
		t.Errorf("the notifier (pid %d) outlived the gateway's stop", pid)
	}
	if !strings.Contains(g.err.text(), "msg=\"adapter stopped\" part=supervisor adapter=notifier") {
		t.Errorf("the gateway did not log the notifier's stop")
	}
}

// metrics reads /metrics with the admin token.
func metrics(t testing.TB, g *gateway) string {
	t.Helper()
	tok, err := os.ReadFile(filepath.Join(g.dir, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest("GET", "http://"+g.httpAddr+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %d %v", resp.StatusCode, err)
	}
	return string(body)
}

// TestBinaryAdapterDiesWithGateway: a gateway killed with SIGKILL runs no
// stop sequence, and its adapter still ends, by the death signal it was
// started with (section 8). The adapter is the test adapter ignoring
// SIGTERM and its standard input's end, so that only the death signal
// (SIGKILL) can end it.
func TestBinaryAdapterDiesWithGateway(t *testing.T) {
	t.Parallel()
	man := `{"name":"stubborn","version":"0.1.0","kind":"service","exec":"testadapter","args":["--ignore-sigterm"],
 "env_pass":[],"grant":{"level":"read","scope":[]},"devices":[],"timeouts":{"request_ms":10000}}`
	src := buildAdapter(t, "./adapters/testadapter", "testadapter", []byte(man))
	g, pid := adapterGateway(t, src, "stubborn")
	g.kill(t)
	// The kernel delivers the death signal; nothing reports the end of a
	// process that is not our child: polled.
	deadline := time.Now().Add(waitLong)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the notifier (pid %d) still runs %s after the gateway was killed", pid, waitLong)
		}
		<-time.After(20 * time.Millisecond)
	}
}

// TestBinaryAdapterTreeDiesWithGateway: a gateway killed with SIGKILL
// leaves no process of its adapters behind. The adapter (running as
// nobody) leaves a sleeper in its process group, one in a session of its
// own and one re-parented from a child that called setsid and exited, all
// ignoring SIGTERM; the death signal reaches the adapter alone, and its
// shim, which learns of the gateway's death, kills the rest: every one is
// gone within 1 s of the kill.
func TestBinaryAdapterTreeDiesWithGateway(t *testing.T) {
	t.Parallel()
	man := `{"name":"forker","version":"0.1.0","kind":"service","exec":"testadapter",
 "args":["--fork","child","--fork","setsid","--fork","grandchild-setsid"],
 "env_pass":[],"grant":{"level":"read","scope":[]},"devices":[],"timeouts":{"request_ms":10000}}`
	src := buildAdapter(t, "./adapters/testadapter", "testadapter", []byte(man))
	g, pid := adapterGateway(t, src, "forker")
	if uid := procUID(t, pid); uid != nobodyUID(t) {
		t.Errorf("adapter %d runs as uid %d, want nobody's", pid, uid)
	}
	pids := append(sleepers(t, filepath.Join(manifest.StateDir(g.dir, "forker"), "children.txt"), 3), pid)
	for _, p := range pids {
		if !alive(p) {
			t.Fatalf("pid %d of the adapter is not running before the kill", p)
		}
	}
	g.kill(t)
	killed := time.Now()
	// Nothing reports the end of a process that is not our child: polled.
	for _, p := range pids {
		for alive(p) {
			if time.Since(killed) > time.Second {
				t.Fatalf("pid %d of the adapter (%v) still runs %v after the gateway was killed", p, pids, time.Since(killed))
			}
			<-time.After(10 * time.Millisecond)
		}
	}
}

// sleepers waits for n pids in the test adapter's children.txt at path.
func sleepers(t *testing.T, path string, n int) []int {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for {
		b, _ := os.ReadFile(path)
		if lines := strings.Fields(string(b)); len(lines) >= n {
			var pids []int
			for _, l := range lines {
				p, err := strconv.Atoi(l)
				if err != nil {
					t.Fatalf("%s: %q", path, b)
				}
				pids = append(pids, p)
			}
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %q after %v, want %d pids", path, b, waitLong, n)
		}
		<-time.After(20 * time.Millisecond) // written by another process: polled
	}
}

// procUID is the real uid pid runs as.
func procUID(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(b), "\nUid:")
	var uid int
	if _, err := fmt.Sscan(rest, &uid); err != nil {
		t.Fatalf("uid of %d: %v", pid, err)
	}
	return uid
}

func nobodyUID(t *testing.T) int {
	t.Helper()
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	return uid
}

// TestBinaryDevicesStartsNoTool: `gateway devices` shows the last known
// values and reads nothing: a tool adapter's device is listed without
// the tool being started (the test adapter writes start.json in its home
// when it starts). `gateway read` starts it and measures; the listing
// then shows that value, with its age.
func TestBinaryDevicesStartsNoTool(t *testing.T) {
	t.Parallel()
	man := `{"name":"meter","version":"0.1.0","kind":"tool","exec":"testadapter","args":["--values","{\"volts\":3.5}"],
 "env_pass":[],"grant":{"level":"read","scope":[]},
 "devices":[{"id":"volts","kind":"sensor","access":"r","risk":"low","schema":{"type":"number"}}],"timeouts":{"request_ms":10000}}`
	src := buildAdapter(t, "./adapters/testadapter", "testadapter", []byte(man))
	state, cfg := installAdapter(t, src, "meter", "")
	g := startGatewayWith(t, state, 8, "--config", cfg)
	started := filepath.Join(manifest.StateDir(state, "meter"), "start.json")
	row := regexp.MustCompile(`(?m)^meter\.volts\s+sensor\s+r\s+low\s+\S+\s+(.*?)\s+-$`)

	out := gwOK(t, "devices", "--state-dir", state)
	if m := row.FindStringSubmatch(out); m == nil || m[1] != "-" {
		t.Errorf("devices before any read:\n%s\nwant meter.volts with no value", out)
	}
	if _, err := os.Stat(started); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the listing started the tool (%s: %v)", started, err)
	}
	if st := adapterStatusJSON(t, g, "meter"); st.State == "running" || st.State == "starting" {
		t.Fatalf("the tool is %s after the listing", st.State)
	}

	if got := strings.TrimSpace(gwOK(t, "read", "meter.volts", "--state-dir", state)); got != "3.5" {
		t.Errorf("read meter.volts: %q, want 3.5", got)
	}
	if _, err := os.Stat(started); err != nil {
		t.Errorf("read did not start the tool: %v", err)
	}
	out = gwOK(t, "devices", "--state-dir", state)
	if m := row.FindStringSubmatch(out); m == nil || !regexp.MustCompile(`^3\.5 \((just now|\d+s ago)\)$`).MatchString(m[1]) {
		t.Errorf("devices after the read:\n%s\nwant meter.volts 3.5 with its age", out)
	}
}
