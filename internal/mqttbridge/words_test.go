package mqttbridge_test

import (
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/openhal/gateway/internal/mqttbridge"
)

// Each kind of connection error has words that say what to check.
func TestWhy(t *testing.T) {
	const broker = "mqtt://127.0.0.1:1883"
	for _, tc := range []struct {
		name   string
		err    error
		broker string
		want   string
	}{
		{"bad password", &mqttbridge.RefusedError{Code: 0x86}, broker, "bad user name or password: check adapters.settings.mqtt.username and password"},
		{"not authorized", fmt.Errorf("connect: %w", &mqttbridge.RefusedError{Code: 0x87}), broker, "not authorized: check adapters.settings.mqtt.username and password"},
		{"server unavailable", &mqttbridge.RefusedError{Code: 0x88, Reason: "maintenance"}, broker, "server unavailable (broker says: maintenance)"},
		{"taken over", &mqttbridge.RefusedError{Code: 0x8E, Disconnect: true}, broker, "session taken over: another client connected with the same clientId"},
		{"unknown code", &mqttbridge.RefusedError{Code: 0xF0}, broker, "the broker refused the connection (reason code 0xF0)"},
		{"refused", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, broker, "connection refused by mqtt://127.0.0.1:1883: is the broker running, on that port?"},
		{"dns", &net.DNSError{Name: "broker.lan", Err: "no such host"}, broker, "host not found: broker.lan"},
		{"lost", fmt.Errorf("%w: %w", mqttbridge.ErrConnectionLost, io.EOF), broker, "connection to mqtt://127.0.0.1:1883 lost (EOF); reconnecting"},
		{"unknown CA", x509.UnknownAuthorityError{}, "mqtts://h:8883", "TLS: the broker's certificate is not signed by a known authority: set adapters.settings.mqtt.tls.ca"},
		{"wrong host", x509.HostnameError{Host: "10.0.0.2", Certificate: &x509.Certificate{}}, "mqtts://h:8883", "TLS: the broker's certificate is not for this host (10.0.0.2)"},
		{"plain to TLS port", io.EOF, broker, "the connection was closed by mqtt://127.0.0.1:1883 (a TLS listener answering mqtt://? then use mqtts://)"},
		{"no client cert", syscall.ECONNRESET, "mqtts://h:8883", "TLS: mqtts://h:8883 closed the connection after the handshake: does it require a client certificate?"},
		{"alert", fmt.Errorf("dial: remote error: tls: certificate required"), "mqtts://h:8883", "TLS: the broker refused the handshake (certificate required)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mqttbridge.Why(tc.err, tc.broker); !strings.HasPrefix(got, tc.want) {
				t.Errorf("Why = %q\nwant %q...", got, tc.want)
			}
		})
	}
}
