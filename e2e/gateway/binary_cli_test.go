package gateway_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestBinaryHelp: on the real binary, help goes to stdout with exit 0 and
// a usage error to stderr with exit 2, one `gateway:` line first.
func TestBinaryHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--help"}, {"help"}, {"token", "-h"}, {"help", "token", "add"}, {"confirm", "--help"}, {"adapter", "install", "-h"}, {"run", "-h"}, {"check", "--help"}} {
		r := gw(t, args...)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "usage: gateway ") || r.stderr != "" {
			t.Errorf("gateway %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "gateway: missing command"},
		{[]string{"read"}, "gateway: read: missing device id"},
		{[]string{"token"}, "gateway: token: missing subcommand (add, list, revoke)"},
		{[]string{"run", "--nonesuch"}, "gateway: run: flag provided but not defined: -nonesuch"},
		{[]string{"token", "add", "--name", "bot", "--kind", "robot", "--scope", "read", "--state-dir", t.TempDir(), "--init"},
			`gateway: token add: unknown principal kind "robot" (want agent, operator or service)`},
		{[]string{"run", "--http", "nohost", "--state-dir", t.TempDir()}, `gateway: run: --http: want host:port such as 127.0.0.1:7750 (or "" to disable), got "nohost"`},
		{[]string{"devices", "--timeout", "0"}, `gateway: devices: invalid value "0" for flag -timeout: want a duration above 0`},
	} {
		r := gw(t, tc.args...)
		first, rest, _ := strings.Cut(r.stderr, "\n")
		if r.code != 2 || r.stdout != "" || first != tc.want || !strings.HasPrefix(rest, "usage: gateway ") {
			t.Errorf("gateway %s: exit %d, stdout %q, stderr %q; want exit 2, %q, then the usage", strings.Join(tc.args, " "), r.code, r.stdout, r.stderr, tc.want)
		}
	}
}

// TestBinaryConfigWording: a configuration's faults name the file, a
// misspelt key gets a guess at any level, and a gateway with no listener
// at all refuses to start.
func TestBinaryConfigWording(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	syntax := filepath.Join(dir, "syntax.yaml")
	writeFile(t, syntax, "board: sim\nhub:\n\tconformance: full\n")
	r := gw(t, "check", "--config", syntax)
	if want := "gateway: " + syntax + ": line 3: "; r.code != 1 || !strings.HasPrefix(r.stderr, want) || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("check of a YAML syntax error: exit %d, stderr %q; want one line starting %q", r.code, r.stderr, want)
	}
	typo := filepath.Join(dir, "typo.yaml")
	writeFile(t, typo, "board: sim\nhub:\n  listen:\n    htp: 127.0.0.1:7750\n")
	r = gw(t, "check", "--config", typo)
	if want := "gateway: " + typo + ": hub.listen.htp: unknown field (did you mean http?)\n"; r.code != 1 || r.stderr != want {
		t.Errorf("check of htp: exit %d, stderr %q; want %q", r.code, r.stderr, want)
	}

	state := filepath.Join(dir, "state")
	r = gw(t, "run", "--state-dir", state, "--http", "", "--tcp", "")
	if first, _, _ := strings.Cut(r.stderr, "\n"); r.code != 2 || !strings.HasPrefix(first, "gateway: run: no listener") || strings.Contains(r.stderr, "ready") {
		t.Errorf("run with no listener: exit %d, stderr %q; want exit 2, no listener", r.code, r.stderr)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("run with no listener created its state directory (%v)", err)
	}
}

// TestBinaryWriteLineInstrument: a write to the sim board's line
// instrument prints the instrument's answer when it gives one; a number
// where it wants a string gets a hint to quote it.
func TestBinaryWriteLineInstrument(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	g := startGateway(t, dir)
	admin := func(args ...string) []string { return append(args, "--hub", g.ws, "--state-dir", dir) }

	out := gwOK(t, admin("write", "sim.meter", "HELLO")...)
	if !regexp.MustCompile(`^sim\.meter = "HELLO" \(seq \d+\)\nsim\.meter answered "ERR unknown command"\n$`).MatchString(out) {
		t.Errorf("write HELLO printed %q", out)
	}
	out = gwOK(t, admin("write", "sim.meter", "*IDN?")...)
	if !strings.HasSuffix(out, "\nsim.meter answered \"OpenHAL,SIM-METER,0,0.1\"\n") {
		t.Errorf("write *IDN? printed %q", out)
	}
	// Not waiting: the line goes, the answer is not awaited.
	out = gwOK(t, admin("write", "sim.meter", "HELLO", "--reply-within", "0")...)
	if strings.Contains(out, "answered") {
		t.Errorf("write --reply-within 0 printed %q", out)
	}
	out = gwOK(t, admin("write", "sim.meter", "*IDN?", "--json")...)
	if !strings.Contains(out, `"reply":"OpenHAL,SIM-METER,0,0.1"`) {
		t.Errorf("write --json printed %q", out)
	}

	wantOneLineError(t, gw(t, admin("write", "sim.meter", "42")...),
		`value of the wrong type for sim.meter: want a string, got a number; to send it as a string, quote it: '"42"'`)
	if r := gw(t, admin("write", "sim.led", "on")...); strings.Contains(r.stderr, "quote it") {
		t.Errorf("a string for a boolean got the hint: %q", r.stderr)
	}
}
