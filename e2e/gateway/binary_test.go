package gateway_test

// Whole-binary tests (DESIGN.md, "Testing tiers", tier 2): the built
// gateway runs as a child process, and the tests use it as its users do,
// through its client commands and over real sockets. The helpers are in
// binary_helpers_test.go.

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

var simDevices = []string{"sim.button", "sim.door", "sim.fan", "sim.heater", "sim.led", "sim.meter", "sim.temperature"}

// TestBinaryFirstStart: the first start creates admin.token (0600) and
// logs its path, never the token; the next start keeps it.
func TestBinaryFirstStart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "admin.token")
	created := `msg="created the first admin token" file="?` + regexp.QuoteMeta(path) + `"?$`

	g := startGateway(t, dir)
	g.err.waitFor(t, 0, created, waitLong)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("admin.token has mode %v, want 0600", fi.Mode().Perm())
	}
	first, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !tokenLine.Match(first) {
		t.Fatalf("admin.token holds %q, want one token", first)
	}
	// A client on the same machine finds the token by itself.
	if out := gwOK(t, "read", "sim.led", "--hub", g.tcp, "--state-dir", dir); out != "false\n" {
		t.Errorf("read sim.led with admin.token printed %q", out)
	}
	g.stop(t)
	if strings.Contains(g.err.text(), strings.TrimSpace(string(first))) {
		t.Fatal("the log shows the admin token")
	}

	g2 := startGateway(t, dir)
	if out := gwOK(t, "read", "sim.led", "--hub", g2.ws, "--state-dir", dir); out != "false\n" {
		t.Errorf("read sim.led after a restart printed %q", out)
	}
	g2.stop(t)
	if strings.Contains(g2.err.text(), "created the first admin token") {
		t.Errorf("the second start created an admin token again:\n%s", g2.err.text())
	}
	second, err := os.ReadFile(path)
	if err != nil || string(second) != string(first) {
		t.Errorf("admin.token changed at the second start (%v)", err)
	}
	if names := listTokens(t, dir); !slices.Equal(names, []string{"admin"}) {
		t.Errorf("tokens after two starts: %q, want only admin", names)
	}
}

// TestBinaryStory is the user's story: a watch runs, a write to sim.led
// succeeds, and the watch prints the new value; over each transport, with
// the other client commands and their --json output beside it.
func TestBinaryStory(t *testing.T) {
	for _, transport := range []string{"ws", "tcp", "unix"} {
		t.Run(transport, func(t *testing.T) {
			dir := t.TempDir()
			g := startGateway(t, dir, "--unix", filepath.Join(dir, "hal.sock"))
			hub := map[string]string{"ws": g.ws, "tcp": g.tcp, "unix": g.unix}[transport]
			if hub == "" {
				t.Fatalf("the gateway did not log its %s URL:\n%s", transport, g.err.text())
			}
			flags := []string{"--hub", hub, "--state-dir", dir}
			client := func(args ...string) []string { return append(args, flags...) }

			w, _ := watchProc(t, client()...)
			wj := startChild(t, client("watch", "--json")...)
			wj.err.waitFor(t, 0, watchTS+`connected to `, waitLong)
			wj.out.waitFor(t, 0, jsonValue("sim.led", "false"), waitLong)

			out := gwOK(t, client("write", "sim.led", "true")...)
			m := regexp.MustCompile(`^sim\.led = true \(seq (\d+)\)\n$`).FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("write printed %q", out)
			}
			w.out.waitFor(t, 0, watchTS+`sim\.led = true \(seq `+m[1]+`\)$`, waitLong)
			wj.out.waitFor(t, 0, jsonValue("sim.led", "true"), waitLong)

			checkDevicesTable(t, gwOK(t, client("devices")...))
			checkDevicesJSON(t, gwOK(t, client("devices", "--json")...), simDevices)
			checkTemperature(t, withoutUnit(t, gwOK(t, client("read", "sim.temperature")...), " °C"))
			var read struct {
				Device string
				Value  json.RawMessage
				Seq    uint64
			}
			out = gwOK(t, client("read", "--json", "sim.temperature")...)
			if err := json.Unmarshal([]byte(out), &read); err != nil || read.Device != "sim.temperature" || read.Seq == 0 {
				t.Errorf("read --json printed %q (%v)", out, err)
			}
			checkTemperature(t, string(read.Value))
			var wrote struct {
				Status string
				Device string
				Value  *bool
			}
			out = gwOK(t, client("write", "--json", "sim.led", "false")...)
			if err := json.Unmarshal([]byte(out), &wrote); err != nil || wrote.Status != "applied" || wrote.Device != "sim.led" || wrote.Value == nil || *wrote.Value {
				t.Errorf("write --json printed %q (%v)", out, err)
			}
			w.out.waitFor(t, 0, watchTS+`sim\.led = false \(seq \d+\)$`, waitLong)
			wj.out.waitFor(t, 0, jsonValue("sim.led", "false")+`.*"seq":`, waitLong)

			for _, c := range []*child{w, wj} {
				if code, _ := c.signal(t, syscall.SIGINT, 3*time.Second); code != 0 {
					t.Errorf("%s exited %d after SIGINT, want 0; stderr %q", c.name, code, c.err.text())
				}
			}
			checkJSONLines(t, wj.out.text())
		})
	}
}

