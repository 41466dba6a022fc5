package mcpbridge

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestCheckHost: DNS rebinding is refused on a loopback listener only.
func TestCheckHost(t *testing.T) {
	for _, c := range []struct {
		local, host string
		refused     bool
	}{
		{"127.0.0.1:7750", "127.0.0.1:7750", false},
		{"127.0.0.1:7750", "localhost:7750", false},
		{"127.0.0.1:7750", "LOCALHOST", false},
		{"[::1]:7750", "[::1]:7750", false},
		{"127.0.0.1:7750", "evil.example:7750", true},
		{"127.0.0.1:7750", "evil.example", true},
		{"[::1]:7750", "192.168.1.20:7750", true},
		{"192.168.1.20:7750", "bench.lan:7750", false}, // a LAN listener: any name
		{"", "evil.example", false},                    // no local address known
	} {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Host = c.host
		if c.local != "" {
			addr, err := net.ResolveTCPAddr("tcp", c.local)
			if err != nil {
				t.Fatal(err)
			}
			r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, net.Addr(addr)))
		}
		if err := checkHost(r); (err != nil) != c.refused {
			t.Errorf("local %s, Host %s: %v, want refused %v", c.local, c.host, err, c.refused)
		}
	}
}
