package cli

import "testing"

// TestFingerprintOption: --fingerprint goes to halclient as given (which
// refuses it with a URL without TLS); $GATEWAY_FINGERPRINT is the default
// for TLS URLs only, so that it may stay set while --hub names another
// transport.
func TestFingerprintOption(t *testing.T) {
	const env, flag = "env-fingerprint", "flag-fingerprint"
	t.Setenv("GATEWAY_FINGERPRINT", env)
	for _, tt := range []struct{ hub, flag, want string }{
		{"wss://gw.lan:7752/hal", "", env},
		{"tls://gw.lan:7753", "", env},
		{"tls://gw.lan:7753", flag, flag},
		{"ws://gw.lan:7750/hal", "", ""},
		{"tcp://gw.lan:7751", "", ""},
		{"unix:///run/gateway/hal.sock", "", ""},
		{"tcp://gw.lan:7751", flag, flag},
	} {
		f := &clientFlags{hub: tt.hub, fingerprint: tt.flag}
		if got := f.options("tok").Fingerprint; got != tt.want {
			t.Errorf("hub %s, --fingerprint %q: Fingerprint %q, want %q", tt.hub, tt.flag, got, tt.want)
		}
	}
}