// jsonValue matches a hal/value notification line of watch --json.
func jsonValue(id, value string) string {
	dev, val := `"device":"`+regexp.QuoteMeta(id)+`"`, `"value":`+value
	return `"method":"hal/value".*(` + dev + `.*` + val + `|` + val + `.*` + dev + `)`
}

// checkJSONLines checks that every line of watch --json is a JSON-RPC
// notification.
func checkJSONLines(t *testing.T, text string) {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		var n struct {
			JSONRPC string
			Method  string
			Params  map[string]any
		}
		if err := json.Unmarshal([]byte(line), &n); err != nil || n.JSONRPC != "2.0" || n.Method == "" || n.Params == nil {
			t.Errorf("watch --json printed %q (%v)", line, err)
		}
	}
}

func checkDevicesTable(t *testing.T, out string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 1+len(simDevices) || !regexp.MustCompile(`^ID\s+KIND\s+ACCESS\s+RISK\s+STATE\s+VALUE\s+LABEL$`).MatchString(lines[0]) {
		t.Fatalf("devices printed:\n%s", out)
	}
	if !slices.ContainsFunc(lines, regexp.MustCompile(`^sim\.led\s+gpio\.output\s+rw\s+low\s+ok\s+true \((?:just now|\d+[smh] ago)\)\s+LED$`).MatchString) {
		t.Errorf("devices does not show sim.led on:\n%s", out)
	}
	if !slices.ContainsFunc(lines, regexp.MustCompile(`^sim\.fan\s+pwm\s+rw\s+low\s+ok\s+\d+ % \((?:just now|\d+[smh] ago)\)\s+Fan$`).MatchString) {
		t.Errorf("devices does not show sim.fan's unit and label:\n%s", out)
	}
}

