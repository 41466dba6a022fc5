package halclient_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/internal/tlscert"
)

const (
	benchID = "0123456789abcdef0123456789abcdef"
	otherID = "fedcba9876543210fedcba9876543210"
)

// certFor makes a self-signed certificate as the gateway does, for id
// ("" for one without, as an earlier version made them).
func certFor(t *testing.T, id string) tls.Certificate {
	t.Helper()
	cert, _, err := tlscert.LoadOrCreate(t.TempDir(), "", "", tlscert.Identity{GatewayID: id})
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// trustHub is a Hub serving wss:// and tls:// with cert.
func trustHub(t *testing.T, cert tls.Certificate) (h *testHub, wss, tlsURL string) {
	t.Helper()
	h = newTestHub(t)
	cfg := tlscert.ServerConfig(cert)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h.Hub().Handler(halhub.HTTPOptions{}), ErrorLog: log.New(io.Discard, "", 0)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	lln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	go h.Hub().ServeLines(lln)
	t.Cleanup(func() { lln.Close() })
	return h, "wss://" + ln.Addr().String() + "/hal", "tls://" + lln.Addr().String()
}

// rogue is a TLS listener that completes handshakes with its certificate
// and keeps every byte a client sends after one: a client that trusts it
// would send its upgrade request (with the bearer token) or its
// hal/initialize.
type rogue struct {
	ln   net.Listener
	mu   sync.Mutex
	got  []byte
	done sync.WaitGroup
}

func newRogue(t *testing.T, cert tls.Certificate) *rogue {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", tlscert.ServerConfig(cert))
	if err != nil {
		t.Fatal(err)
	}
	r := &rogue{ln: ln}
	r.done.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r.done.Go(func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				b, _ := io.ReadAll(c)
				r.mu.Lock()
				r.got = append(r.got, b...)
				r.mu.Unlock()
			})
		}
	})
	t.Cleanup(func() { ln.Close(); r.done.Wait() })
	return r
}

func (r *rogue) urls() []string {
	return []string{"wss://" + r.ln.Addr().String() + "/hal", "tls://" + r.ln.Addr().String()}
}

// received is what clients sent it, once they have hung up.
func (r *rogue) received(t *testing.T) string {
	t.Helper()
	r.ln.Close()
	r.done.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	return string(r.got)
}

