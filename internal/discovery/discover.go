package discovery

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/brutella/dnssd"

	"github.com/openhal/gateway/openhal/gatewayext"
)

// Gateway is one gateway found on the LAN, as it announced itself: the
// type is public (gatewayext), since `gateway discover --json` prints it.
type Gateway = gatewayext.Gateway

// Event is a gateway's service heard (Gone false) or withdrawn.
type Event struct {
	Gateway Gateway
	Gone    bool
}

// Browser listens for the services of one type; the dnssd library in
// production, a fake in tests.
type Browser func(ctx context.Context, service string, add, rmv func(dnssd.BrowseEntry)) error

// queries is how many times LookupType asks.
const queries = 5

// LookupType browses with github.com/brutella/dnssd, quietly. The library
// asks once, and a responder that answered the same question less than a
// second before stays silent (RFC 6762 §6: avahi does), so a browse
// started just after another would hear nothing: a new browse asks again
// after 1 s, 2 s, 4 s and 8 s, while the earlier ones go on listening
// (for goodbyes too). The same service may so be heard more than once;
// Watch reports it once.
func LookupType(ctx context.Context, service string, add, rmv func(dnssd.BrowseEntry)) error {
	Quiet()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, queries)
	ask := func() {
		go func() { errs <- dnssd.LookupType(ctx, service, add, rmv) }()
	}
	ask()
	asked, running := 1, 1
	delay := time.Second
	timer := time.NewTimer(delay)
	defer timer.Stop()
	var first error
	for running > 0 {
		select {
		case err := <-errs:
			running--
			if first == nil && ctx.Err() == nil {
				first = err
				cancel() // a browse that fails by itself: the others would too
			}
		case <-timer.C:
			if asked < queries && ctx.Err() == nil {
				ask()
				asked, running, delay = asked+1, running+1, 2*delay
				timer.Reset(delay)
			}
		}
	}
	if first != nil {
		return first
	}
	return ctx.Err()
}

// Watch browses until ctx ends and calls fn with the gateway, as known so
// far, each time one of its services is heard or withdrawn. fn is called
// from one goroutine at a time.
func Watch(ctx context.Context, browse Browser, fn func(Event)) error {
	var mu sync.Mutex
	known := map[string]map[string]dnssd.BrowseEntry{} // name -> type -> entry
	update := func(e dnssd.BrowseEntry, gone bool) {
		if !gone && e.Text[KeyID] == "" {
			// Heard before its TXT record (a probe's proposed records):
			// the next question hears the whole service.
			return
		}
		mu.Lock()
		defer mu.Unlock()
		svcs := known[e.Name]
		if svcs == nil {
			svcs = map[string]dnssd.BrowseEntry{}
			known[e.Name] = svcs
		}
		typ := strings.TrimSuffix(e.Type, ".")
		old, had := svcs[typ]
		switch {
		case gone && !had, !gone && had && sameEntry(old, e):
			return // heard again: told already
		case gone:
			delete(svcs, typ)
		default:
			svcs[typ] = e
		}
		if len(svcs) == 0 {
			delete(known, e.Name)
			fn(Event{Gateway: Gateway{Name: e.Name, ID: e.Text[KeyID]}, Gone: true})
			return
		}
		fn(Event{Gateway: gatewayOf(e.Name, svcs)})
	}
	errs := make(chan error, 2)
	for _, typ := range []string{TypeWS, TypeTCP} {
		go func() {
			errs <- browse(ctx, typ+".local.", func(e dnssd.BrowseEntry) { update(e, false) }, func(e dnssd.BrowseEntry) { update(e, true) })
		}()
	}
	// The first failure, when the browse did not just end with ctx.
	err, err2 := <-errs, <-errs
	if err == nil {
		err = err2
	}
	if err == nil || ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return nil
	}
	return fmt.Errorf("browse mDNS: %w", err)
}

// List browses until ctx ends and returns the gateways heard and not
// withdrawn, by name.
func List(ctx context.Context, browse Browser) ([]Gateway, error) {
	var mu sync.Mutex
	found := map[string]Gateway{}
	err := Watch(ctx, browse, func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		if e.Gone {
			delete(found, e.Gateway.Name)
		} else {
			found[e.Gateway.Name] = e.Gateway
		}
	})
	mu.Lock()
	defer mu.Unlock()
	out := make([]Gateway, 0, len(found))
	for _, g := range found {
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b Gateway) int { return cmp.Compare(a.Name, b.Name) })
	return out, err
}