// checkDevicesJSON checks that devices --json is one JSON line listing
// exactly the devices want.
func checkDevicesJSON(t *testing.T, out string, want []string) {
	t.Helper()
	var res struct {
		Devices []struct{ ID string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || strings.Count(out, "\n") != 1 {
		t.Fatalf("devices --json printed %q (%v)", out, err)
	}
	var ids []string
	for _, d := range res.Devices {
		ids = append(ids, d.ID)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, want) {
		t.Errorf("devices --json lists %q, want %q", ids, want)
	}
}

// withoutUnit is a value printed by `gateway read` with its unit after
// its one number ({"temperature":20.5 °C}) as JSON again, the unit gone;
// the unit missing fails t.
func withoutUnit(t *testing.T, out, unit string) string {
	t.Helper()
	if strings.Count(out, unit) != 1 {
		t.Errorf("read printed %q, want one number with its unit %q", out, unit)
	}
	return strings.Replace(out, unit, "", 1)
}

// checkTemperature checks a value of sim.temperature: the bench at
// ambient, since nothing turned the heater on.
func checkTemperature(t *testing.T, out string) {
	t.Helper()
	var v struct{ Temperature *float64 }
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.Temperature == nil || *v.Temperature < 19.5 || *v.Temperature > 20.5 {
		t.Errorf("sim.temperature = %q (%v), want about 20", out, err)
	}
}

// TestBinaryUnixSocket: the socket is for the owner and its group, and a
// socket left behind by a crash does not stop the next start.
func TestBinaryUnixSocket(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "hal.sock")
	g := startGateway(t, dir, "--unix", sock)
	if g.unix != "unix://"+sock {
		t.Errorf("the gateway logged %q for its Unix socket, want unix://%s", g.unix, sock)
	}
	fi, err := os.Lstat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o660 {
		t.Errorf("%s has mode %v, want a socket with mode 0660", sock, fi.Mode())
	}
	gwOK(t, "write", "sim.led", "true", "--hub", g.unix, "--state-dir", dir)

	g.kill(t)
	if _, err := os.Lstat(sock); err != nil {
		t.Fatalf("after a crash the socket is gone (%v); this test wants a stale one", err)
	}
	g = startGateway(t, dir, "--unix", sock)
	if out := gwOK(t, "read", "sim.led", "--hub", g.unix, "--state-dir", dir); out != "false\n" {
		t.Errorf("read sim.led over the new socket printed %q", out)
	}
	g.stop(t)
}

// TestBinaryTokens: tokens added, used, refused and revoked with the
// token commands while the gateway runs.
func TestBinaryTokens(t *testing.T) {
	dir := t.TempDir()
	g := startGateway(t, dir)
	tok := g.addToken(t, "a1", "read")
	hub := []string{"--hub", g.ws, "--token", tok}

	if out := gwOK(t, append([]string{"read", "sim.led"}, hub...)...); out != "false\n" {
		t.Errorf("read with the new token printed %q", out)
	}
	wantOneLineError(t, gw(t, append([]string{"write", "sim.led", "true"}, hub...)...), "hal/write needs scope control_low")

	out := gwOK(t, "token", "list", "--state-dir", dir)
	if !regexp.MustCompile(`(?m)^a1\s+agent\s+read\s+all\s+\d{4}-`).MatchString(out) || strings.Contains(out, tok) {
		t.Errorf("token list printed:\n%s", out)
	}

	c, err := dial(t, g.tcp, tok)
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Init().Principal; p.Name != "a1" || p.Kind != "agent" || p.Scope != "read" {
		t.Errorf("the hub knows the token as %+v", p)
	}
	w, _ := watchProc(t, hub...)

	gwOK(t, "token", "revoke", "a1", "--state-dir", dir)
	select {
	case <-c.Done():
		t.Logf("connection ended: %v", c.Err())
	case <-time.After(time.Second):
		t.Fatal("the connection of a revoked token is still open 1 s after the revoke")
	}
	// The watch's connection ends too, and its next one is refused.
	code := w.wait(t, waitLong)
	wantOneLineError(t, result{stderr: w.err.text() + "\n", code: code}, "the hub refused the token")

	if names := listTokens(t, dir); slices.Contains(names, "a1") {
		t.Errorf("token list after the revoke: %q", names)
	}
	wantOneLineError(t, gw(t, append([]string{"read", "sim.led"}, hub...)...), "the hub refused the token")
}

// TestBinaryDevicesLimitedToken: a token limited to some devices sees only
// those.
func TestBinaryDevicesLimitedToken(t *testing.T) {
	dir := t.TempDir()
	g := startGateway(t, dir)
	tok := g.addToken(t, "led-only", "control_low", "--devices", "sim.led")
	hub := []string{"--hub", g.tcp, "--token", tok}

	checkDevicesJSON(t, gwOK(t, append([]string{"devices", "--json"}, hub...)...), []string{"sim.led"})
	out := gwOK(t, append([]string{"devices"}, hub...)...)
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[1], "sim.led ") {
		t.Errorf("devices printed:\n%s", out)
	}
	gwOK(t, append([]string{"write", "sim.led", "true"}, hub...)...)
	wantOneLineError(t, gw(t, append([]string{"read", "sim.door"}, hub...)...), `no such device "sim.door"`)
}

