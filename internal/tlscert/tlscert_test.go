package tlscert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

var hexFingerprint = regexp.MustCompile(`^[0-9a-f]{64}$`)

func TestCreate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	cert, created, err := LoadOrCreate(dir, "", "", Identity{GatewayID: testID, Hosts: []string{"gw.lan", "192.168.1.20", "0.0.0.0", "", "::", "localhost"}})
	if err != nil || !created {
		t.Fatalf("LoadOrCreate = created %v, %v; want a new certificate", created, err)
	}
	for name, want := range map[string]os.FileMode{".": 0o700, KeyName: 0o600} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", name, fi.Mode().Perm(), want)
		}
	}
	leaf := cert.Leaf
	if leaf == nil {
		t.Fatal("no parsed leaf certificate")
	}
	host, _ := os.Hostname()
	wantDNS := []string{"localhost", host, "gw.lan"}
	if !slices.Equal(leaf.DNSNames, wantDNS) {
		t.Errorf("DNS names %q, want %q", leaf.DNSNames, wantDNS)
	}
	var ips []string
	for _, ip := range leaf.IPAddresses {
		ips = append(ips, ip.String())
	}
	if want := []string{"127.0.0.1", "::1", "192.168.1.20"}; !slices.Equal(ips, want) {
		t.Errorf("IP addresses %q, want %q", ips, want)
	}
	pub, ok := leaf.PublicKey.(*ecdsa.PublicKey)
	if !ok || pub.Curve != elliptic.P256() {
		t.Errorf("public key %T, want ECDSA P-256", leaf.PublicKey)
	}
	if err := leaf.CheckSignature(leaf.SignatureAlgorithm, leaf.RawTBSCertificate, leaf.Signature); err != nil {
		t.Errorf("not self-signed: %v", err)
	}
	if leaf.IsCA || !slices.Contains(leaf.ExtKeyUsage, x509.ExtKeyUsageServerAuth) {
		t.Errorf("IsCA %v, ExtKeyUsage %v; want a server certificate that is no CA", leaf.IsCA, leaf.ExtKeyUsage)
	}
	if !leaf.NotBefore.Equal(time.Unix(0, 0)) {
		t.Errorf("NotBefore %v, want the Unix epoch", leaf.NotBefore)
	}
	if min := time.Now().Add(validity - time.Hour); leaf.NotAfter.Before(min) {
		t.Errorf("NotAfter %v, want at least %v", leaf.NotAfter, min)
	}
	if len(leaf.URIs) != 1 || leaf.URIs[0].String() != "urn:openhal:gateway:"+testID || GatewayID(leaf) != testID {
		t.Errorf("URIs %v, GatewayID %q; want urn:openhal:gateway:%s", leaf.URIs, GatewayID(leaf), testID)
	}
}

const testID = "0123456789abcdef0123456789abcdef"

// A certificate without an id (made before ids, or the operator's own),
// or with a URI that is not a gateway id, has none; the kept certificate
// is not remade to add one.
func TestGatewayIDAbsent(t *testing.T) {
	dir := t.TempDir()
	old, _, err := LoadOrCreate(dir, "", "", Identity{})
	if err != nil {
		t.Fatal(err)
	}
	if id := GatewayID(old.Leaf); id != "" {
		t.Errorf("GatewayID of a certificate without one = %q", id)
	}
	kept, created, err := LoadOrCreate(dir, "", "", Identity{GatewayID: testID})
	if err != nil || created || Fingerprint(kept) != Fingerprint(old) || GatewayID(kept.Leaf) != "" {
		t.Errorf("LoadOrCreate with an id over a kept certificate: created %v, %v, id %q; want the kept one as it was", created, err, GatewayID(kept.Leaf))
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"not-hex", strings.ToUpper(testID), testID + "00"} {
		der, err := selfSign(key, id, nil, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		leaf, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		if got := GatewayID(leaf); got != "" {
			t.Errorf("GatewayID with URI for %q = %q, want none", id, got)
		}
	}
}

// TestUnsetClock: a certificate made while the clock says 1970 (a Pi
// before NTP) is still valid for ten years once the clock is right.
func TestUnsetClock(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := selfSign(key, "", []string{"localhost"}, time.Unix(3600, 0))
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	if want := clockFloor.Add(validity); !leaf.NotAfter.Equal(want) {
		t.Errorf("NotAfter %v, want %v", leaf.NotAfter, want)
	}
}

func TestReloadKeepsTheCertificate(t *testing.T) {
	dir := t.TempDir()
	first, _, err := LoadOrCreate(dir, "", "", Identity{})
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(dir, CertName))
	if err != nil {
		t.Fatal(err)
	}
	second, created, err := LoadOrCreate(dir, "", "", Identity{GatewayID: testID, Hosts: []string{"other.lan"}})
	if err != nil || created {
		t.Fatalf("second LoadOrCreate = created %v, %v; want the kept certificate", created, err)
	}
	if Fingerprint(first) != Fingerprint(second) {
		t.Errorf("fingerprint changed from %s to %s", Fingerprint(first), Fingerprint(second))
	}
	after, _ := os.ReadFile(filepath.Join(dir, CertName))
	if string(before) != string(after) {
		t.Error("cert.pem was rewritten")
	}
}

