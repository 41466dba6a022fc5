package browser

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestConsoleOverHTTPS: the wss listener serves the console at https://
// (the start-up log says so). A browser that does not trust the
// gateway's self-signed certificate loads nothing of it (its warning
// page); one that trusts exactly that certificate, as an operator does
// after comparing its fingerprint, logs in over wss:// and shows the
// fingerprint in the page's about lines, the one `gateway status` shows.
func TestConsoleOverHTTPS(t *testing.T) {
	g := startGateway(t, t.TempDir(), "127.0.0.1:0", "127.0.0.1:0", "--wss", "127.0.0.1:0")
	m := g.log.waitFor(t, 0, `msg=listening transport=wss url=wss://(\S+)/hal addr=\S+ fingerprint=([0-9a-f]{64})$`)
	addr, fp := m[1], m[2]
	g.log.waitFor(t, 0, `msg=console url=https://`+regexp.QuoteMeta(addr)+`/$`)
	url := "https://" + addr + "/"

	untrusting := newPage(t)
	ctx, cancel := context.WithTimeout(untrusting.ctx, waitLong)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Navigate(url)); err == nil || !strings.Contains(err.Error(), "ERR_CERT_AUTHORITY_INVALID") {
		t.Errorf("a browser that does not trust the certificate: navigate = %v; want ERR_CERT_AUTHORITY_INVALID", err)
	}

	p := newPage(t, chromedp.Flag("ignore-certificate-errors-spki-list", spkiHash(t, filepath.Join(g.dir, "tls", "cert.pem"))))
	p.do(chromedp.Navigate(url), chromedp.WaitVisible(hook("login-token")))
	p.fill(hook("login-token"), g.adminToken(t))
	p.do(chromedp.Click(hook("login-submit")), chromedp.WaitVisible(deviceHook("sim.led", "")))
	p.waitText(hook("conn-status"), `^connected$`)
	p.waitText(hook("about-fingerprint"), `^Certificate SHA-256: `+fp+`$`)
	if proto := eval[string](p, `location.protocol`); proto != "https:" {
		t.Errorf("the console is at %s, want https:", proto)
	}
}

// spkiHash is what chromium's --ignore-certificate-errors-spki-list takes
// to trust one certificate's key: the base64 SHA-256 of its
// SubjectPublicKeyInfo.
func spkiHash(t *testing.T, certPEM string) string {
	t.Helper()
	b, err := os.ReadFile(certPEM)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(b)
	if block == nil {
		t.Fatalf("%s holds no PEM block", certPEM)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(c.RawSubjectPublicKeyInfo)
	return base64.StdEncoding.EncodeToString(sum[:])
}
