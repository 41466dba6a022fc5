package supervisor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/adapterproto"
	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/e2e/binaries"
	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/internal/halhub/token"
	"github.com/openhal/gateway/internal/supervisor/conn"
	"github.com/openhal/gateway/internal/supervisor/manifest"
	"github.com/openhal/gateway/internal/supervisor/process"
	"github.com/openhal/gateway/internal/supervisor/restart"
	"github.com/openhal/gateway/openhal"
)

// wait bounds every wait on a real event in these tests.
const wait = 15 * time.Second

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == process.ShimCommand {
		os.Exit(process.ShimMain(os.Args[2:]))
	}
	// Like the gateway: orphans of our adapters come back to us.
	if err := process.SetSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	binaries.Cleanup()
	os.Exit(code)
}

// testAdapter is the scripted test adapter, built once per test run
// (package binaries).
func testAdapter(t *testing.T) string {
	t.Helper()
	return binaries.Build(t, binaries.Program{Pkg: "./adapters/testadapter"})
}

// shortTiming runs the protocol's timeline shrunk, with the same shape.
func shortTiming() Timing {
	return Timing{
		Conn:    conn.Timing{Handshake: 2 * time.Second, PingInterval: 300 * time.Millisecond, PingTimeout: 150 * time.Millisecond, PingMisses: 3, Request: 2 * time.Second},
		Stop:    process.Timing{CloseStdin: 200 * time.Millisecond, Term: 200 * time.Millisecond, Kill: 500 * time.Millisecond},
		Events:  100 * time.Millisecond,
		Restart: restart.Policy{Base: 20 * time.Millisecond, Max: 80 * time.Millisecond, ResetAfter: 5 * time.Second, MaxCrashes: 8},
		Warm:    300 * time.Millisecond,
	}
}

// spec is one adapter to install.
type spec struct {
	name, kind string
	args       []string
	grant      string // JSON; default read over all
	devices    string // JSON array; default none
	envPass    []string
	requestMs  int
	folder     string // an adapter folder to install as is (pyledger)
}

// bench is a Hub with a board device, a TCP listener, and a supervisor.
type bench struct {
	t        *testing.T
	stateDir string
	reg      *device.Registry
	hub      *halhub.Hub
	sup      *Supervisor
	addr     string
	admin    string
	log      *syncBuffer
	timing   Timing
	user     string
	led      *ledDevice
}

func newBench(t *testing.T, specs ...spec) *bench {
	t.Helper()
	return newBenchTimed(t, shortTiming(), specs...)
}

