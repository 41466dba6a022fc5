package main

import (
	"net"
	"strconv"
)

// consoleURL is the console's address on a web listener, as logged for a
// person to open: a wildcard listen address (0.0.0.0, ::) shows as the
// loopback one, which works on the gateway itself; from the LAN the
// gateway's own address takes its place.
func consoleURL(secure bool, addr net.Addr) string {
	scheme := "http"
	if secure {
		scheme = "https"
	}
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return scheme + "://" + addr.String() + "/"
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if ip.To4() == nil {
			host = "::1"
		}
	}
	if p, err := strconv.Atoi(port); err == nil && (!secure && p == 80 || secure && p == 443) {
		return scheme + "://" + bracket(host) + "/"
	}
	return scheme + "://" + net.JoinHostPort(host, port) + "/"
}

// bracket puts an IPv6 address in brackets, as a URL needs it.
func bracket(host string) string {
	if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
		return "[" + host + "]"
	}
	return host
}
