package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/halhub/hubtest"
	"github.com/openhal/gateway/openhal"
)

// cliApp runs the commands of these tests: a build of no version, with
// no part of the gateway's own (cli.Env): the client commands need none
// when given --hub URL.
var cliApp = &app{env: Env{Version: "dev", Commit: "unknown"}}

// runClient runs a client command and returns its stdout, stderr and error.
func runClient(t *testing.T, cmd func([]string, io.Writer, io.Writer) error, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := cmd(args, &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

// noEnv clears the variables the client commands read.
func noEnv(t *testing.T) {
	t.Setenv("GATEWAY_HUB", "")
	t.Setenv("GATEWAY_TOKEN", "")
}

func TestDevicesTable(t *testing.T) {
	noEnv(t)
	hub := hubtest.New(t)
	url := hub.Listen("ws")
	out, _, err := runClient(t, cliApp.cmdDevices, "--hub", url, "--token", hub.Admin)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// The last known values, with their age: a loaded machine may take a
	// second or more from the bench's start to the listing.
	age := `\((?:just now|\d+s ago)\)`
	want := []*regexp.Regexp{
		regexp.MustCompile(`^ID\s+KIND\s+ACCESS\s+RISK\s+STATE\s+VALUE\s+LABEL$`),
		regexp.MustCompile(`^sim\.door\s+gpio\.input\s+r\s+low\s+ok\s+false ` + age + `\s+-$`),
		regexp.MustCompile(`^sim\.heater\s+gpio\.output\s+rw\s+high\s+ok\s+false ` + age + `\s+-$`),
		regexp.MustCompile(`^sim\.led\s+gpio\.output\s+rw\s+low\s+ok, no safe value\s+false ` + age + `\s+-$`), // hubtest's LED has none
		regexp.MustCompile(`^sim\.temperature\s+sensor\s+r\s+low\s+ok\s+\{"temperature":20\.5 °C\} ` + age + `\s+-$`),
	}
	if len(lines) != len(want) {
		t.Fatalf("devices printed\n%s", out)
	}
	for i, re := range want {
		if !re.MatchString(lines[i]) {
			t.Errorf("line %d %q does not match %s", i, lines[i], re)
		}
	}
}

func TestDevicesJSON(t *testing.T) {
	noEnv(t)
	hub := hubtest.New(t)
	// Flags after nothing, the hub from $GATEWAY_HUB, the token from
	// $GATEWAY_TOKEN.
	t.Setenv("GATEWAY_HUB", hub.Listen("tcp"))
	t.Setenv("GATEWAY_TOKEN", hub.Agent)
	out, _, err := runClient(t, cliApp.cmdDevices, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Devices []struct{ ID string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Devices) != 4 || strings.Count(out, "\n") != 1 {
		t.Fatalf("devices --json printed %q (%v)", out, err)
	}
}

func TestRead(t *testing.T) {
	noEnv(t)
	hub := hubtest.New(t)
	url := hub.Listen("tcp")
	tok := "--token=" + hub.Admin
	// An output's value is the one last applied (sim.led, seq 1); a sensor
	// measures afresh, which is a new value: sim.temperature seq 5, then
	// sim.door seq 6.
	for _, tc := range []struct {
		args []string
		want *regexp.Regexp
	}{
		{[]string{"sim.led"}, regexp.MustCompile(`^false\n$`)},
		{[]string{"sim.temperature"}, regexp.MustCompile(`^\{"temperature":20\.5 °C\}\n$`)},
		{[]string{"sim.led", "-v"}, regexp.MustCompile(`^false \(ts 2026-01-02T03:04:05\.000000006Z, seq 1\)\n$`)},
		{[]string{"--json", "sim.door"}, regexp.MustCompile(`^\{"device":"sim\.door","value":false,"ts":"2026-01-02T03:04:05\.000000006Z","seq":6,"devSeq":2\}\n$`)},
	} {
		out, _, err := runClient(t, cliApp.cmdRead, append(tc.args, "--hub", url, tok)...)
		if err != nil || !tc.want.MatchString(out) {
			t.Errorf("read %v = %q, %v; want %s", tc.args, out, err, tc.want)
		}
	}
}

func TestWrite(t *testing.T) {
	noEnv(t)
	hub := hubtest.New(t)
	url := hub.Listen("ws")
	out, _, err := runClient(t, cliApp.cmdWrite, "sim.led", "true", "--hub", url, "--token", hub.Admin)
	if err != nil || out != "sim.led = true (seq 5)\n" {
		t.Errorf("write = %q, %v", out, err)
	}
	out, _, err = runClient(t, cliApp.cmdWrite, "--json", "sim.led", "false", "--hub", url, "--token", hub.Admin)
	if err != nil || !strings.HasPrefix(out, `{"status":"applied","device":"sim.led","value":false,`) {
		t.Errorf("write --json = %q, %v", out, err)
	}
	// An agent's write of a high-risk device waits for an admin.
	out, _, err = runClient(t, cliApp.cmdWrite, "sim.heater", "true", "--reason", "preheat", "--hub", url, "--token", hub.Agent)
	want := regexp.MustCompile(`^sim\.heater = true is pending: confirmation (\S+) waits for an admin until (?:\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d \(in (?:\d+h)?(?:\d+m)?\d+s\) \(gateway confirm approve (\S+) --hub ws://127\.0\.0\.1:\d+/hal\)\n$`)
	if m := want.FindStringSubmatch(out); err != nil || m == nil || m[1] != m[2] {
		t.Errorf("pending write = %q, %v", out, err)
	}
}

func TestParseValue(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"true", "true"},
		{"42", "42"},
		{"-5", "-5"},
		{`{"a":1}`, `{"a":1}`},
		{`"quoted"`, `"quoted"`},
		{"on", `"on"`},
		{"MEAS?", `"MEAS?"`},
		{"", `""`},
		{" 7 ", "7"},
	} {
		if got := string(parseValue(tc.in)); got != tc.want {
			t.Errorf("parseValue(%q) = %s; want %s", tc.in, got, tc.want)
		}
	}
}

func TestParseClientArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		pos  []string
		json bool
	}{
		{[]string{"sim.fan", "-5", "--json"}, []string{"sim.fan", "-5"}, true},
		{[]string{"--hub", "tcp://h:1", "sim.led", "--json", "true"}, []string{"sim.led", "true"}, true},
		{[]string{"sim.meter", "--", "--raw"}, []string{"sim.meter", "--raw"}, false},
		{[]string{"--json=false", "x"}, []string{"x"}, false},
	} {
		fs, f := cliApp.newClientFlags("write", "", true, &bytes.Buffer{})
		pos, err := parseClientArgs(fs, tc.args)
		if err != nil || strings.Join(pos, " ") != strings.Join(tc.pos, " ") || f.json != tc.json {
			t.Errorf("parse %q = %q json=%v, %v; want %q json=%v", tc.args, pos, f.json, err, tc.pos, tc.json)
		}
	}
	fs, _ := cliApp.newClientFlags("write", "", true, &bytes.Buffer{})
	if _, err := parseClientArgs(fs, []string{"--nonesuch"}); !errors.Is(err, errUsage) {
		t.Errorf("unknown flag: %v; want errUsage", err)
	}
	fs, _ = cliApp.newClientFlags("write", "", true, &bytes.Buffer{})
	if _, err := parseClientArgs(fs, []string{"-h"}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v; want flag.ErrHelp", err)
	}
}

