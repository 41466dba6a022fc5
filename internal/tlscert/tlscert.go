// Package tlscert gives the gateway's TLS listeners (wss:// and tls://) a
// certificate: the operator's own files, or a self-signed certificate the
// gateway makes on its first start and keeps in its state directory.
//
// A gateway on a LAN has no name a public CA would sign, so its clients
// trust it by pinning: the fingerprint of its certificate, the SHA-256 of
// the leaf certificate's DER (openhal-0.1 §2), which the gateway logs at
// start. Keeping the certificate across restarts is what keeps the pins
// valid.
package tlscert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"github.com/openhal/gateway/internal/atomicfile"
	"io/fs"
	"math/big"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The self-signed certificate's files, in the directory LoadOrCreate is
// given.
const (
	CertName = "cert.pem"
	KeyName  = "key.pem"
)

// validity is how long a self-signed certificate is valid: long, since a
// new certificate breaks every client's pin.
const validity = 10 * 365 * 24 * time.Hour

// clockFloor is a date before which the clock is taken to be unset: a
// Raspberry Pi has no real-time clock and starts in 1970 until NTP sets
// it. A certificate made then counts its validity from this date, so that
// it is not already expired once the clock is right.
var clockFloor = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// notBefore is the start of a self-signed certificate's validity: the
// Unix epoch, so that a client whose clock is not set yet accepts it too.
var notBefore = time.Unix(0, 0).UTC()

// Identity is what a self-signed certificate is made for.
type Identity struct {
	// GatewayID is the gateway id (announce.GatewayID), carried in the
	// certificate as the URI SAN urn:openhal:gateway:ID so that a client
	// knows which gateway it reached from the handshake alone, before it
	// sends a token; "" leaves it out.
	GatewayID string
	// Hosts are the hosts of the listen addresses; empty and unspecified
	// ones are skipped.
	Hosts []string
}

// LoadOrCreate returns the certificate of the TLS listeners and reports
// whether it was made just now.
//
// With certFile and keyFile (both or neither) it loads those PEM files.
// Without them it loads cert.pem and key.pem from dir, or, when there is no
// cert.pem yet, makes a self-signed ECDSA P-256 certificate for
// localhost, 127.0.0.1, ::1, the machine's host name and self's hosts and
// gateway id, and writes both files (key.pem mode 0600) into dir, created
// mode 0700. A kept certificate is not remade when hosts change, nor to
// add an id that a certificate made by an earlier version lacks: that
// would break every pin, and a pinning client does not check names.
func LoadOrCreate(dir, certFile, keyFile string, self Identity) (cert tls.Certificate, created bool, err error) {
	switch {
	case certFile != "" && keyFile != "":
		cert, err := load(certFile, keyFile)
		return cert, false, err
	case certFile != "" || keyFile != "":
		return tls.Certificate{}, false, errors.New("TLS certificate: give both the certificate and the key file, or neither for a self-signed certificate")
	}
	certPath, keyPath := filepath.Join(dir, CertName), filepath.Join(dir, KeyName)
	_, certErr := os.Stat(certPath)
	_, keyErr := os.Stat(keyPath)
	switch {
	case certErr == nil && errors.Is(keyErr, fs.ErrNotExist):
		return tls.Certificate{}, false, fmt.Errorf("TLS certificate %s has no key %s: restore the key, or remove the certificate to make a new one (clients must then pin the new fingerprint)", certPath, keyPath)
	case certErr == nil:
		cert, err := load(certPath, keyPath)
		return cert, false, err
	case !errors.Is(certErr, fs.ErrNotExist):
		return tls.Certificate{}, false, fmt.Errorf("TLS certificate: %w", certErr)
	}
	// No certificate yet. A key alone is left from a start that stopped
	// between writing the two files: no client can have pinned anything,
	// so both are made anew.
	cert, err = create(dir, certPath, keyPath, self.GatewayID, sanHosts(self.Hosts))
	return cert, err == nil, err
}

