package gateway_test

// Whole-binary tests of transport security: the TLS listeners with the
// self-signed certificate or the operator's files, pinning from the
// command line, and the Unix socket's group.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/openhal/gateway/internal/tlscert"
)

// tlsURLs reads the wss and tls listeners' URLs and the fingerprint from
// the gateway's log; both lines must name the same fingerprint.
func tlsURLs(t *testing.T, g *gateway) (wss, tls, fingerprint string) {
	t.Helper()
	_, m := g.err.waitFor(t, 0, `msg=listening transport=wss url=(wss://\S+/hal) addr=\S+ fingerprint=([0-9a-f]{64})$`, waitLong)
	wss, fingerprint = m[1], m[2]
	_, m = g.err.waitFor(t, 0, `msg=listening transport=tls url=(tls://\S+) addr=\S+ fingerprint=([0-9a-f]{64})$`, waitLong)
	if m[2] != fingerprint {
		t.Fatalf("the wss and tls listeners log different fingerprints: %s and %s", fingerprint, m[2])
	}
	return wss, m[1], fingerprint
}

// certFingerprint computes the fingerprint of a PEM certificate file as
// another tool would: SHA-256 of the DER.
func certFingerprint(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(b)
	if block == nil {
		t.Fatalf("%s holds no PEM block", path)
	}
	sum := sha256.Sum256(block.Bytes)
	return hex.EncodeToString(sum[:])
}

// keySecrets notes the lines of a PEM key file as secrets that the log
// must never show.
func keySecrets(t *testing.T, g *gateway, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if len(line) >= 16 && !strings.HasPrefix(line, "-----") {
			g.secret(line)
		}
	}
}

// upperColons writes a fingerprint as openssl prints it.
func upperColons(fp string) string {
	var parts []string
	for i := 0; i+1 < len(fp); i += 2 {
		parts = append(parts, strings.ToUpper(fp[i:i+2]))
	}
	return strings.Join(parts, ":")
}

// TestBinaryTLS: the first start with --wss and --tls makes a self-signed
// certificate in the state directory and logs its fingerprint; the client
// commands work over both with that fingerprint pinned, refuse another
// one, and without one say how to get it; a restart keeps the
// certificate.
func TestBinaryTLS(t *testing.T) {
	dir := t.TempDir()
	certPath, keyPath := filepath.Join(dir, "tls", "cert.pem"), filepath.Join(dir, "tls", "key.pem")
	g := startGateway(t, dir, "--wss", "127.0.0.1:0", "--tls", "127.0.0.1:0")
	wss, tls, fp := tlsURLs(t, g)
	g.err.waitFor(t, 0, `msg="created a self-signed TLS certificate" file="?`+regexp.QuoteMeta(certPath)+`"? fingerprint=`+fp+` `, waitLong)
	keySecrets(t, g, keyPath)
	if got := certFingerprint(t, certPath); got != fp {
		t.Errorf("the log's fingerprint %s is not cert.pem's %s", fp, got)
	}
	if fi, err := os.Stat(keyPath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key.pem: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}

	out := gwOK(t, "devices", "--hub", wss, "--fingerprint", fp, "--state-dir", dir)
	if !strings.Contains(out, "sim.led") {
		t.Errorf("devices over wss printed %q", out)
	}
	w, _ := watchProc(t, "--hub", tls, "--fingerprint", upperColons(fp), "--state-dir", dir)
	from := w.out.len()
	if out := gwOK(t, "write", "sim.led", "true", "--hub", tls, "--fingerprint", upperColons(fp), "--state-dir", dir); !strings.HasPrefix(out, "sim.led = true (seq ") {
		t.Errorf("write over tls printed %q", out)
	}
	w.out.waitFor(t, from, watchTS+`sim\.led = true \(seq \d+\)$`, waitLong)

	// The pinned commands recorded the gateway in the known-gateways
	// file: without a pin it is known now. Another pin is refused all
	// the same.
	other := strings.Repeat("ab", 32)
	for _, hub := range []string{wss, tls} {
		r := gw(t, "read", "sim.led", "--hub", hub, "--fingerprint", other, "--state-dir", dir)
		wantOneLineError(t, r, fmt.Sprintf("presented a certificate with fingerprint %s, not the pinned %s", fp, other))
		if out := gwOK(t, "read", "sim.led", "--hub", hub, "--state-dir", dir); out != "true\n" {
			t.Errorf("read of a known gateway without a pin printed %q", out)
		}
	}
	// A user who never met it, and no terminal to ask: refused, with
	// the fingerprint to compare and the flag that trusts it.
	ownKnownGateways(t)
	for _, hub := range []string{wss, tls} {
		r := gw(t, "read", "sim.led", "--hub", hub, "--state-dir", dir)
		wantOneLineError(t, r, "is not known yet, and there is no terminal to ask: its certificate's SHA-256 fingerprint is "+fp)
		if !strings.Contains(r.stderr, "--fingerprint "+fp) || !strings.Contains(r.stderr, "`gateway status`") {
			t.Errorf("without a pin: %q; want how to check and trust it", r.stderr)
		}
	}
	// A usage error: exit 2, the line, then the usage.
	if r := gw(t, "read", "sim.led", "--hub", g.ws, "--fingerprint", fp, "--state-dir", dir); r.code != 2 ||
		!strings.HasPrefix(r.stderr, "gateway: read: hub URL \""+g.ws+"\": a certificate fingerprint needs a TLS URL (wss:// or tls://)\nusage: gateway read ") {
		t.Errorf("--fingerprint with ws://: exit %d, stderr %q; want exit 2 with the usage", r.code, r.stderr)
	}
	g.stop(t)

	g2 := startGateway(t, dir, "--wss", "127.0.0.1:0", "--tls", "127.0.0.1:0")
	_, tls2, fp2 := tlsURLs(t, g2)
	if fp2 != fp {
		t.Errorf("the fingerprint changed at the restart: %s, then %s", fp, fp2)
	}
	if strings.Contains(g2.err.text(), "created a self-signed TLS certificate") {
		t.Error("the restart made a new certificate")
	}
	if out := gwOK(t, "read", "sim.led", "--hub", tls2, "--fingerprint", fp, "--state-dir", dir); out != "false\n" {
		t.Errorf("read after the restart printed %q", out)
	}
}

