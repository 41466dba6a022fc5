package gateway_test

// Trust on first use across two network namespaces (issue 28, 3;
// openhal-0.1 §2), as an attacker on the LAN would try it: a rogue
// responder (rogue_test.go) takes a gateway's name, announces it in
// plain or with a certificate of its own for the gateway's id, and
// records every byte it is sent. The clients in B (the CLI, gateway mcp,
// the Python client) must never send it the token.

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openhal/gateway/e2e/lantest"
	"github.com/openhal/gateway/internal/discovery"
)

// tofuConfig is the installed configuration's layout: the LAN over TLS,
// plain listeners on loopback.
const tofuConfig = `board: sim
hub:
  name: bench
  announce: builtin
  listen:
    wss: 0.0.0.0:7752
    tls: 0.0.0.0:7753
    http: 127.0.0.1:7750
    tcp: 127.0.0.1:7751
`

// rogue is a running rogue responder.
type rogue struct {
	*child
	record string
	stdin  *os.File // closing it withdraws the rogue
}

// startRogue runs a rogue responder in side's namespace and waits until
// it is announced.
func startRogue(t *testing.T, side lantest.Side, rc rogueConfig) *rogue {
	t.Helper()
	rc.Record = filepath.Join(t.TempDir(), "received")
	if rc.TLS {
		rc.CertDir = t.TempDir()
	}
	spec, _ := json.Marshal(rc)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := newChild("rogue "+rc.Name, side.Command(exe))
	c.cmd.Env = append(childEnv(), rogueEnv+"="+string(spec))
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c.cmd.Stdin = r
	c.start(t)
	r.Close()
	t.Cleanup(func() { w.Close() })
	c.out.waitFor(t, 0, `^rogue: announced `, waitLong)
	return &rogue{child: c, record: rc.Record, stdin: w}
}

// waitDiscovered waits until `gateway discover` in side's namespace
// hears the gateway name with want in its URLs: a responder answers only
// once it has probed its name, some time after it says it announced.
func waitDiscovered(t *testing.T, side lantest.Side, name, want string) {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for {
		res := gwIn(t, []string{"ip", "netns", "exec", side.NS}, "discover", "--json", "--timeout", "2s")
		var gws []discovery.Gateway
		if json.Unmarshal([]byte(res.stdout), &gws) == nil && slices.ContainsFunc(gws, func(g discovery.Gateway) bool {
			return g.Name == name && slices.ContainsFunc(g.URLs, func(u string) bool { return strings.Contains(u, want) })
		}) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateway discover in %s did not hear %q with %s within %s: %s", side.NS, name, want, waitLong, res.stdout)
		}
	}
}

// stop withdraws the rogue and waits for it to exit.
func (r *rogue) stop(t *testing.T) {
	t.Helper()
	r.stdin.Close()
	r.wait(t, waitLong)
}

// received is everything clients sent the rogue so far.
func (r *rogue) received(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(r.record)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return string(b)
}

// A responder that takes a TLS gateway's name and announces it with
// tls=0: --hub NAME never dials it without --insecure, --trust-announced
// or not, and nothing reaches it; with --insecure the rogue is sent the
// token (the rogue records what a client sends it, and the test can fail).
func TestBinaryLANRoguePlain(t *testing.T) {
	lan := lantest.New(t)
	ownKnownGateways(t)
	const secret = "rogue-test-token-0123456789"
	r := startRogue(t, lan.A, rogueConfig{Name: "bench", ID: "0123456789abcdef0123456789abcdef", Port: 7750})
	waitDiscovered(t, lan.B, "bench", "ws://10.77.0.1:7750/")
	in := []string{"ip", "netns", "exec", lan.B.NS}
	for _, args := range [][]string{
		{"devices", "--hub", "bench", "--trust-announced", "--token", secret},
		{"devices", "--hub", "bench", "--token", secret},
		{"mcp", "--hub", "bench", "--trust-announced", "--token", secret},
	} {
		res := gwIn(t, in, args...)
		want := `gateway: --hub bench: gateway "bench" announces only plain transports (ws://10.77.0.1:7750/hal): the token would cross the LAN in clear, to whatever answers in that name; refused, nothing was sent. ` +
			"Serve the gateway over TLS (hub.listen.wss, docs/install.md), or give --insecure to send the token in clear anyway\n"
		if res.code != 1 || res.stderr != want {
			t.Errorf("gateway %s: exit %d, stderr %q; want 1 and %q", strings.Join(args, " "), res.code, res.stderr, want)
		}
	}
	if got := r.received(t); got != "" {
		t.Fatalf("the rogue received %q", got)
	}
	// Asked for plain explicitly, the client sends it: the rogue sees the
	// token, as every client did before issue 28.
	gwIn(t, in, "devices", "--hub", "bench", "--insecure", "--token", secret)
	if got := r.received(t); !strings.Contains(got, "Authorization: Bearer "+secret) {
		t.Errorf("with --insecure the rogue received %q; want the upgrade request with the token", got)
	}
}