// TestBinaryOneLineErrors: every failure a person runs into is one line.
func TestBinaryOneLineErrors(t *testing.T) {
	dir := t.TempDir()
	g := startGateway(t, dir)
	state := []string{"--state-dir", dir}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"nothing listening ws", []string{"devices", "--hub", "ws://" + closedPort(t) + "/hal"}, "nothing listening at ws://"},
		{"nothing listening tcp", []string{"read", "sim.led", "--hub", "tcp://" + closedPort(t)}, "nothing listening at tcp://"},
		{"nothing listening unix", []string{"read", "sim.led", "--hub", "unix://" + filepath.Join(dir, "none.sock")}, "nothing listening at unix://"},
		{"bad token ws", []string{"read", "sim.led", "--hub", g.ws, "--token", "gw_bad"}, "the hub refused the token: unknown or revoked token"},
		{"bad token tcp", []string{"devices", "--hub", g.tcp, "--token", "gw_bad"}, "the hub refused the token: unknown or revoked token"},
		{"no token", []string{"read", "sim.led", "--hub", g.tcp, "--state-dir", t.TempDir()}, "the hub wants a token and none was given; give --token"},
		{"unknown device read", append([]string{"read", "sim.nope", "--hub", g.ws}, state...), `no such device "sim.nope"`},
		{"unknown device write", append([]string{"write", "sim.nope", "true", "--hub", g.tcp}, state...), `no such device "sim.nope"`},
		{"wrong type", append([]string{"write", "sim.led", "on", "--hub", g.ws}, state...), "value of the wrong type for sim.led"},
		{"wrong type number", append([]string{"write", "sim.fan", "true", "--hub", g.tcp}, state...), "value of the wrong type for sim.fan"},
		{"out of range", append([]string{"write", "sim.fan", "150", "--hub", g.tcp}, state...), "sim.fan"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantOneLineError(t, gw(t, tc.args...), tc.want)
		})
	}
	if out := gwOK(t, append([]string{"read", "sim.led", "--hub", g.ws}, state...)...); out != "false\n" {
		t.Errorf("sim.led = %q after refused writes", out)
	}
}

// closedPort returns a loopback address where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestBinaryConfig: check and run share the validator; a bad file starts
// nothing.
func TestBinaryConfig(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, good, "board: sim\nhub:\n  conformance: read\n")
	writeFile(t, bad, `board: sim
hub:
  conformance: fuul
  limits:
    maxInflight: 3
    initTimeout: soon
`)
	if r := gw(t, "check", "--config", good); r.code != 0 || r.stdout != good+": ok\n" || r.stderr != "" {
		t.Errorf("check good.yaml: %+v", r)
	}

	wantPaths := []string{"hub.conformance", "hub.limits.maxInflight", "hub.limits.initTimeout"}
	r := gw(t, "check", "--config", bad)
	if r.code != 1 || r.stdout != "" {
		t.Errorf("check bad.yaml: exit %d, stdout %q; want 1 and nothing", r.code, r.stdout)
	}
	checkFaultLines(t, r.stderr, bad, wantPaths)

	state := filepath.Join(dir, "state")
	r = gw(t, "run", "--config", bad, "--state-dir", state, "--http", "127.0.0.1:0", "--tcp", "127.0.0.1:0")
	if r.code != 1 {
		t.Errorf("run with bad.yaml: exit %d, want 1", r.code)
	}
	checkFaultLines(t, r.stderr, bad, wantPaths)
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("run with bad.yaml created its state directory (%v)", err)
	}

	out := gwOK(t, "version")
	if !regexp.MustCompile(`^gateway \S+ \(commit \S+\)\n$`).MatchString(out) {
		t.Errorf("version printed %q", out)
	}
}

