package mosquittotest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// certFiles are the PEM files a TLS listener and its client use.
type certFiles struct {
	ca, serverCert, serverKey, clientCert, clientKey string
}

// makeCerts makes a CA, a server certificate for 127.0.0.1 and localhost
// and a client certificate, both signed by the CA, valid for a day.
func makeCerts(t testing.TB, dir string) certFiles {
	t.Helper()
	caKey := newKey(t)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mosquittotest CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	f := certFiles{
		ca:         writePEM(t, dir, "ca.pem", "CERTIFICATE", caDER),
		serverCert: filepath.Join(dir, "server.pem"), serverKey: filepath.Join(dir, "server.key"),
		clientCert: filepath.Join(dir, "client.pem"), clientKey: filepath.Join(dir, "client.key"),
	}
	leaf(t, ca, caKey, 2, &x509.Certificate{
		Subject: pkix.Name{CommonName: "127.0.0.1"}, DNSNames: []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, f.serverCert, f.serverKey)
	leaf(t, ca, caKey, 3, &x509.Certificate{
		Subject: pkix.Name{CommonName: "gateway"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, f.clientCert, f.clientKey)
	return f
}

func leaf(t testing.TB, ca *x509.Certificate, caKey *ecdsa.PrivateKey, serial int64, tmpl *x509.Certificate, certFile, keyFile string) {
	t.Helper()
	key := newKey(t)
	tmpl.SerialNumber = big.NewInt(serial)
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, filepath.Dir(certFile), filepath.Base(certFile), "CERTIFICATE", der)
	writePEM(t, filepath.Dir(keyFile), filepath.Base(keyFile), "EC PRIVATE KEY", keyDER)
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func writePEM(t testing.TB, dir, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
