package halclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/openhal/gateway/internal/tlscert"
)

// A TLS Hub is trusted the way SSH trusts a host (openhal-0.1 §2): by a
// pin the caller gives, by the system's CAs, or, with a known-gateways
// file (Options.KnownGateways), by what the user trusted before under
// the gateway's id; a gateway met for the first time is put to
// Options.FirstUse, and trusted is recorded. All of it happens in the
// TLS handshake's VerifyConnection, before the Hub is sent anything: no
// token goes to a Hub that is not trusted.

// Presented is a Hub's certificate as the client saw it in the handshake.
type Presented struct {
	URL  string // the URL dialled
	Addr string // its host:port, as dialled
	// Name is what the gateway was found as (Options.Name: its name on
	// the LAN); "" for a URL.
	Name string
	// ID is the gateway id the certificate carries; "" for a certificate
	// without one (made by an earlier version, or the operator's own).
	ID string
	// Fingerprint is the SHA-256 of the certificate's DER, lowercase hex.
	Fingerprint string
	// File is the known-gateways file it is looked up in, and recorded in
	// once trusted.
	File string
}

// key is what the file keys the gateway by: its id, else the host:port
// it was reached at, as SSH keys a host by its name.
func (p Presented) key() string {
	if p.ID != "" {
		return p.ID
	}
	return p.Addr
}

// names are what the gateway was reached as: its name on the LAN and the
// host:port dialled. A loopback address says nothing of which gateway
// answers (an ssh -L forward, the gateway on this machine, a test's), so
// it is neither recorded nor checked; the id is.
func (p Presented) names() []string {
	var out []string
	if p.Name != "" {
		out = append(out, p.Name)
	}
	if host, _, err := net.SplitHostPort(p.Addr); err == nil && !isLoopback(host) {
		out = append(out, p.Addr)
	}
	return out
}

// described is how the gateway is named in errors: its URL, name and id.
func (p Presented) described() string {
	s := p.URL
	var more []string
	if p.Name != "" {
		more = append(more, fmt.Sprintf("found as %q", p.Name))
	}
	if p.ID != "" {
		more = append(more, "id "+p.ID)
	} else {
		more = append(more, "its certificate names no gateway id")
	}
	return s + " (" + strings.Join(more, ", ") + ")"
}

// UnknownGatewayError is a Hub whose certificate nothing vouches for yet:
// no pin, not a CA's, not in the known-gateways file. Options.FirstUse
// decides it; without one it is refused. Retrying it is pointless.
type UnknownGatewayError struct {
	Presented
}

func (e *UnknownGatewayError) Error() string {
	return fmt.Sprintf("the gateway at %s is not known yet (not in %s): its certificate's SHA-256 fingerprint is %s; "+
		"compare it with the one `gateway status` shows on the gateway, then give it as the pin, which records it; nothing was sent",
		e.described(), e.File, e.Fingerprint)
}

// ChangedGatewayError is a Hub whose certificate is not the one the
// known-gateways file trusts for its id, name or address: the gateway
// made a new certificate, or something in between is not the gateway.
// Retrying it is pointless; a person removes the line after checking.
type ChangedGatewayError struct {
	Presented
	Key      string // the entry's key: a gateway id or a host:port
	Recorded string // the fingerprint the file trusts
	Line     int    // the entry's line in File
}

func (e *ChangedGatewayError) Error() string {
	return fmt.Sprintf("the gateway at %s presented a certificate with SHA-256 fingerprint %s, but %s line %d trusts %s for %s; "+
		"refused, nothing was sent: the gateway has a new certificate, or something in between is not the gateway. "+
		"If `gateway status` on the gateway shows %s, remove line %d of %s and connect again",
		e.described(), e.Fingerprint, e.File, e.Line, e.Recorded, e.Key, e.Fingerprint, e.Line, e.File)
}

// ClearTextError is a plain URL (ws://, tcp://) to a host off loopback
// without Options.Insecure: the token would cross the network in clear.
// Retrying it is pointless.
type ClearTextError struct {
	URL string
}