// ErrNotFound is Find's answer when no gateway of that name answered.
var ErrNotFound = errors.New("no gateway of that name answered on the LAN")

// settle is how long Find waits, once it heard one of a gateway's
// services, for the other, so that which URL is dialled (a TLS one first)
// does not depend on which answer came first. The built-in responder
// registers its services one after the other, about a second apart.
const settle = 2 * time.Second

// Find browses until a gateway whose name (case aside) or id is name is
// heard with both its services, or with one and nothing more for settle,
// or ctx ends.
func Find(ctx context.Context, browse Browser, name string) (Gateway, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	var got *Gateway
	err := Watch(ctx, browse, func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		g := e.Gateway
		if e.Gone || !(strings.EqualFold(g.Name, name) || g.ID == name) || len(g.URLs) == 0 {
			return
		}
		if got == nil {
			time.AfterFunc(settle, cancel)
		}
		got = &g
		if len(g.URLs) == 2 {
			cancel()
		}
	})
	mu.Lock()
	defer mu.Unlock()
	if got != nil {
		return *got, nil
	}
	if err != nil {
		return Gateway{}, err
	}
	return Gateway{}, ErrNotFound
}

// sameEntry reports whether b says what a said.
func sameEntry(a, b dnssd.BrowseEntry) bool {
	return a.Port == b.Port && a.Host == b.Host && maps.Equal(a.Text, b.Text) &&
		slices.EqualFunc(a.IPs, b.IPs, func(x, y net.IP) bool { return x.Equal(y) })
}

// gatewayOf merges a gateway's services.
func gatewayOf(name string, svcs map[string]dnssd.BrowseEntry) Gateway {
	g := Gateway{Name: name}
	for _, typ := range []string{TypeWS, TypeTCP} {
		e, ok := svcs[typ]
		if !ok {
			continue
		}
		t := e.Text
		g.ID = cmp.Or(g.ID, t[KeyID])
		g.Host = cmp.Or(g.Host, e.Host)
		g.Level = cmp.Or(g.Level, t[KeyLevel])
		g.Protocol = cmp.Or(g.Protocol, t[KeyProtocol])
		g.Fingerprint = cmp.Or(g.Fingerprint, t[KeyFingerprint])
		g.Console = g.Console || t[KeyConsole] == "1"
		g.MCP = g.MCP || t[KeyMCP] == "1"
		addrs := addresses(e)
		for _, a := range addrs {
			if !slices.Contains(g.Addresses, a) {
				g.Addresses = append(g.Addresses, a)
			}
		}
		if len(addrs) > 0 {
			g.URLs = append(g.URLs, urlOf(typ, t, addrs[0], e.Port))
			if typ == TypeWS && t[KeyConsole] == "1" {
				g.ConsoleURL = consoleURLOf(t, addrs[0], e.Port)
			}
		}
	}
	return g
}

// addresses are e's addresses, IPv4 first; an IPv6 link-local one
// carries its interface as zone.
func addresses(e dnssd.BrowseEntry) []string {
	var v4, v6 []string
	for _, ip := range e.IPs {
		a, ok := netip.AddrFromSlice(ip)
		if !ok {
			continue
		}
		a = a.Unmap()
		if a.Is4() {
			v4 = append(v4, a.String())
			continue
		}
		if a.IsLinkLocalUnicast() && e.IfaceName != "" {
			a = a.WithZone(e.IfaceName)
		}
		v6 = append(v6, a.String())
	}
	return append(v4, v6...)
}

// consoleURLOf is the console's address on a WebSocket listener announced
// at addr: the page is served at / of the same listener.
func consoleURLOf(t map[string]string, addr string, port int) string {
	scheme := "http"
	if t[KeyTLS] == "1" {
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(addr, strconv.Itoa(port)) + "/"
}

// urlOf is the URL of a listener announced as typ at addr.
func urlOf(typ string, t map[string]string, addr string, port int) string {
	tls := t[KeyTLS] == "1"
	hostPort := net.JoinHostPort(addr, strconv.Itoa(port))
	if typ == TypeWS {
		scheme := "ws"
		if tls {
			scheme = "wss"
		}
		return scheme + "://" + hostPort + cmp.Or(t[KeyPath], WSPath)
	}
	if tls {
		return "tls://" + hostPort
	}
	return "tcp://" + hostPort
}