// The gateway met for the first time: refused without a terminal and
// without --fingerprint or --trust-announced, saying how; asked on a
// pseudo-terminal, a yes records it. Then a rogue in its name, with a
// certificate of its own for its id (and then for another id), is
// refused by the CLI, gateway mcp and the Python client, naming both
// fingerprints and the line to remove, and receives nothing: not with
// --trust-announced, though the rogue announces its own fingerprint.
func TestBinaryLANRogueTLS(t *testing.T) {
	lan := lantest.New(t)
	known := ownKnownGateways(t)
	dir := t.TempDir()
	g := startLANGateway(t, lan.A, dir, tofuConfig, lantest.NoBus(t))
	g.err.waitFor(t, 0, `msg=announced via=builtin name=bench type=_openhal-ws._tcp port=7752 `, waitLong)
	waitDiscovered(t, lan.B, "bench", "wss://10.77.0.1:7752/")
	_, m := g.err.waitFor(t, 0, `transport=wss .* fingerprint=([0-9a-f]{64})`, waitLong)
	fp := m[1]
	id := readID(t, dir)
	tok := readToken(t, dir)
	g.secret(tok)
	in := []string{"ip", "netns", "exec", lan.B.NS}

	// First contact with nobody to ask.
	for _, args := range [][]string{{"devices", "--hub", "bench", "--token", tok}, {"mcp", "--hub", "bench", "--token", tok}} {
		res := gwIn(t, in, args...)
		for _, w := range []string{"the gateway at wss://10.77.0.1:7752/hal (id " + id + ") is not known yet, and there is no terminal to ask: its certificate's SHA-256 fingerprint is " + fp,
			"`gateway status`", "--fingerprint " + fp + ", or --trust-announced", "recorded in " + known} {
			if res.code != 1 || !strings.Contains(res.stderr, w) {
				t.Errorf("gateway %s with nobody to ask: exit %d, stderr %q; want 1 and %q", args[0], res.code, res.stderr, w)
			}
		}
	}
	if _, err := os.Stat(known); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("known_gateways made for a gateway nobody trusted: %v", err)
	}

	// A person at a terminal says yes.
	out := answerOnTerminal(t, lan.B, "yes", "devices", "--hub", "bench", "--token", tok)
	if !strings.Contains(out, "sim.led") {
		t.Errorf("devices after yes printed %q", out)
	}
	if got, want := knownEntries(t, known), []string{id + " " + fp + " bench,10.77.0.1:7752"}; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("known_gateways holds %q, want %q", got, want)
	}
	// Known now: the Python client trusts it from the same file.
	if got := pythonIn(t, lan.B, "tls://10.77.0.1:7753", tok); got != "connected" {
		t.Errorf("the Python client with the gateway known: %s", got)
	}
	g.stop(t)

	for _, rogueID := range []string{id, "fedcba9876543210fedcba9876543210"} {
		r := startRogue(t, lan.A, rogueConfig{Name: "bench", ID: rogueID, TLS: true, Port: 7752})
		waitDiscovered(t, lan.B, "bench", "wss://10.77.0.1:7752/")
		_, m := r.out.waitFor(t, 0, `fp=([0-9a-f]{64})$`, waitLong)
		rogueFP := m[1]
		for _, args := range [][]string{
			{"devices", "--hub", "bench", "--trust-announced", "--token", tok},
			{"mcp", "--hub", "bench", "--trust-announced", "--token", tok},
			{"status", "--hub", "wss://10.77.0.1:7752/hal", "--fingerprint", rogueFP, "--token", tok},
		} {
			res := gwIn(t, in, args...)
			for _, w := range []string{"presented a certificate with SHA-256 fingerprint " + rogueFP + ", but " + known + " line 6 trusts " + fp,
				"nothing was sent", "remove line 6 of " + known} {
				if res.code != 1 || !strings.Contains(res.stderr, w) {
					t.Errorf("rogue id %s: gateway %s: exit %d, stderr %q; want 1 and %q", rogueID[:8], strings.Join(args[:3], " "), res.code, res.stderr, w)
				}
			}
		}
		got := pythonIn(t, lan.B, "tls://10.77.0.1:7752", tok)
		if !strings.HasPrefix(got, "GatewayChanged: ") || !strings.Contains(got, rogueFP) || !strings.Contains(got, fp) || !strings.Contains(got, known+" line 6") {
			t.Errorf("rogue id %s: the Python client: %s; want GatewayChanged naming both fingerprints and the line", rogueID[:8], got)
		}
		if rec := r.received(t); rec != "" {
			t.Errorf("rogue id %s received %q", rogueID[:8], rec)
		}
		r.stop(t)
	}
	if got := knownEntries(t, known); len(got) != 1 || !strings.HasPrefix(got[0], id+" "+fp) {
		t.Errorf("known_gateways changed: %q", got)
	}
}

