package cli_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Every bad invocation found of the commands (docs/cli.md: a usage error
// exits 2 with the usage), beyond usageCases' one a command: values of
// flags that are not values of theirs, whichever part of the program
// finds them. Each prints `gateway: <what was wrong>`, then the command's
// usage, on stderr, nothing on stdout, and changes nothing (the token
// file is not made).
func TestBadInvocationsExit2(t *testing.T) {
	t.Setenv("GATEWAY_HUB", "")
	t.Setenv("GATEWAY_TOKEN", "")
	t.Setenv("GATEWAY_FINGERPRINT", "")
	dir := t.TempDir()
	add := func(flags ...string) []string {
		return append([]string{"token", "add", "--state-dir", dir, "--init"}, flags...)
	}
	tests := []struct {
		args []string
		want string // the error line
	}{
		{add("--name", "bot", "--kind", "robot", "--scope", "read"), `gateway: token add: unknown principal kind "robot" (want agent, operator or service)`},
		{add("--name", "bot", "--kind", "agent", "--scope", "root"), `gateway: token add: unknown scope "root" (want read, control_low, control_high or admin)`},
		{add("--name", "Bot", "--kind", "agent", "--scope", "read"), `gateway: token add: name "Bot" must match ^[a-z0-9][a-z0-9_.-]{0,63}$`},
		{add("--name", "bot", "--kind", "agent", "--scope", "read", "--devices", "sim.led,,sim.fan"), `gateway: token add: --devices "sim.led,,sim.fan" has an empty pattern`},
		{add("--name", "bot", "--kind", "agent", "--scope", "read", "--devices", "*"), `gateway: token add: device pattern "*" must be a device id or <id>.*`},
		{[]string{"write", "sim.led", "true", "--hub", "http://127.0.0.1:7750/hal"}, `gateway: write: hub URL "http://127.0.0.1:7750/hal": unknown scheme; want ws://, wss://, tcp://, tls:// or unix://`},
		{[]string{"stop", "--hub", "tcp://127.0.0.1"}, `gateway: stop: hub URL "tcp://127.0.0.1": want tcp://host:port`},
		{[]string{"devices", "--hub", "ws://"}, `gateway: devices: hub URL "ws://": want ws://host:port/hal`},
		{[]string{"watch", "--hub", "foo://x"}, `gateway: watch: hub URL "foo://x": unknown scheme; want ws://, wss://, tcp://, tls:// or unix://`},
		{[]string{"mcp", "--token", "gw_x", "--hub", "foo://x"}, `gateway: mcp: hub URL "foo://x": unknown scheme; want ws://, wss://, tcp://, tls:// or unix://`},
		{[]string{"status", "--hub", "wss://127.0.0.1:1/hal", "--fingerprint", "zz"}, `gateway: status: certificate fingerprint "zz": want the SHA-256 as 64 hex digits (colons allowed), as the gateway logs it`},
		{[]string{"read", "sim.led", "--hub", "tcp://127.0.0.1:1", "--fingerprint", strings.Repeat("ab", 32)}, `gateway: read: hub URL "tcp://127.0.0.1:1": a certificate fingerprint needs a TLS URL (wss:// or tls://)`},
	}
	// --timeout of every command that has one: above 0.
	for _, cmd := range [][]string{{"status"}, {"devices"}, {"read", "sim.led"}, {"write", "sim.led", "true"}, {"stop"}, {"resume"},
		{"confirm", "list"}, {"confirm", "approve", "c-1"}, {"confirm", "reject", "c-1"}, {"confirm", "cancel", "c-1"}, {"audit"},
		{"adapter", "status", "x"}, {"adapter", "reset", "x"}} {
		for _, v := range []string{"0", "-1s"} {
			name := strings.Join(cmd[:min(2, len(cmd))], " ")
			if cmd[0] == "read" || cmd[0] == "write" {
				name = cmd[0]
			}
			tests = append(tests, struct {
				args []string
				want string
			}{append(slices.Clone(cmd), "--timeout", v), `gateway: ` + name + `: invalid value "` + v + `" for flag -timeout: want a duration above 0`})
		}
	}
	for _, tt := range tests {
		out, errOut, code := cliRun(tt.args...)
		first, rest, _ := strings.Cut(errOut, "\n")
		if code != 2 || out != "" || first != tt.want || !regexp.MustCompile(`^usage: gateway `).MatchString(rest) {
			t.Errorf("gateway %s: exit %d, stdout %q, stderr %q\nwant exit 2, %q then the usage", strings.Join(tt.args, " "), code, out, errOut, tt.want)
		}
	}
	if entries, _ := filepathGlob(dir); len(entries) != 0 {
		t.Errorf("bad token adds left %v in the state directory", entries)
	}
}
