package halhub

import (
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
)

// CheckOrigin applies the Hub's Origin rule to an HTTP request, as the
// WebSocket upgrade of /hal applies it: a request with no Origin (a
// program, not a browser) passes; a browser's passes when its page is on
// the gateway's own site (the Origin's host is the request's Host) or on
// a site of AllowedOrigins (host patterns, path.Match, any case; a pattern
// with "://" matches scheme://host). Otherwise the error says why, so that
// a web page open in an operator's browser cannot use an endpoint of the
// gateway's (/mcp) from another site, not even to try tokens.
func (h *Hub) CheckOrigin(r *http.Request) error {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return nil
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return fmt.Errorf("the Origin %q is not a URL with a host", origin)
	}
	if strings.EqualFold(r.Host, u.Host) {
		return nil
	}
	for _, p := range h.opt.AllowedOrigins {
		target := u.Host
		if strings.Contains(p, "://") {
			target = u.Scheme + "://" + u.Host
		}
		if ok, _ := path.Match(strings.ToLower(p), strings.ToLower(target)); ok {
			return nil
		}
	}
	return fmt.Errorf("web pages of %s may not use this gateway (hub.allowedOrigins)", u.Host)
}