func load(certFile, keyFile string) (tls.Certificate, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("load TLS certificate %s with key %s: %w", certFile, keyFile, err)
	}
	if cert.Leaf == nil {
		if cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return tls.Certificate{}, fmt.Errorf("parse TLS certificate %s: %w", certFile, err)
		}
	}
	return cert, nil
}

// sanHosts returns the names the self-signed certificate is for, each
// once.
func sanHosts(extra []string) []string {
	cand := []string{"localhost", "127.0.0.1", "::1"}
	if h, err := os.Hostname(); err == nil {
		cand = append(cand, h)
	}
	var hosts []string
	for _, h := range append(cand, extra...) {
		if a, err := netip.ParseAddr(h); err == nil {
			if a.IsUnspecified() {
				continue // every interface: its addresses are named above, or unknown
			}
			h = a.WithZone("").String()
		}
		if h != "" && !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	return hosts
}

// create makes a self-signed certificate and its key, and writes them:
// the key first, so that a certificate on disk always has its key.
func create(dir, certPath, keyPath, id string, hosts []string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("generate TLS key: %w", err)
	}
	der, err := selfSign(key, id, hosts, time.Now())
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("make self-signed TLS certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("encode TLS key: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return tls.Certificate{}, fmt.Errorf("create TLS directory: %w", err)
	}
	if err := atomicfile.Write(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return tls.Certificate{}, err
	}
	if err := atomicfile.Write(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return tls.Certificate{}, err
	}
	return load(certPath, keyPath)
}

// selfSign returns the DER of a server certificate for hosts and the
// gateway id, signed by key itself.
func selfSign(key *ecdsa.PrivateKey, id string, hosts []string, now time.Time) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	name := "gateway"
	if h, err := os.Hostname(); err == nil {
		name = "gateway " + h
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: name, Organization: []string{"gateway (self-signed)"}},
		NotBefore:             notBefore,
		NotAfter:              maxTime(now, clockFloor).Add(validity),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	if id != "" {
		tmpl.URIs = append(tmpl.URIs, &url.URL{Scheme: "urn", Opaque: idURN + id})
	}
	return x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
}

// idURN is the start of the URI SAN that names the gateway, after
// "urn:".
const idURN = "openhal:gateway:"

// GatewayID returns the gateway id a certificate carries (its URI SAN
// urn:openhal:gateway:ID), or "" for one without: made by an earlier
// version, or the operator's own. It is the certificate's claim, not
// proof: a client trusts a fingerprint, and files it under this id.
func GatewayID(c *x509.Certificate) string {
	for _, u := range c.URIs {
		if id, ok := strings.CutPrefix(u.Opaque, idURN); ok && u.Scheme == "urn" && validID(id) {
			return id
		}
	}
	return ""
}

// validID reports whether id is a gateway id: 32 lowercase hex digits.
func validID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for _, r := range id {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') {
			return false
		}
	}
	return true
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Fingerprint returns the SHA-256 of cert's leaf certificate's DER, in
// lowercase hex without separators; "" for a certificate without one.
func Fingerprint(cert tls.Certificate) string {
	if len(cert.Certificate) == 0 {
		return ""
	}
	return FingerprintDER(cert.Certificate[0])
}

// FingerprintDER returns the SHA-256 of a certificate's DER, in lowercase
// hex.
func FingerprintDER(der []byte) string {
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}

// ParsePin reads a fingerprint as people copy it: lowercase or uppercase
// hex, with or without colons between the bytes (as openssl prints it),
// and returns it as Fingerprint writes it.
func ParsePin(s string) (string, error) {
	pin := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(s), ":", ""))
	b, err := hex.DecodeString(pin)
	if err != nil || len(b) != sha256.Size {
		return "", fmt.Errorf("certificate fingerprint %q: want the SHA-256 as 64 hex digits (colons allowed), as the gateway logs it", s)
	}
	return pin, nil
}

// ServerConfig returns the TLS configuration of a listener serving cert:
// TLS 1.2 or later.
func ServerConfig(cert tls.Certificate) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{cert},
	}
}
