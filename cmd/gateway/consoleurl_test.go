package main

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