func TestFingerprint(t *testing.T) {
	dir := t.TempDir()
	cert, _, err := LoadOrCreate(dir, "", "", Identity{})
	if err != nil {
		t.Fatal(err)
	}
	// The DER as another tool would read it: from the PEM file.
	b, err := os.ReadFile(filepath.Join(dir, CertName))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(b)
	sum := sha256.Sum256(block.Bytes)
	fp := Fingerprint(cert)
	if want := hex.EncodeToString(sum[:]); fp != want {
		t.Errorf("Fingerprint = %s, want %s", fp, want)
	}
	if !hexFingerprint.MatchString(fp) {
		t.Errorf("Fingerprint = %q, want 64 lowercase hex digits", fp)
	}
	if got := Fingerprint(tls.Certificate{}); got != "" {
		t.Errorf("Fingerprint of no certificate = %q, want \"\"", got)
	}
}

func TestParsePin(t *testing.T) {
	const fp = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	var colons []string
	for i := 0; i < len(fp); i += 2 {
		colons = append(colons, strings.ToUpper(fp[i:i+2]))
	}
	for _, in := range []string{fp, strings.ToUpper(fp), strings.Join(colons, ":"), " " + fp + "\n"} {
		if got, err := ParsePin(in); err != nil || got != fp {
			t.Errorf("ParsePin(%q) = %q, %v; want %s", in, got, err, fp)
		}
	}
	for _, in := range []string{"", fp[:62], fp + "00", "g" + fp[1:], "sha256:" + fp} {
		if got, err := ParsePin(in); err == nil || !strings.Contains(err.Error(), "64 hex digits") {
			t.Errorf("ParsePin(%q) = %q, %v; want an error asking for 64 hex digits", in, got, err)
		}
	}
}

func TestGivenFiles(t *testing.T) {
	src := t.TempDir()
	made, _, err := LoadOrCreate(src, "", "", Identity{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, created, err := LoadOrCreate(dir, filepath.Join(src, CertName), filepath.Join(src, KeyName), Identity{})
	if err != nil || created {
		t.Fatalf("LoadOrCreate with files = created %v, %v", created, err)
	}
	if Fingerprint(cert) != Fingerprint(made) || cert.Leaf == nil {
		t.Error("the given files were not the certificate loaded")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the state directory got %d files; with given files it needs none", len(entries))
	}
	if _, _, err := LoadOrCreate(dir, filepath.Join(src, CertName), "", Identity{}); err == nil || !strings.Contains(err.Error(), "both") {
		t.Errorf("a certificate without a key file = %v, want an error asking for both", err)
	}
}

func TestBadFiles(t *testing.T) {
	good := t.TempDir()
	if _, _, err := LoadOrCreate(good, "", "", Identity{}); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	if _, _, err := LoadOrCreate(other, "", "", Identity{}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	goodCert, goodKey := filepath.Join(good, CertName), filepath.Join(good, KeyName)
	tests := []struct {
		name, cert, key string
		want            []string
	}{
		{"missing certificate", filepath.Join(dir, "none.pem"), goodKey, []string{"none.pem", "no such file"}},
		{"missing key", goodCert, filepath.Join(dir, "none.pem"), []string{"none.pem", "no such file"}},
		{"not PEM", garbage, goodKey, []string{garbage, "PEM"}},
		{"key of another certificate", goodCert, filepath.Join(other, KeyName), []string{goodCert, "private key does not match"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := LoadOrCreate(t.TempDir(), tt.cert, tt.key, Identity{})
			if err == nil {
				t.Fatal("LoadOrCreate accepted bad files")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestHalfWritten: a certificate whose key is gone is an error, never
// silently replaced (clients have pinned it); a key whose certificate was
// never written is replaced.
func TestHalfWritten(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := LoadOrCreate(dir, "", "", Identity{}); err != nil {
		t.Fatal(err)
	}
	certPath, keyPath := filepath.Join(dir, CertName), filepath.Join(dir, KeyName)
	before, _ := os.ReadFile(certPath)
	if err := os.Remove(keyPath); err != nil {
		t.Fatal(err)
	}
	_, _, err := LoadOrCreate(dir, "", "", Identity{})
	if err == nil || !strings.Contains(err.Error(), keyPath) || !strings.Contains(err.Error(), "remove the certificate") {
		t.Errorf("a certificate without its key = %v, want an error naming %s", err, keyPath)
	}
	if after, _ := os.ReadFile(certPath); string(after) != string(before) {
		t.Error("the certificate was replaced")
	}

	if err := os.Rename(certPath, keyPath); err != nil { // any leftover file will do
		t.Fatal(err)
	}
	cert, created, err := LoadOrCreate(dir, "", "", Identity{})
	if err != nil || !created || cert.Leaf == nil {
		t.Errorf("a key without its certificate = created %v, %v; want a new certificate", created, err)
	}
}

// TestServerConfig: a client that trusts the self-signed certificate as a
// root verifies it for localhost over the configuration's TLS, and a
// client that offers only TLS 1.1 is refused.
func TestServerConfig(t *testing.T) {
	cert, _, err := LoadOrCreate(t.TempDir(), "", "", Identity{})
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(cert.Leaf)
	for _, tt := range []struct {
		name   string
		client *tls.Config
		ok     bool
	}{
		{"verified", &tls.Config{RootCAs: roots, ServerName: "localhost"}, true},
		{"verified by IP", &tls.Config{RootCAs: roots, ServerName: "::1"}, true},
		{"TLS 1.1", &tls.Config{RootCAs: roots, ServerName: "localhost", MaxVersion: tls.VersionTLS11}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, b := net.Pipe()
			defer a.Close()
			defer b.Close()
			srv := tls.Server(a, ServerConfig(cert))
			done := make(chan error, 1)
			go func() { done <- srv.Handshake() }()
			err := tls.Client(b, tt.client).Handshake()
			if tt.ok != (err == nil) {
				t.Errorf("client handshake = %v, want success %v", err, tt.ok)
			}
			b.Close() // lets the server's handshake end either way
			<-done
		})
	}
}