// newBenchTimed is newBench with the supervisor's timing given.
func newBenchTimed(t *testing.T, timing Timing, specs ...spec) *bench {
	t.Helper()
	root := t.TempDir()
	// The adapters' user must be able to reach the state directory.
	for _, d := range []string{filepath.Dir(root), root} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	b := &bench{t: t, stateDir: filepath.Join(root, "state"), log: &syncBuffer{}, timing: timing}
	if err := os.Mkdir(b.stateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		b.user = "nobody" // always there; the gateway's own default user is not
	}
	logger := slog.New(slog.NewTextHandler(b.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	b.reg = device.NewRegistry(nil)
	b.led = &ledDevice{}
	if _, err := b.reg.Add(b.led); err != nil {
		t.Fatal(err)
	}
	b.hub = halhub.New(b.reg, halhub.Options{Version: "test", Logger: logger})
	store := token.Open(b.stateDir)
	tok, err := store.Add("root", openhal.KindAgent, openhal.ScopeAdmin, nil)
	if err != nil {
		t.Fatal(err)
	}
	table, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	b.hub.SetTokens(table)
	b.admin = tok
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go b.hub.ServeLines(ln)
	b.addr = "tcp://" + ln.Addr().String()
	t.Cleanup(func() { ln.Close(); b.hub.Close() })
	var names []string
	for _, s := range specs {
		b.install(s)
		names = append(names, s.name)
	}
	b.sup, err = New(Options{StateDir: b.stateDir, Enabled: names, Hub: b.hub, Registry: b.reg, Version: "test", Shim: os.Args[0],
		User: b.user, Timing: b.timing, Log: logger})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// start starts the supervisor; the test's end stops it.
func (b *bench) start() {
	b.sup.Start()
	b.t.Cleanup(b.sup.Stop)
}

// install writes an adapter folder for s and installs it.
func (b *bench) install(s spec) {
	t := b.t
	t.Helper()
	src := s.folder
	if src == "" {
		src = filepath.Join(t.TempDir(), s.name)
		if err := os.MkdirAll(src, 0o755); err != nil {
			t.Fatal(err)
		}
		copyExecutable(t, testAdapter(t), filepath.Join(src, "testadapter"))
		writeManifest(t, src, s)
	}
	if _, err := manifest.Install(src, b.stateDir); err != nil {
		t.Fatalf("install %s: %v", s.name, err)
	}
}

func writeManifest(t *testing.T, dir string, s spec) {
	t.Helper()
	if s.kind == "" {
		s.kind = adapterproto.KindService
	}
	if s.grant == "" {
		s.grant = `{"level":"read","scope":"all"}`
	}
	if s.devices == "" {
		s.devices = "[]"
	}
	m := map[string]any{
		"name": s.name, "version": "1.0.0", "kind": s.kind, "exec": "testadapter",
		"args": append([]string{}, s.args...), "env_pass": append([]string{}, s.envPass...),
		"grant": json.RawMessage(s.grant), "devices": json.RawMessage(s.devices),
	}
	if s.requestMs > 0 {
		m["timeouts"] = map[string]int{"request_ms": s.requestMs}
	}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, manifest.FileName), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyExecutable(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o755); err != nil {
		t.Fatal(err)
	}
}

// deviceAtChanges records device id's state at every change of an
// adapter's state, as the change happens (Watch runs under the adapter's
// lock): what anyone reading the status at that moment could read beside
// it. The returned function gives the record so far.
func (b *bench) deviceAtChanges(id string) func() []device.State {
	var mu sync.Mutex
	var seen []device.State
	ctx, cancel := context.WithCancel(context.Background())
	b.t.Cleanup(cancel)
	b.sup.Watch(ctx, func() {
		d, _ := b.reg.Describe(id)
		mu.Lock()
		seen = append(seen, d.State)
		mu.Unlock()
	})
	return func() []device.State {
		mu.Lock()
		defer mu.Unlock()
		return append([]device.State(nil), seen...)
	}
}

// change is an adapter's state, detail and crash count as one change of
// its state made them visible.
type change struct {
	state       restart.State
	detail      string
	consecutive int
}

// changes records adapter name's state changes as they happen (Watch runs
// under the adapter's lock, so the fields are read as the change left
// them). The returned function gives the record so far.
func (b *bench) changes(name string) func() []change {
	a := b.adapter(name)
	var mu sync.Mutex
	var seen []change
	ctx, cancel := context.WithCancel(context.Background())
	b.t.Cleanup(cancel)
	b.sup.Watch(ctx, func() {
		c := change{a.state, a.detail, a.consecutive} // a.mu is held: see Watch
		mu.Lock()
		seen = append(seen, c)
		mu.Unlock()
	})
	return func() []change {
		mu.Lock()
		defer mu.Unlock()
		return append([]change(nil), seen...)
	}
}

// adapter returns a loaded adapter.
func (b *bench) adapter(name string) *adapter {
	b.sup.mu.Lock()
	defer b.sup.mu.Unlock()
	return b.sup.adapters[name]
}

// waitState waits until adapter name is in state st.
func (b *bench) waitState(name string, st restart.State) Status {
	b.t.Helper()
	a := b.adapter(name)
	deadline := time.After(wait)
	for {
		a.mu.Lock()
		cur, changed := a.state, a.changed
		a.mu.Unlock()
		if cur == st {
			return a.status()
		}
		select {
		case <-changed:
		case <-deadline:
			var tail []string
			if a.stderr != nil {
				tail, _ = a.stderr.Tail(10)
			}
			b.t.Fatalf("adapter %s is %s, not %s, after %v: %+v\nits stderr:\n%s", name, cur, st, wait, a.status(), strings.Join(tail, "\n"))
		}
	}
}

// waitDeviceState waits for device id to reach state st in the registry:
// an adapter's status turns Running a moment before its devices go ok.
func (b *bench) waitDeviceState(id string, st device.State) {
	b.t.Helper()
	changed := make(chan struct{}, 1)
	cancel := b.reg.Subscribe(func(device.Event) {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	defer cancel()
	deadline := time.After(wait)
	for {
		d, _ := b.reg.Describe(id)
		if d.State == st {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			b.t.Fatalf("%s is %s, not %s, after %v", id, d.State, st, wait)
		}
	}
}

// home is the adapter's state directory, where the test adapter records.
func (b *bench) home(name string) string { return manifest.StateDir(b.stateDir, name) }

// waitFile waits until a file the adapter writes holds want. The adapter
// is another process: there is no event to wait on but the file itself.
func (b *bench) waitFile(name, file, want string) string {
	b.t.Helper()
	path := filepath.Join(b.home(name), file)
	deadline := time.Now().Add(wait)
	for {
		data, _ := os.ReadFile(path)
		if strings.Contains(string(data), want) {
			return string(data)
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("%s never held %q; it holds:\n%s", path, want, data)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// client dials the Hub as the admin.
func (b *bench) client() *halclient.Conn {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	c, err := halclient.Dial(ctx, b.addr, halclient.Options{Token: b.admin})
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() { c.Close() })
	return c
}

func ctxWait(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

// startRecord is the test adapter's start.json.
type startRecord struct {
	Pid    int      `json:"pid"`
	Pgid   int      `json:"pgid"`
	UID    int      `json:"uid"`
	GID    int      `json:"gid"`
	Groups []int    `json:"groups"`
	Cwd    string   `json:"cwd"`
	Env    []string `json:"env"`
	Probe  *struct {
		Readable bool   `json:"readable"`
		Error    string `json:"error"`
	} `json:"probe"`
}

func (b *bench) startRecord(name string) startRecord {
	b.t.Helper()
	b.waitFile(name, "start.json", "pid")
	data, err := os.ReadFile(filepath.Join(b.home(name), "start.json"))
	if err != nil {
		b.t.Fatal(err)
	}
	var r startRecord
	if err := json.Unmarshal(data, &r); err != nil {
		b.t.Fatalf("start.json: %v", err)
	}
	return r
}

// alive reports whether a process exists (and is not a zombie).
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// ledDevice is a board output for the adapters to reach through the Hub.
type ledDevice struct {
	mu     sync.Mutex
	writes []any
}

func (d *ledDevice) Descriptor() device.Descriptor {
	return device.Descriptor{ID: "sim.led", Kind: device.KindGPIOOutput, Source: "sim", Access: device.AccessReadWrite,
		Risk: device.RiskLow, Schema: device.Schema{Type: device.TypeBoolean}, Safe: false}
}

func (d *ledDevice) Write(_ context.Context, req device.WriteRequest) (device.WriteResult, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.writes = append(d.writes, req.Value)
	return device.WriteResult{}, nil
}

// syncBuffer is the gateway's log, shared by goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}
