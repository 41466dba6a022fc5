package gateway_test

// Whole-binary tests of "no token in clear by default" (issue 28, 3;
// openhal-0.1 §2), on the gateway's side: a plain listener off loopback
// is refused by check and run alike unless the configuration says
// insecure, which both then name as a warning; the installed
// configuration passes with no warning. (A plain socket handed over by
// systemd off loopback, warned at start, is in binary_systemd_test.go.)

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// installedStyle is the listen part the package shipped before issue 28:
// plain WebSocket and TCP on every address.
const installedStyle = `board: sim
hub:
  listen:
    http: 0.0.0.0:%d
    tcp: 0.0.0.0:%d
`

func TestBinaryPlainOffLoopbackRefused(t *testing.T) {
	config := writeConfig(t, fmt.Sprintf(installedStyle, 0, 0))
	r := gw(t, "check", "--config", config)
	if r.code != 1 {
		t.Errorf("check of plain listeners on 0.0.0.0: exit %d, stderr %q; want 1", r.code, r.stderr)
	}
	for _, want := range []string{
		"gateway: " + config + ": hub.listen.http: 0.0.0.0:0 is off loopback, and a plain listener there would carry every token in clear: " +
			"serve the network with hub.listen.wss, keep http on 127.0.0.1, or say that clear text is wanted with `http: {address: \"0.0.0.0:0\", insecure: true}` (gateway run: --insecure)\n",
		"gateway: " + config + ": hub.listen.tcp: 0.0.0.0:0 is off loopback",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("check's stderr:\n%s\nwant %q", r.stderr, want)
		}
	}
	// run refuses what check refuses, with the same words, and opens nothing.
	wantStartError(t, t.TempDir(), config, "hub.listen.tcp: 0.0.0.0:0 is off loopback")
	// The flags are judged by the same rule.
	c := startChild(t, "run", "--state-dir", t.TempDir(), "--http", "0.0.0.0:0")
	wantExit1(t, c, "hub.listen.http: 0.0.0.0:0 is off loopback")
}

func TestBinaryPlainOffLoopbackSaidInsecure(t *testing.T) {
	config := writeConfig(t, "board: sim\nhub:\n  listen:\n    http: {address: \"0.0.0.0:0\", insecure: true}\n    tcp: 127.0.0.1:0\n")
	r := gw(t, "check", "--config", config)
	want := "gateway: warning: hub.listen.http: 0.0.0.0:0 is off loopback with insecure: true: every token given to this listener crosses the network in clear, readable by anyone on the way; hub.listen.wss serves the same over TLS\n"
	if r.code != 0 || r.stdout != config+": ok\n" || r.stderr != want {
		t.Errorf("check with insecure: true: exit %d, stdout %q, stderr %q; want 0, ok and the warning %q", r.code, r.stdout, r.stderr, want)
	}
	g := startGateway(t, t.TempDir(), "--config", config, "--http", "0.0.0.0:0", "--tcp", "127.0.0.1:0")
	g.err.waitFor(t, 0, `level=WARN msg="configuration: 0\.0\.0\.0:0 is off loopback with insecure: true: every token given to this listener crosses the network in clear.*" field=hub\.listen\.http$`, waitLong)

	// --insecure says it on the command line, for --http and --tcp.
	g = startGateway(t, t.TempDir(), "--http", "0.0.0.0:0", "--tcp", "[::]:0", "--insecure")
	g.err.waitFor(t, 0, `level=WARN msg="configuration: 0\.0\.0\.0:0 is off loopback with insecure: true.*" field=hub\.listen\.http$`, waitLong)
	g.err.waitFor(t, 0, `level=WARN msg="configuration: \[::\]:0 is off loopback with insecure: true.*" field=hub\.listen\.tcp$`, waitLong)
}

// The configuration the package installs passes, with no warning: the
// LAN over TLS, plain listeners on loopback.
func TestBinaryInstalledConfiguration(t *testing.T) {
	r := gw(t, "check", "--config", filepath.Join("..", "..", "packaging", "gateway.yaml"))
	if r.code != 0 || r.stderr != "" {
		t.Errorf("check of packaging/gateway.yaml: exit %d, stderr %q; want 0 and no warning", r.code, r.stderr)
	}
}
