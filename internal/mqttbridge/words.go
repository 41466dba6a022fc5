package mqttbridge

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
)

// Why says in words why the broker cannot be reached, with what to
// check: the mqtt.broker device and the log show it to someone who did
// not write the adapter. broker is "mqtt://host:port".
func Why(err error, broker string) string {
	var refused *RefusedError
	if errors.As(err, &refused) {
		return refusedWords(refused)
	}
	if errors.Is(err, ErrConnectionLost) {
		return "connection to " + broker + " lost (" + strings.TrimPrefix(err.Error(), ErrConnectionLost.Error()+": ") + "); reconnecting"
	}
	if s := tlsWords(err); s != "" {
		return s
	}
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.As(err, &dns):
		return "host not found: " + dns.Name + ": check " + SettingsPath + ".broker"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused by " + broker + ": is the broker running, on that port?"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "no route to " + broker + ": check the network and " + SettingsPath + ".broker"
	case errors.As(err, &op) && op.Timeout(), errors.Is(err, syscall.ETIMEDOUT):
		return "no answer from " + broker + " (timed out): check the address and any firewall"
	case (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)) && strings.HasPrefix(broker, "mqtts://"):
		return "TLS: " + broker + " closed the connection after the handshake: does it require a client certificate? check " + SettingsPath + ".tls.cert and key"
	case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET):
		return "the connection was closed by " + broker + " (a TLS listener answering mqtt://? then use mqtts://)"
	case errors.Is(err, ErrDisconnected):
		return "connection lost"
	}
	return err.Error()
}

// refusedWords names MQTT 5's reason codes (CONNACK and DISCONNECT).
func refusedWords(e *RefusedError) string {
	auth := ": check " + SettingsPath + ".username and password"
	words := map[byte]string{
		0x80: "unspecified error",
		0x81: "malformed packet",
		0x82: "protocol error",
		0x84: "unsupported protocol version: the broker must speak MQTT 5",
		0x85: "client identifier not valid: check " + SettingsPath + ".clientId",
		0x86: "bad user name or password" + auth,
		0x87: "not authorized" + auth,
		0x88: "server unavailable",
		0x89: "server busy",
		0x8A: "banned by the broker",
		0x8B: "server shutting down",
		0x8C: "bad authentication method",
		0x8D: "keep alive timeout",
		0x8E: "session taken over: another client connected with the same clientId (two gateways with one id? set " + SettingsPath + ".gateway or clientId)",
		0x93: "receive maximum exceeded",
		0x95: "packet too large for the broker",
		0x97: "quota exceeded",
		0x9C: "use another server",
		0x9D: "server moved",
		0x9F: "connection rate exceeded",
	}
	s, ok := words[e.Code]
	if !ok {
		s = e.Error()
	}
	if e.Reason != "" && ok {
		s += " (broker says: " + e.Reason + ")"
	}
	return s
}

func tlsWords(err error) string {
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	var alert tls.AlertError
	var record tls.RecordHeaderError
	var verify *tls.CertificateVerificationError
	switch {
	case errors.As(err, &unknown):
		return "TLS: the broker's certificate is not signed by a known authority: set " + SettingsPath + ".tls.ca to its CA file"
	case errors.As(err, &host):
		return "TLS: the broker's certificate is not for this host (" + host.Host + "): use the name it was made for in " + SettingsPath + ".broker"
	case errors.As(err, &invalid):
		return "TLS: the broker's certificate is not valid: " + invalid.Error()
	case errors.As(err, &record):
		return "TLS: the broker did not answer in TLS: is " + SettingsPath + ".broker's port a TLS listener? (else use mqtt://)"
	case errors.As(err, &alert):
		return "TLS: the broker refused the handshake (" + alert.Error() + "): check " + SettingsPath + ".tls.cert and key, if it wants a client certificate"
	case strings.Contains(err.Error(), "remote error: tls: "):
		// crypto/tls's alerts from the peer are of an unexported type.
		_, alert, _ := strings.Cut(err.Error(), "remote error: tls: ")
		return "TLS: the broker refused the handshake (" + alert + "): does it require a client certificate? check " + SettingsPath + ".tls.cert and key"
	case errors.As(err, &verify):
		return "TLS: " + verify.Error()
	}
	return ""
}