func (e *ClearTextError) Error() string {
	return fmt.Sprintf("%s is a plain transport to a host off loopback: the token would cross the network in clear; "+
		"use the gateway's wss:// or tls:// URL, or allow clear text explicitly", e.URL)
}

// isLoopback reports whether a host reaches this machine only: localhost
// or an address of 127.0.0.0/8 or ::1. Other names may resolve anywhere.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

// verifier checks one dial's certificate.
type verifier struct {
	p    Presented // URL, Addr, Name, File; the rest is filled per handshake
	host string    // for the system's verification
	pin  string    // lowercase hex, or ""
	// seen is the fingerprint of the certificate of the last handshake
	// that passed.
	seen string
}

// config is the TLS client configuration of the dial. Without a pin and
// a file, the system's verification is the whole check, done by
// crypto/tls; otherwise verify is, on every handshake, resumed ones too.
func (v *verifier) config() *tls.Config {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: v.host, VerifyConnection: v.verify}
	// A pin or the file replaces the chain's check: a gateway on a LAN
	// serves a self-signed certificate that no CA vouches for.
	tc.InsecureSkipVerify = v.pin != "" || v.p.File != ""
	return tc
}

func (v *verifier) verify(cs tls.ConnectionState) error {
	if len(cs.PeerCertificates) == 0 {
		return &CertificateError{URL: v.p.URL, Pin: v.pin}
	}
	leaf := cs.PeerCertificates[0]
	p := v.p
	p.Fingerprint, p.ID = tlscert.FingerprintDER(leaf.Raw), tlscert.GatewayID(leaf)
	if v.pin != "" && p.Fingerprint != v.pin {
		return &CertificateError{URL: p.URL, Pin: v.pin, Got: p.Fingerprint}
	}
	if p.File == "" {
		v.seen = p.Fingerprint // a pin, or the system's verification, passed
		return nil
	}
	k, err := readKnown(p.File)
	if err != nil {
		return err
	}
	if e := k.conflict(p.key(), p.names(), p.Fingerprint); e != nil {
		return changed(p, e)
	}
	switch {
	case k.byFingerprint(p.Fingerprint) != nil, v.pin != "":
		// Trusted already: a file that cannot be written only costs
		// the names it would have noted, or the record of the pin; a
		// conflict another process wrote meanwhile is still refused.
		var ce *ChangedGatewayError
		if err := record(p); errors.As(err, &ce) {
			return err
		}
	case v.systemTrusts(cs) != nil:
		return &UnknownGatewayError{Presented: p}
	}
	v.seen = p.Fingerprint
	return nil
}

// systemTrusts verifies the chain against the system's CAs for the host
// dialled: an operator's certificate from a CA the user's system trusts
// needs no record.
func (v *verifier) systemTrusts(cs tls.ConnectionState) error {
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{DNSName: v.host, Intermediates: inter})
	return err
}

func changed(p Presented, e *knownEntry) *ChangedGatewayError {
	return &ChangedGatewayError{Presented: p, Key: e.key, Recorded: e.fingerprint, Line: e.line}
}

// record files p's certificate in its known-gateways file, with the
// names it was reached as, unless another process recorded something
// else for it meanwhile.
func record(p Presented) error {
	return updateKnown(p.File, func(k *knownGateways) (bool, error) {
		if e := k.conflict(p.key(), p.names(), p.Fingerprint); e != nil {
			return false, changed(p, e)
		}
		return k.add(p.key(), p.Fingerprint, p.names()), nil
	})
}

// firstUse puts a gateway met for the first time to opt.FirstUse, and
// records it when trusted. It returns err, the dial's error, when that is
// not such a gateway or nothing decides it.
func firstUse(ctx context.Context, opt Options, err error) (trusted bool, _ error) {
	var ue *UnknownGatewayError
	if !errors.As(err, &ue) || opt.FirstUse == nil {
		return false, err
	}
	if err := opt.FirstUse(ctx, ue.Presented); err != nil {
		return false, err
	}
	if err := record(ue.Presented); err != nil {
		return false, err
	}
	return true, nil
}
