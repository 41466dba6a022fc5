package gatewayd

import (
	"net"
	"testing"
)

func TestConsoleURL(t *testing.T) {
	for _, tc := range []struct {
		addr   string
		secure bool
		want   string
	}{
		{"127.0.0.1:7750", false, "http://127.0.0.1:7750/"},
		{"0.0.0.0:7750", false, "http://127.0.0.1:7750/"},
		{"[::]:7750", false, "http://[::1]:7750/"},
		{"192.168.1.20:7752", true, "https://192.168.1.20:7752/"},
		{"10.0.0.2:80", false, "http://10.0.0.2/"},
		{"[fe80::1]:443", true, "https://[fe80::1]/"},
	} {
		addr, err := net.ResolveTCPAddr("tcp", tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := consoleURL(tc.secure, addr); got != tc.want {
			t.Errorf("consoleURL(%v, %s) = %s; want %s", tc.secure, tc.addr, got, tc.want)
		}
	}
}

// The state directory's record names a wildcard listener by 127.0.0.1:
// a local client dials it as loopback, never as a host off loopback.
func TestLocalURL(t *testing.T) {
	for _, tc := range []struct {
		scheme, addr string
		web          bool
		want         string
	}{
		{"ws", "127.0.0.1:7750", true, "ws://127.0.0.1:7750/hal"},
		{"ws", "0.0.0.0:7750", true, "ws://127.0.0.1:7750/hal"},
		{"tcp", "[::]:7751", false, "tcp://127.0.0.1:7751"},
		{"wss", "192.168.1.20:7752", true, "wss://192.168.1.20:7752/hal"},
		{"tls", "[::1]:7753", false, "tls://[::1]:7753"},
	} {
		addr, err := net.ResolveTCPAddr("tcp", tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := localURL(tc.scheme, addr, tc.web); got != tc.want {
			t.Errorf("localURL(%s, %s) = %s; want %s", tc.scheme, tc.addr, got, tc.want)
		}
	}
}