func readID(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "gateway.id"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func readToken(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// knownEntries are the lines of the known-gateways file that are not
// comments.
func knownEntries(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// answerOnTerminal runs a client command in side's namespace with a
// pseudo-terminal as its standard input, waits for its question, answers
// it, and returns what the command printed once it exited 0.
func answerOnTerminal(t *testing.T, side lantest.Side, answer string, args ...string) string {
	t.Helper()
	master, slave := openPTY(t)
	c := newChild("gateway "+strings.Join(args, " ")+" (on a terminal)", side.Command(gatewayBinary(t), args...))
	c.cmd.Env = childEnv()
	c.cmd.Stdin = slave
	c.start(t)
	slave.Close()
	c.err.waitFor(t, 0, `^The gateway at wss://10\.77\.0\.1:7752/hal is not known yet\.$`, waitLong)
	c.err.waitFor(t, 0, `^  name:        bench$`, waitLong)
	c.err.waitFor(t, 0, `^  id:          [0-9a-f]{32}$`, waitLong)
	c.err.waitFor(t, 0, `^  fingerprint: SHA-256 [0-9a-f]{64}$`, waitLong)
	c.err.waitFor(t, 0, `^  \(the same as announced on the LAN, which anyone there could have announced\)$`, waitLong)
	c.err.waitFor(t, 0, "^Compare it with the one `gateway status` shows on the gateway itself \\(or its console\\)\\.$", waitLong)
	if _, err := master.WriteString(answer + "\n"); err != nil {
		t.Fatal(err)
	}
	if code := c.wait(t, waitLong); code != 0 {
		t.Fatalf("exit %d after %q:\n%s", code, answer, c.err.text())
	}
	if !regexp.MustCompile(`Trust it, and record it in \S+ \(yes/no\)\? `).MatchString(c.err.text()) {
		t.Errorf("no question asked:\n%s", c.err.text())
	}
	return c.out.text()
}

// openPTY opens a pseudo-terminal and returns its master and slave.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, path := openPTMX(t)
	s, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// pythonClient connects with openhal.connect and says how it went, on one
// line: "connected", or the error's class and message.
const pythonClient = `import sys, openhal
from openhal import errors
try:
    openhal.connect(sys.argv[1], sys.argv[2], timeout=10, ask=False).close()
    print("connected")
except errors.OpenHALError as e:
    print("%s: %s" % (type(e).__name__, e))
`

// pythonIn runs the Python client in side's namespace with Debian's
// python3, the test's known-gateways file in its environment.
func pythonIn(t *testing.T, side lantest.Side, url, token string) string {
	t.Helper()
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no /usr/bin/python3 in CI")
		}
		return "(skipped: no /usr/bin/python3)"
	}
	root, err := filepath.Abs(filepath.Join("..", "..", "clients", "python"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := side.Command("/usr/bin/python3", "-c", pythonClient, url, token)
	cmd.Env = append(childEnv(), "PYTHONPATH="+root, "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}
