package mcpbridge

import (
	"crypto/tls"
	"net/http/httptest"
	"testing"
)

// The approval line /mcp hands an agent reaches the gateway that served
// it: by its state directory when that is not the CLI's default, else by
// the listener it was reached on, else by nothing.
func TestApproveFlagsOf(t *testing.T) {
	tests := []struct {
		host, stateDir string
		tls            bool
		want           string
	}{
		{"127.0.0.1:7750", "", false, ""},
		{"127.0.0.1:7760", "", false, "--hub ws://127.0.0.1:7760/hal"},
		{"gw.lan:7752", "", true, "--hub wss://gw.lan:7752/hal"},
		{"127.0.0.1:7760", "/tmp/gw", false, "--state-dir /tmp/gw"},
		{"127.0.0.1:7750", "/srv/my bench", false, "--state-dir '/srv/my bench'"},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("POST", "/mcp", nil)
		r.Host = tt.host
		if tt.tls {
			r.TLS = &tls.ConnectionState{}
		} else {
			r.TLS = nil
		}
		if got := approveFlagsOf(r, tt.stateDir); got != tt.want {
			t.Errorf("approveFlagsOf(%s, %q) = %q, want %q", tt.host, tt.stateDir, got, tt.want)
		}
	}
}