// checkFaultLines checks that stderr is one `gateway: file: path:
// message` line per fault, in order, and nothing else (no listening, no
// ready).
func checkFaultLines(t *testing.T, stderr, file string, paths []string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if len(lines) != len(paths) {
		t.Fatalf("stderr has %d lines, want %d:\n%s", len(lines), len(paths), stderr)
	}
	for i, p := range paths {
		prefix := "gateway: " + file + ": " + p + ": "
		if rest, ok := strings.CutPrefix(lines[i], prefix); !ok || rest == "" {
			t.Errorf("line %d is %q, want %q and a message", i+1, lines[i], prefix)
		}
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestBinaryRestart: watches stay up while the gateway is killed and
// started again on the same ports, and report the restart; SIGTERM then
// stops the gateway cleanly with a watch connected.
func TestBinaryRestart(t *testing.T) {
	dir := t.TempDir()
	g := startGateway(t, dir)
	ws, boot1 := watchProc(t, "--hub", g.ws, "--state-dir", dir)
	tcp, boot := watchProc(t, "--hub", g.tcp, "--state-dir", dir)
	if boot != boot1 {
		t.Fatalf("two watches of one gateway saw runs %s and %s", boot1, boot)
	}
	marks := []int{ws.out.len(), tcp.out.len()}

	g.kill(t)
	for _, w := range []*child{ws, tcp} {
		w.out.waitFor(t, 0, watchTS+`disconnected: .*; retrying in \d`, waitLong)
	}
	g = startGateway(t, dir, "--http", g.httpAddr, "--tcp", g.tcpAddr)
	for i, w := range []*child{ws, tcp} {
		_, m := w.out.waitFor(t, marks[i], watchTS+`hub restarted \(new run ([^)]+)\); values read again$`, waitLong)
		if m[1] == boot1 {
			t.Errorf("%s: the new run has the old bootId %s", w.name, boot1)
		}
		w.out.waitFor(t, marks[i], watchTS+`sim\.led = false \(seq \d+, current\)$`, waitLong)
	}
	tok, err := os.ReadFile(filepath.Join(dir, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := dial(t, g.tcp, strings.TrimSpace(string(tok)))
	if err != nil {
		t.Fatal(err)
	}
	boot2 := c.Init().BootID
	if boot2 == boot1 {
		t.Errorf("the restarted gateway kept bootId %s", boot1)
	}
	if !strings.Contains(ws.out.text(), "hub restarted (new run "+boot2+")") {
		t.Errorf("the watch reported another run than %s:\n%s", boot2, ws.out.text())
	}

	// The watches are live again: a write reaches them.
	out := gwOK(t, "write", "sim.led", "true", "--hub", g.tcp, "--state-dir", dir)
	m := regexp.MustCompile(`\(seq (\d+)\)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("write printed %q", out)
	}
	for i, w := range []*child{ws, tcp} {
		w.out.waitFor(t, marks[i], watchTS+`sim\.led = true \(seq `+m[1]+`\)$`, waitLong)
	}

	c.Close()
	g.stop(t)
	ws.out.waitFor(t, marks[0], watchTS+`disconnected: `, waitLong)
}

// TestBinarySimInputs: on the sim board an admin plays the outside world;
// nobody else may, and a sensor is never written.
func TestBinarySimInputs(t *testing.T) {
	dir := t.TempDir()
	g := startGateway(t, dir)
	admin := []string{"--hub", g.ws, "--state-dir", dir}

	out := gwOK(t, append([]string{"write", "sim.door", "true"}, admin...)...)
	if !regexp.MustCompile(`^sim\.door = true \(seq \d+\)\n$`).MatchString(out) {
		t.Errorf("write sim.door printed %q", out)
	}
	if out := gwOK(t, append([]string{"read", "sim.door"}, admin...)...); out != "true\n" {
		t.Errorf("read sim.door = %q after the admin opened it", out)
	}

	tok := g.addToken(t, "bot", "control_low")
	agent := []string{"--hub", g.tcp, "--token", tok}
	wantOneLineError(t, gw(t, append([]string{"write", "sim.door", "false"}, agent...)...), "only an admin may play the outside world on sim.door")
	wantOneLineError(t, gw(t, append([]string{"write", "sim.button", "true"}, agent...)...), "only an admin may play the outside world on sim.button")
	gwOK(t, append([]string{"write", "sim.led", "true"}, agent...)...)
	if out := gwOK(t, append([]string{"read", "sim.door"}, agent...)...); out != "true\n" {
		t.Errorf("read sim.door = %q after the refused write", out)
	}

	wantOneLineError(t, gw(t, append([]string{"write", "sim.temperature", "5"}, admin...)...), "read-only")
	wantOneLineError(t, gw(t, append([]string{"write", "sim.temperature", `{"temperature":5}`}, admin...)...), "read-only")
}