func TestTokenFromStateDir(t *testing.T) {
	noEnv(t)
	hub := hubtest.New(t)
	url := hub.Listen("tcp")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "admin.token"), []byte(hub.Admin+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The Hub knows only its random tokens: the read succeeds only if
	// the token from admin.token was sent.
	out, _, err := runClient(t, cliApp.cmdRead, "sim.led", "--hub", url, "--state-dir", dir)
	if err != nil || out != "false\n" {
		t.Errorf("read with admin.token = %q, %v", out, err)
	}

	// No token anywhere: the error says where one may come from.
	empty := t.TempDir()
	_, _, err = runClient(t, cliApp.cmdRead, "sim.led", "--hub", url, "--state-dir", empty)
	want := "the hub wants a token and none was given; give --token or set $GATEWAY_TOKEN (no admin.token in " + empty + ")"
	if err == nil || err.Error() != want {
		t.Errorf("no token: %v\nwant %s", err, want)
	}
}

func TestClientErrors(t *testing.T) {
	noEnv(t)
	hub := hubtest.New(t)
	url := hub.Listen("tcp")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nobody := "tcp://" + l.Addr().String()
	l.Close()
	tok := "--token=" + hub.Admin
	for _, tc := range []struct {
		name string
		cmd  func([]string, io.Writer, io.Writer) error
		args []string
		want string
	}{
		{"nothing listening", cliApp.cmdDevices, []string{"--hub", nobody, tok},
			"nothing listening at " + nobody + " (is the gateway running?)"},
		{"bad token", cliApp.cmdRead, []string{"sim.led", "--hub", url, "--token", "nope"},
			"the hub refused the token: unknown or revoked token"},
		{"bad token, --json", cliApp.cmdRead, []string{"sim.led", "--hub", url, "--token", "nope", "--json"},
			"the hub refused the token (UNAUTHORIZED): token_unknown"},
		{"unknown device", cliApp.cmdRead, []string{"sim.lde", "--hub", url, tok},
			`no such device "sim.lde"`},
		{"wrong type", cliApp.cmdWrite, []string{"sim.led", "on", "--hub", url, tok},
			"value of the wrong type for sim.led: want a boolean, got a string"},
		{"bad scheme", cliApp.cmdDevices, []string{"--hub", "http://127.0.0.1:7750/hal", tok}, // a usage error (exit 2)
			`devices: hub URL "http://127.0.0.1:7750/hal": unknown scheme; want ws://, wss://, tcp://, tls:// or unix://`},
	} {
		_, _, err := runClient(t, tc.cmd, tc.args...)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v\nwant %s", tc.name, err, tc.want)
		}
	}
	// Wrong number of arguments: a usage error that names what is
	// missing (Run prints it and the usage: TestUsageErrors).
	_, _, err = runClient(t, cliApp.cmdRead, "--hub", url)
	if !errors.Is(err, errUsage) || err.Error() != "read: missing device id" {
		t.Errorf("read without ID: %v", err)
	}
}