func knownFile(t *testing.T) string {
	return filepath.Join(t.TempDir(), "gateway", "known_gateways")
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// entries are the file's lines that are not comments.
func entries(t *testing.T, path string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(readFile(t, path)), "\n") {
		if !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// First contact with a pin records the gateway under its id, with the
// name it was found as (a loopback address is not noted); later dials
// need no pin, on either transport.
func TestKnownPinRecords(t *testing.T) {
	cert := certFor(t, benchID)
	fp := tlscert.Fingerprint(cert)
	h, wss, tlsURL := trustHub(t, cert)
	file := knownFile(t)
	c, err := halclient.Dial(testCtx(t), wss, halclient.Options{Token: h.Agent, Fingerprint: fp, KnownGateways: file, Name: "Bench Pi"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Fingerprint() != fp {
		t.Errorf("Fingerprint() = %q, want %q", c.Fingerprint(), fp)
	}
	c.Close()
	if got, want := entries(t, file), []string{benchID + " " + fp + " Bench%20Pi"}; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("known_gateways holds %q, want %q", got, want)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("known_gateways: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
	for _, url := range []string{wss, tlsURL} {
		c, err := halclient.Dial(testCtx(t), url, halclient.Options{Token: h.Agent, KnownGateways: file})
		if err != nil {
			t.Fatalf("Dial(%s) of a known gateway: %v", url, err)
		}
		c.Close()
	}
	if got := entries(t, file); len(got) != 1 {
		t.Errorf("known_gateways after more dials: %q; want the one line", got)
	}
}

// A known gateway id presenting another certificate, or another gateway
// found by a name the file gives a known one, is refused in the
// handshake: both fingerprints and the line to remove are named, and
// the rogue receives nothing, neither an upgrade request nor a line.
func TestKnownChangedRefused(t *testing.T) {
	good := certFor(t, benchID)
	file := knownFile(t)
	h, wss, _ := trustHub(t, good)
	c, err := halclient.Dial(testCtx(t), wss, halclient.Options{Token: h.Agent, Fingerprint: tlscert.Fingerprint(good), KnownGateways: file, Name: "bench"})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	before := readFile(t, file)

	for _, tt := range []struct {
		name string
		cert tls.Certificate
		opt  halclient.Options
	}{
		{"same id, another certificate", certFor(t, benchID), halclient.Options{}},
		{"found by the name, another id", certFor(t, otherID), halclient.Options{Name: "BENCH"}},
		{"found by the name, no id", certFor(t, ""), halclient.Options{Name: "bench"}},
		{"with a pin of its own", certFor(t, benchID), halclient.Options{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRogue(t, tt.cert)
			presented := tlscert.Fingerprint(tt.cert)
			for _, url := range r.urls() {
				opt := tt.opt
				opt.Token, opt.KnownGateways = h.Agent, file
				opt.FirstUse = func(context.Context, halclient.Presented) error {
					t.Error("FirstUse asked of a changed gateway")
					return nil
				}
				if tt.name == "with a pin of its own" {
					opt.Fingerprint = presented
				}
				_, err := halclient.Dial(testCtx(t), url, opt)
				var ce *halclient.ChangedGatewayError
				if !errors.As(err, &ce) || ce.Recorded != tlscert.Fingerprint(good) || ce.Fingerprint != presented || ce.Line != 6 {
					t.Fatalf("Dial(%s) = %v; want a ChangedGatewayError naming line 6", url, err)
				}
				for _, w := range []string{presented, tlscert.Fingerprint(good), file + " line 6", "remove line 6 of " + file, "nothing was sent"} {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("Dial(%s) = %q; does not say %q", url, err, w)
					}
				}
			}
			if got := r.received(t); got != "" {
				t.Errorf("the rogue received %q", got)
			}
			if readFile(t, file) != before {
				t.Errorf("known_gateways changed:\n%s", readFile(t, file))
			}
		})
	}
}

// A gateway nothing vouches for is put to FirstUse outside the
// handshake: refused, nothing is sent nor recorded; trusted, it is
// recorded and the dial goes on. Without FirstUse it is refused, with
// the fingerprint to compare.
func TestKnownFirstUse(t *testing.T) {
	cert := certFor(t, benchID)
	fp := tlscert.Fingerprint(cert)
	h, wss, tlsURL := trustHub(t, cert)
	file := knownFile(t)

	r := newRogue(t, cert)
	for _, url := range r.urls() {
		_, err := halclient.Dial(testCtx(t), url, halclient.Options{Token: h.Agent, KnownGateways: file})
		var ue *halclient.UnknownGatewayError
		if !errors.As(err, &ue) || ue.ID != benchID || ue.Fingerprint != fp || ue.URL != url {
			t.Fatalf("Dial(%s) of an unknown gateway = %v; want an UnknownGatewayError", url, err)
		}
		if !strings.Contains(err.Error(), fp) || !strings.Contains(err.Error(), "id "+benchID) {
			t.Errorf("Dial(%s) = %q; want the id and fingerprint named", url, err)
		}
		no := errors.New("no, thanks")
		if _, err := halclient.Dial(testCtx(t), url, halclient.Options{Token: h.Agent, KnownGateways: file,
			FirstUse: func(context.Context, halclient.Presented) error { return no }}); !errors.Is(err, no) {
			t.Fatalf("Dial(%s) refused by FirstUse = %v", url, err)
		}
	}
	if got := r.received(t); got != "" {
		t.Errorf("an untrusted gateway received %q", got)
	}
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("known_gateways made for a refused gateway: %v", err)
	}

	var asked []halclient.Presented
	opt := halclient.Options{Token: h.Agent, KnownGateways: file, Name: "bench",
		FirstUse: func(_ context.Context, p halclient.Presented) error { asked = append(asked, p); return nil }}
	for _, url := range []string{wss, tlsURL} {
		c, err := halclient.Dial(testCtx(t), url, opt)
		if err != nil {
			t.Fatalf("Dial(%s) trusted on first use: %v", url, err)
		}
		c.Close()
	}
	if len(asked) != 1 || asked[0].ID != benchID || asked[0].Fingerprint != fp || asked[0].Name != "bench" || asked[0].File != file {
		t.Errorf("FirstUse asked %+v; want once, for the first dial", asked)
	}
	if got := entries(t, file); len(got) != 1 || got[0] != benchID+" "+fp+" bench" {
		t.Errorf("known_gateways holds %q", got)
	}
}

// A certificate without an id (made before ids) is keyed by the address
// dialled, as SSH keys a host by its name.
func TestKnownWithoutID(t *testing.T) {
	cert := certFor(t, "")
	fp := tlscert.Fingerprint(cert)
	h, _, tlsURL := trustHub(t, cert)
	file := knownFile(t)
	c, err := halclient.Dial(testCtx(t), tlsURL, halclient.Options{Token: h.Agent, Fingerprint: fp, KnownGateways: file})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	addr := strings.TrimPrefix(tlsURL, "tls://")
	if got := entries(t, file); len(got) != 1 || got[0] != addr+" "+fp {
		t.Errorf("known_gateways holds %q, want %q", got, addr+" "+fp)
	}
	// Another certificate without an id at a known address is refused.
	r := newRogue(t, certFor(t, ""))
	rogueAddr := r.ln.Addr().String()
	os.WriteFile(file, []byte(readFile(t, file)+rogueAddr+" "+fp+"\n"), 0o600)
	_, err = halclient.Dial(testCtx(t), "tls://"+rogueAddr, halclient.Options{Token: h.Agent, KnownGateways: file})
	var ce *halclient.ChangedGatewayError
	if !errors.As(err, &ce) || ce.Key != rogueAddr || ce.Recorded != fp || ce.Line != 7 {
		t.Errorf("another certificate at a known address: %v; want a ChangedGatewayError for %s, line 7", err, rogueAddr)
	}
	if got := r.received(t); got != "" {
		t.Errorf("the rogue received %q", got)
	}
}

// A file this client cannot read refuses the dial, naming the line,
// rather than reading as no record.
func TestKnownFileBroken(t *testing.T) {
	cert := certFor(t, benchID)
	h, _, tlsURL := trustHub(t, cert)
	file := knownFile(t)
	os.MkdirAll(filepath.Dir(file), 0o700)
	os.WriteFile(file, []byte("# mine\n"+benchID+" not-a-fingerprint\n"), 0o600)
	_, err := halclient.Dial(testCtx(t), tlsURL, halclient.Options{Token: h.Agent, Fingerprint: tlscert.Fingerprint(cert), KnownGateways: file})
	if err == nil || !strings.Contains(err.Error(), file+" line 2: ") {
		t.Errorf("Dial with a broken known_gateways = %v; want its line named", err)
	}
}

// A plain URL to a host off loopback is refused before anything is
// dialled, unless clear text is allowed; loopback stays open.
func TestClearTextOffLoopback(t *testing.T) {
	for _, url := range []string{"ws://192.0.2.7:7750/hal", "tcp://192.0.2.7:7751", "ws://gw.lan:7750/hal", "tcp://[2001:db8::1]:7751"} {
		start := time.Now()
		_, err := halclient.Dial(testCtx(t), url, halclient.Options{Token: "secret"})
		var ct *halclient.ClearTextError
		if !errors.As(err, &ct) || ct.URL != url || time.Since(start) > time.Second {
			t.Errorf("Dial(%s) = %v after %v; want a ClearTextError at once", url, err, time.Since(start))
		}
		ctx, cancel := context.WithTimeout(testCtx(t), 200*time.Millisecond)
		_, err = halclient.Dial(ctx, url, halclient.Options{Token: "secret", Insecure: true})
		cancel()
		if errors.As(err, &ct) || err == nil {
			t.Errorf("Dial(%s) with Insecure = %v; want it dialled", url, err)
		}
	}
	h := newTestHub(t)
	for _, tr := range []string{"ws", "tcp"} {
		url := h.Listen(tr)
		for _, u := range []string{url, strings.Replace(url, "127.0.0.1", "localhost", 1)} {
			c, err := halclient.Dial(testCtx(t), u, halclient.Options{Token: h.Agent})
			if err != nil {
				t.Fatalf("Dial(%s) on loopback: %v", u, err)
			}
			c.Close()
		}
	}
}
