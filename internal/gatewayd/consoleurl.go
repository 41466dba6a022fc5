package gatewayd

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
	host, port, err := localHostPort(addr)
	if err != nil {
		return scheme + "://" + addr.String() + "/"
	}
	if p, err := strconv.Atoi(port); err == nil && (!secure && p == 80 || secure && p == 443) {
		return scheme + "://" + bracket(host) + "/"
	}
	return scheme + "://" + net.JoinHostPort(host, port) + "/"
}

// localURL is a hub's URL on a listener as a client on the gateway's own
// machine reaches it (the record in the state directory): a wildcard
// listen address becomes 127.0.0.1, which a plain transport may dial
// without --insecure (the gateway listens on both families at once on
// a wildcard, so 127.0.0.1 answers for :: too).
func localURL(scheme string, addr net.Addr, web bool) string {
	hostPort := addr.String()
	if host, port, err := net.SplitHostPort(hostPort); err == nil {
		if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
			hostPort = net.JoinHostPort("127.0.0.1", port)
		}
	}
	if web {
		return scheme + "://" + hostPort + "/hal"
	}
	return scheme + "://" + hostPort
}

// localHostPort splits a listen address, a wildcard host (0.0.0.0, ::)
// replaced by the loopback address of its family.
func localHostPort(addr net.Addr) (host, port string, err error) {
	host, port, err = net.SplitHostPort(addr.String())
	if err != nil {
		return "", "", err
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if ip.To4() == nil {
			host = "::1"
		}
	}
	return host, port, nil
}

// bracket puts an IPv6 address in brackets, as a URL needs it.
func bracket(host string) string {
	if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
		return "[" + host + "]"
	}
	return host
}