func startWatch(t *testing.T, args ...string) (stdout, stderr *stream, stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr = newStream(), newStream()
	done := make(chan error, 1)
	go func() { done <- cliApp.runWatch(ctx, args, stdout, stderr) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				err = fmt.Errorf("watch did not stop")
			}
		})
		return err
	}
	t.Cleanup(func() { stop() })
	return stdout, stderr, stop
}

func TestWatch(t *testing.T) {
	noEnv(t)
	hub := hubtest.New(t)
	url := hub.Listen("ws")
	// The token sees the bench (sim.*) but not lab.other, whose values
	// are no loss of its own: it is told each device's devSeq, no seq.
	other := hub.Add(otherDevice{})
	tok := hub.Token("watcher", openhal.KindAgent, openhal.ScopeRead, "sim.*")
	out, _, stop := startWatch(t, "--hub", url, "--token", tok)
	boot := regexp.QuoteMeta(hub.Hub().BootID())
	out.line(t, watchTS+`connected to `+regexp.QuoteMeta(url)+`: openhal test \(run `+boot+`\) as agent watcher, scope read$`)
	out.line(t, watchTS+`4 devices$`)
	out.line(t, watchTS+`sim\.temperature = \{"temperature":20\.5 °C\} \(devSeq 1, current\)$`)
	hub.Set("sim.led", true)
	out.line(t, watchTS+`sim\.led = true \(devSeq 2\)$`)
	other.Value(1.0, hubtest.Time)
	other.Value(2.0, hubtest.Time)
	hub.Set("sim.led", false)
	out.line(t, watchTS+`sim\.led = false \(devSeq 3\)$`)
	if text := out.text(); strings.Contains(text, "missed") {
		t.Errorf("the watch reported values missed while only a hidden device changed:\n%s", text)
	}
	hub.SetState("sim.door", device.StateFault, "stuck")
	out.line(t, watchTS+`sim\.door: state fault \(stuck\)$`)
	hub.Restart()
	out.line(t, watchTS+`disconnected: .*; retrying in \d+ms$`)
	out.line(t, watchTS+`hub restarted \(new run `+regexp.QuoteMeta(hub.Hub().BootID())+`\); values read again$`)
	if err := stop(); err != nil {
		t.Errorf("watch ended with %v; want nil after an interrupt", err)
	}
}

