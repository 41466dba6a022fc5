package discovery

import "net/netip"

// The DNS-SD service types of the Hub's listeners.
const (
	TypeTCP = "_openhal._tcp"
	TypeWS  = "_openhal-ws._tcp"
)

// TXT record keys. Short, as DNS-SD asks (RFC 6763 §6.4); docs/discovery.md
// lists them for other clients.
const (
	KeyProtocol    = "proto"   // "openhal/0.1"
	KeyLevel       = "level"   // conformance level: read, control, full
	KeyID          = "id"      // the gateway id, stable across restarts
	KeyTLS         = "tls"     // "1" when the listener is TLS, else "0"
	KeyFingerprint = "fp"      // SHA-256 of the certificate, lowercase hex; TLS only
	KeyPath        = "path"    // the WebSocket's path; WebSocket only
	KeyConsole     = "console" // "1" when the operator console is served
	KeyMCP         = "mcp"     // "1" when /mcp is served
)

// Listener is one listener the gateway opened.
type Listener struct {
	// Kind is "http", "wss", "tcp" or "tls", as in hub.listen.
	Kind string
	// Addr is the address it listens at, as the kernel gave it.
	Addr netip.AddrPort
}

func (l Listener) secure() bool { return l.Kind == "wss" || l.Kind == "tls" }
func (l Listener) web() bool    { return l.Kind == "http" || l.Kind == "wss" }

// Info is what the TXT records say of the gateway as a whole.
type Info struct {
	Name        string // the instance name
	ID          string // the gateway id
	Protocol    string // "openhal/0.1"
	Level       string // conformance level
	Fingerprint string // of the TLS listeners' certificate
	Console     bool   // the console is served on the web listeners
	MCP         bool   // /mcp is served on the web listeners
}

// Service is one DNS-SD service instance to publish.
type Service struct {
	Name string // instance name
	Type string // TypeTCP or TypeWS
	Port int
	// Addr is the address the listener is bound to; unspecified (0.0.0.0,
	// ::) means every interface. A publisher announces the service only on
	// the interface that holds it otherwise.
	Addr netip.Addr
	Text map[string]string
}

// WSPath is the WebSocket's path on the web listeners.
const WSPath = "/hal"

// Services returns the services that announce ls: one per type. A
// listener on loopback is not announced (nobody on the LAN reaches it);
// of a plain and a TLS listener of one type, the TLS one is announced,
// since one instance name holds one service of a type. No listener off
// loopback: none.
func Services(info Info, ls []Listener) []Service {
	var out []Service
	for _, typ := range []string{TypeTCP, TypeWS} {
		l, ok := pick(typ, ls)
		if !ok {
			continue
		}
		out = append(out, Service{Name: info.Name, Type: typ, Port: int(l.Addr.Port()), Addr: l.Addr.Addr().Unmap(), Text: text(info, l)})
	}
	return out
}

// pick returns the listener announced for typ.
func pick(typ string, ls []Listener) (Listener, bool) {
	var best Listener
	found := false
	for _, l := range ls {
		if (typ == TypeWS) != l.web() || l.Addr.Addr().Unmap().IsLoopback() || !l.Addr.IsValid() {
			continue
		}
		if !found || (l.secure() && !best.secure()) {
			best, found = l, true
		}
	}
	return best, found
}

// text is the TXT record of l.
func text(info Info, l Listener) map[string]string {
	t := map[string]string{
		KeyProtocol: info.Protocol,
		KeyLevel:    info.Level,
		KeyID:       info.ID,
		KeyTLS:      flag(l.secure()),
	}
	if l.secure() {
		t[KeyFingerprint] = info.Fingerprint
	}
	if l.web() {
		t[KeyPath] = WSPath
		t[KeyConsole] = flag(info.Console)
		t[KeyMCP] = flag(info.MCP)
	}
	return t
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
