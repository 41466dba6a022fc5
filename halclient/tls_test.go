package halclient_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/internal/tlscert"
)

// tlsHub is a test Hub that also listens with TLS on loopback, serving a
// self-signed certificate made by tlscert as the gateway makes it.
type tlsHub struct {
	*testHub
	cert     tls.Certificate
	wss, tls string // URLs
}

func newTLSHub(t *testing.T) *tlsHub {
	t.Helper()
	cert, _, err := tlscert.LoadOrCreate(t.TempDir(), "", "", tlscert.Identity{})
	if err != nil {
		t.Fatal(err)
	}
	h := &tlsHub{testHub: newTestHub(t), cert: cert}
	cfg := tlscert.ServerConfig(cert)

	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h.Hub().Handler(halhub.HTTPOptions{}), ErrorLog: log.New(io.Discard, "", 0)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	h.wss = "wss://" + ln.Addr().String() + "/hal"

	lln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	go h.Hub().ServeLines(lln)
	t.Cleanup(func() { lln.Close() })
	h.tls = "tls://" + lln.Addr().String()
	return h
}

// colons writes a fingerprint as openssl does: AB:CD:...
func colons(fp string) string {
	var parts []string
	for i := 0; i+1 < len(fp); i += 2 {
		parts = append(parts, strings.ToUpper(fp[i:i+2]))
	}
	return strings.Join(parts, ":")
}

// TestTLSPinned: with the certificate's fingerprint, in either spelling,
// both TLS transports carry a session, with the token in the header
// (wss) or in params (tls).
func TestTLSPinned(t *testing.T) {
	h := newTLSHub(t)
	fp := tlscert.Fingerprint(h.cert)
	for _, url := range []string{h.wss, h.tls} {
		for _, pin := range []string{fp, colons(fp)} {
			c, err := halclient.Dial(testCtx(t), url, halclient.Options{Token: h.Agent, Fingerprint: pin})
			if err != nil {
				t.Fatalf("Dial(%s) with pin %s: %v", url, pin, err)
			}
			v, err := c.Read(testCtx(t), "sim.led", -1)
			if err != nil || v.Value != false {
				t.Errorf("%s: read sim.led = %+v, %v", url, v, err)
			}
			if p := c.Init().Principal; p.Name != "bench-agent" {
				t.Errorf("%s: principal %+v, want bench-agent", url, p)
			}
			c.Close()
		}
	}
}

// TestTLSWrongPin: a certificate other than the pinned one is refused
// before any message is sent, naming both fingerprints.
func TestTLSWrongPin(t *testing.T) {
	h := newTLSHub(t)
	other, _, err := tlscert.LoadOrCreate(t.TempDir(), "", "", tlscert.Identity{})
	if err != nil {
		t.Fatal(err)
	}
	pin, got := tlscert.Fingerprint(other), tlscert.Fingerprint(h.cert)
	for _, url := range []string{h.wss, h.tls} {
		_, err := halclient.Dial(testCtx(t), url, halclient.Options{Token: h.Agent, Fingerprint: colons(pin)})
		var ce *halclient.CertificateError
		if !errors.As(err, &ce) || ce.Pin != pin || ce.Got != got {
			t.Fatalf("Dial(%s) with another pin = %v; want a CertificateError", url, err)
		}
		want := "the hub at " + url + " presented a certificate with fingerprint " + got + ", not the pinned " + pin + "; refused"
		if msg := err.Error(); !strings.HasPrefix(msg, want) || strings.Contains(msg, "\n") {
			t.Errorf("Dial(%s) = %q; want one line starting %q", url, msg, want)
		}
	}
}

// TestTLSNoPin: without a pin the system's CAs decide, and they do not
// know a self-signed certificate: the error says what to do, and does not
// offer the fingerprint it saw.
func TestTLSNoPin(t *testing.T) {
	h := newTLSHub(t)
	for _, url := range []string{h.wss, h.tls} {
		_, err := halclient.Dial(testCtx(t), url, halclient.Options{Token: h.Agent})
		var ce *halclient.CertificateError
		if !errors.As(err, &ce) || ce.Pin != "" {
			t.Fatalf("Dial(%s) without a pin = %v; want a CertificateError", url, err)
		}
		msg := err.Error()
		for _, w := range []string{"the hub at " + url + " presented a certificate this system does not trust", "--fingerprint", "msg=listening transport=wss"} {
			if !strings.Contains(msg, w) {
				t.Errorf("Dial(%s) = %q; does not say %q", url, msg, w)
			}
		}
		if strings.Contains(msg, tlscert.Fingerprint(h.cert)) || strings.Contains(msg, "\n") {
			t.Errorf("Dial(%s) = %q; want one line without the presented fingerprint", url, msg)
		}
	}
}

func TestTLSBadPin(t *testing.T) {
	h := newTLSHub(t)
	_, err := halclient.Dial(testCtx(t), h.tls, halclient.Options{Fingerprint: "ab:cd"})
	var oe *halclient.OptionError
	if !errors.As(err, &oe) || oe.Option != "Fingerprint" || !strings.Contains(err.Error(), "64 hex digits") {
		t.Errorf("Dial with a short fingerprint = %v; want an OptionError asking for 64 hex digits", err)
	}
}

// TestTLSPlainClient: a client that speaks no TLS to a TLS listener gets
// an error, not a hang.
func TestTLSPlainClient(t *testing.T) {
	h := newTLSHub(t)
	ctx, cancel := context.WithTimeout(testCtx(t), 5*time.Second)
	defer cancel()
	_, err := halclient.Dial(ctx, "tcp://"+strings.TrimPrefix(h.tls, "tls://"), halclient.Options{Token: h.Agent})
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("tcp:// to a TLS listener = %v; want a prompt error", err)
	}
}

// TestWatchCertificateIsPermanent: Watch does not retry a certificate it
// does not trust; it returns the error at once.
func TestWatchCertificateIsPermanent(t *testing.T) {
	h := newTLSHub(t)
	other, _, err := tlscert.LoadOrCreate(t.TempDir(), "", "", tlscert.Identity{})
	if err != nil {
		t.Fatal(err)
	}
	err = halclient.Watch(testCtx(t), h.tls, halclient.Options{Token: h.Agent, Fingerprint: tlscert.Fingerprint(other)}, func(e halclient.WatchEvent) {
		t.Errorf("event %v before the error", e.Kind)
	})
	var ce *halclient.CertificateError
	if !errors.As(err, &ce) {
		t.Errorf("Watch = %v; want a CertificateError", err)
	}
}