func TestWatchJSON(t *testing.T) {
	noEnv(t)
	hub := hubtest.New(t)
	url := hub.Listen("tcp")
	out, status, stop := startWatch(t, "--json", "--hub", url, "--token", hub.Admin)
	status.line(t, watchTS+`4 devices$`)
	out.line(t, `"device":"sim.temperature"`) // the end of the resync
	hub.Set("sim.led", true)
	line := out.line(t, `"seq":5`)
	var n struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  struct {
			Device string `json:"device"`
			Value  any    `json:"value"`
			Seq    uint64 `json:"seq"`
		} `json:"params"`
	}
	if err := json.Unmarshal([]byte(line), &n); err != nil || n.JSONRPC != "2.0" || n.Params.Device != "sim.led" || n.Params.Value != true || n.Params.Seq != 5 {
		t.Errorf("--json line %q (%v)", line, err)
	}
	if err := stop(); err != nil {
		t.Error(err)
	}
	// Only hal/value objects on stdout: the four read on connection, then
	// the one sent.
	text := out.text()
	got := strings.Split(strings.TrimSpace(text), "\n")
	if len(got) != 5 {
		t.Fatalf("stdout %q; want 5 lines", text)
	}
	for _, l := range got {
		if !strings.HasPrefix(l, `{"jsonrpc":"2.0","method":"hal/value","params":{"device":"sim.`) {
			t.Errorf("stdout line %q is not a hal/value", l)
		}
	}
}

func TestWatchRefusedToken(t *testing.T) {
	noEnv(t)
	hub := hubtest.New(t)
	_, _, err := runClient(t, func(args []string, stdout, stderr io.Writer) error {
		return cliApp.runWatch(context.Background(), args, stdout, stderr)
	}, "--hub", hub.Listen("tcp"), "--token", "nope")
	if err == nil || err.Error() != "the hub refused the token: unknown or revoked token" {
		t.Errorf("watch with a refused token: %v", err)
	}
}

// otherDevice is a device outside the bench's sim.* ids.
type otherDevice struct{}

func (otherDevice) Descriptor() device.Descriptor {
	return device.Descriptor{ID: "lab.other", Kind: device.KindSensor, Source: "test", Access: device.AccessRead,
		Risk: device.RiskLow, Schema: device.Schema{Type: device.TypeNumber}, State: device.StateOK}
}

func TestClientTimeout(t *testing.T) {
	noEnv(t)
	// A listener that accepts and never answers.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	url := "tcp://" + l.Addr().String()
	_, _, err = runClient(t, cliApp.cmdDevices, "--hub", url, "--token", "t", "--timeout", "100ms")
	want := "no answer from the hub at " + url + " within 100ms"
	if err == nil || err.Error() != want {
		t.Errorf("devices = %v; want %q", err, want)
	}
}