// TestBinaryTLSFiles: with hub.tls naming files, the gateway serves that
// certificate and makes none; files that cannot be loaded stop the start
// with their paths.
func TestBinaryTLSFiles(t *testing.T) {
	certDir := t.TempDir()
	if _, _, err := tlscert.LoadOrCreate(certDir, "", "", tlscert.Identity{}); err != nil {
		t.Fatal(err)
	}
	certPath, keyPath := filepath.Join(certDir, tlscert.CertName), filepath.Join(certDir, tlscert.KeyName)
	want := certFingerprint(t, certPath)

	dir := t.TempDir()
	config := writeConfig(t, fmt.Sprintf("board: sim\nhub:\n  tls: {cert: %s, key: %s}\n", certPath, keyPath))
	g := startGateway(t, dir, "--config", config, "--wss", "127.0.0.1:0", "--tls", "127.0.0.1:0")
	keySecrets(t, g, keyPath)
	wss, _, fp := tlsURLs(t, g)
	if fp != want {
		t.Errorf("fingerprint %s, want the given certificate's %s", fp, want)
	}
	if out := gwOK(t, "read", "sim.led", "--hub", wss, "--fingerprint", fp, "--state-dir", dir); out != "false\n" {
		t.Errorf("read over wss printed %q", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "tls")); !os.IsNotExist(err) {
		t.Errorf("the state directory got a tls directory (%v); the given files need none", err)
	}
	g.stop(t)

	missing := filepath.Join(certDir, "missing.pem")
	bad := writeConfig(t, fmt.Sprintf("board: sim\nhub:\n  listen: {http: \"127.0.0.1:0\", tcp: \"\", tls: \"127.0.0.1:0\"}\n  tls: {cert: %s, key: %s}\n", missing, keyPath))
	wantStartError(t, t.TempDir(), bad, "load TLS certificate "+missing)
}

// TestBinaryUnixGroup: the socket gets the configured group (the test
// user's own, by name and by number) with mode 0660; a group the system
// does not have stops the start.
func TestBinaryUnixGroup(t *testing.T) {
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	grp, err := user.LookupGroupId(u.Gid)
	if err != nil {
		t.Skipf("the test user's group %s has no name: %v", u.Gid, err)
	}
	for _, name := range []string{grp.Name, grp.Gid} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			sock := filepath.Join(dir, "hal.sock")
			config := writeConfig(t, fmt.Sprintf("board: sim\nhub:\n  listen: {unix: %s, unixGroup: %q}\n", sock, name))
			g := startGateway(t, dir, "--config", config)
			g.err.waitFor(t, 0, `msg=listening transport=unix url=unix://\S+ addr=\S+ group=`+regexp.QuoteMeta(grp.Name)+`$`, waitLong)
			fi, err := os.Stat(sock)
			if err != nil {
				t.Fatal(err)
			}
			st := fi.Sys().(*syscall.Stat_t)
			if fi.Mode().Perm() != 0o660 || strconv.Itoa(int(st.Gid)) != grp.Gid {
				t.Errorf("socket mode %v, gid %d; want 0660 and %s", fi.Mode().Perm(), st.Gid, grp.Gid)
			}
			if out := gwOK(t, "read", "sim.led", "--hub", "unix://"+sock, "--state-dir", dir); out != "false\n" {
				t.Errorf("read over the socket printed %q", out)
			}
		})
	}

	dir := t.TempDir()
	const missing = "no-such-group-for-gateway"
	config := writeConfig(t, fmt.Sprintf("board: sim\nhub:\n  listen: {http: \"127.0.0.1:0\", tcp: \"\", unix: %s, unixGroup: %s}\n", filepath.Join(dir, "hal.sock"), missing))
	wantStartError(t, dir, config, fmt.Sprintf(`hub.listen.unixGroup: no group %q on this system`, missing))
}

// TestBinaryPortTaken: a TLS port that is taken stops the start after the
// listeners before it were opened, which are closed again; the error
// names the listener and the address.
func TestBinaryPortTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	c := startChild(t, "run", "--state-dir", t.TempDir(), "--http", "127.0.0.1:0", "--tcp", "127.0.0.1:0", "--tls", addr)
	wantExit1(t, c, "gateway: listen tls "+addr+": ")
}

// writeConfig writes a configuration file and returns its path.
func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// wantStartError runs the gateway with config and checks that it exits 1
// with want in its last line, "gateway: ..." as for every failed command.
func wantStartError(t *testing.T, dir, config, want string) {
	t.Helper()
	wantExit1(t, startChild(t, "run", "--config", config, "--state-dir", dir), want)
}

// wantExit1 waits for c to exit 1 with a last line of standard error that
// starts "gateway: " and contains want, and no sign of a crash.
func wantExit1(t *testing.T, c *child, want string) {
	t.Helper()
	code := c.wait(t, waitLong)
	text := c.err.text()
	lines := strings.Split(strings.TrimSpace(text), "\n")
	last := lines[len(lines)-1]
	if code != 1 || !strings.HasPrefix(last, "gateway: ") || !strings.Contains(last, want) || strings.Contains(text, "panic") {
		t.Errorf("exit %d, last line %q; want 1 and %q\n%s", code, last, want, text)
	}
}
