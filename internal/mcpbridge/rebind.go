package mcpbridge

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// checkHost refuses DNS rebinding: a request that reached a loopback
// address but names another host in its Host header comes from a web page
// whose site's name was pointed at 127.0.0.1 — to the browser the page and
// the gateway are then one origin, so the Origin rule lets it pass. The
// SDK's handler refuses such a request too, but only after the token has
// been tried (it runs behind the bearer check): here it is refused first,
// so that such a page cannot even try tokens, nor use up the address's
// allowance of failures that the operator's tools share. A gateway
// reached on a LAN address is not concerned: its Host is whatever name
// the LAN gives it.
func checkHost(r *http.Request) error {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil || !loopback(local.String()) || loopback(r.Host) {
		return nil
	}
	return fmt.Errorf("this gateway listens on a loopback address and is not %q: a web page may not use it under another name (DNS rebinding)", r.Host)
}

// loopback reports whether addr (host or host:port) is localhost or a
// loopback address.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
