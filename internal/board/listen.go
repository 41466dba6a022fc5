package board

import (
	"fmt"
	"net"
	"net/netip"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Listener is one network listener: its host:port alone
// (`http: 127.0.0.1:7750`), or a mapping that says more
// (`http: {address: 0.0.0.0:7750, insecure: true}`).
type Listener struct {
	// Addr is host:port; "" disables the listener.
	Addr string
	// Insecure lets a plain listener (http, tcp) serve an address off
	// loopback, where every token it is given crosses the network in
	// clear (openhal-0.1 §2). Without it such a listener is refused.
	Insecure bool
}

// decodeNode takes the address alone, or a mapping of address and
// insecure whose left-out fields keep what l holds.
func (l *Listener) decodeNode(d *decoder, path string, n *yaml.Node) {
	switch {
	case n.Kind == yaml.MappingNode:
		m := struct {
			Address  string `yaml:"address"`
			Insecure bool   `yaml:"insecure"`
		}{l.Addr, l.Insecure}
		d.mapping(path, n, reflect.ValueOf(&m).Elem())
		*l = Listener{Addr: m.Address, Insecure: m.Insecure}
	case n.Kind == yaml.ScalarNode:
		*l = Listener{}
		d.str(path, n, reflect.ValueOf(&l.Addr).Elem())
	default:
		d.fail(path, n.Line, "want host:port, or a mapping {address, insecure}, got %s", describe(n))
	}
}

// namedListener is a listener with its name in hub.listen.
type namedListener struct {
	name string // http, wss, tcp, tls
	Listener
}

func (n namedListener) path() string { return "hub.listen." + n.name }

// plain reports whether the listener carries tokens without TLS.
func (n namedListener) plain() bool { return n.name == "http" || n.name == "tcp" }

func (l ListenConfig) network() []namedListener {
	return []namedListener{{"http", l.HTTP}, {"wss", l.WSS}, {"tcp", l.TCP}, {"tls", l.TLS}}
}

// IsLoopback reports whether a listen or dial host reaches this machine
// only: localhost, or an address of 127.0.0.0/8 or ::1. An empty host
// (every address) and every other name are not: a name may resolve to
// any address.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

// offLoopback reports whether a valid host:port listens beyond loopback.
func offLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && !IsLoopback(host)
}

// listen checks the network listeners' addresses, and that a plain one
// off loopback says insecure (openhal-0.1 §2), then the Unix socket.
func (v *validator) listen(l ListenConfig) {
	ls := l.network()
	for i, a := range ls {
		if a.Addr == "" {
			if a.Insecure && !a.plain() {
				v.add(a.path()+".insecure", "only the plain listeners (http, tcp) take insecure: %s is TLS", a.name)
			}
			continue
		}
		if msg := CheckHostPort(a.Addr); msg != "" {
			v.add(a.path(), "%s", msg)
			continue
		}
		if a.Insecure && !a.plain() {
			v.add(a.path()+".insecure", "only the plain listeners (http, tcp) take insecure: %s is TLS", a.name)
		}
		if a.plain() && !a.Insecure && offLoopback(a.Addr) {
			v.add(a.path(), "%s is off loopback, and a plain listener there would carry every token in clear: "+
				"serve the network with hub.listen.%s, keep %s on 127.0.0.1, or say that clear text is wanted with "+
				"`%s: {address: %q, insecure: true}` (gateway run: --insecure)", a.Addr, secureOf(a.name), a.name, a.name, a.Addr)
		}
		// Port 0 asks the kernel for a free port, a different one each time.
		for _, b := range ls[:i] {
			if a.Addr == b.Addr && !strings.HasSuffix(a.Addr, ":0") {
				v.add(a.path(), "same address as %s (%s)", b.path(), a.Addr)
				break
			}
		}
	}
	switch {
	case l.Unix == "":
	case strings.ContainsRune(l.Unix, 0):
		v.add("hub.listen.unix", "path contains a NUL byte")
	case len(l.Unix) > unixPathMax:
		v.add("hub.listen.unix", "path of %d bytes is longer than a Unix socket allows (%d)", len(l.Unix), unixPathMax)
	}
	if strings.ContainsAny(l.UnixGroup, ": \t\n\x00") {
		v.add("hub.listen.unixGroup", "%q is not a group name", l.UnixGroup)
	}
}

// secureOf names the TLS listener of a plain one's protocol.
func secureOf(plain string) string {
	if plain == "tcp" {
		return "tls"
	}
	return "wss"
}

// listenWarnings are the plain listeners that insecure lets serve beyond
// loopback: valid, but every token they are given crosses the network in
// clear, which `gateway check` and the start-up log say.
func (l ListenConfig) listenWarnings() Errors {
	var out Errors
	for _, a := range l.network() {
		if a.plain() && a.Insecure && a.Addr != "" && CheckHostPort(a.Addr) == "" && offLoopback(a.Addr) {
			out = append(out, FieldError{Path: a.path(), Msg: fmt.Sprintf(
				"%s is off loopback with insecure: true: every token given to this listener crosses the network in clear, "+
					"readable by anyone on the way; hub.listen.%s serves the same over TLS", a.Addr, secureOf(a.name))})
		}
	}
	return out
}
