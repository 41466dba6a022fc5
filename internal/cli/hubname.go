package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/openhal/gateway/openhal/gatewayext"
)

// A --hub that is not a URL names a gateway announced on the LAN (Env's
// LAN): its name as `gateway discover` lists it, or its id. resolveHub
// asks the LAN for it and dials the URL it announced.

// nameLookup bounds the wait for a named gateway to answer.
const nameLookup = 6 * time.Second

// addTrustFlag adds --trust-announced to a client command.
func addTrustFlag(fs *flag.FlagSet, trust *bool) {
	fs.BoolVar(trust, "trust-announced", false, "with --hub NAME of a gateway not known yet: trust the certificate whose fingerprint the gateway announces on the LAN, unchecked, instead of --fingerprint or a terminal's yes (recorded like those)")
}

// secureURL reports whether u is a TLS URL (wss://, tls://).
func secureURL(u string) bool {
	return strings.HasPrefix(u, "wss://") || strings.HasPrefix(u, "tls://")
}

// isHubURL reports whether a --hub value is a URL rather than a name.
func isHubURL(hub string) bool { return hub == "" || strings.Contains(hub, "://") }

// resolveHub replaces a --hub NAME by the URL the gateway of that name
// announces, and notes the fingerprint it announces, which
// --trust-announced takes on first contact. The name is kept in
// f.hubName.
func (f *clientFlags) resolveHub(ctx context.Context) error {
	if isHubURL(f.hub) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, nameLookup)
	defer cancel()
	if f.env.LAN == nil {
		return fmt.Errorf("--hub %s: this command cannot look for gateways on the LAN; give a URL", f.hub)
	}
	g, err := f.env.LAN.Find(ctx, f.hub)
	if errors.Is(err, ErrNotFound) {
		return fmt.Errorf("--hub %s: no gateway of that name answered on the LAN within %s (`gateway discover` lists those that do; a URL such as wss://HOST:7752/hal reaches one that is not announced)", f.hub, nameLookup)
	}
	if err != nil {
		return fmt.Errorf("--hub %s: %w", f.hub, err)
	}
	url, announced, err := dialOf(g, f.insecure)
	if err != nil {
		return fmt.Errorf("--hub %s: %w", f.hub, err)
	}
	f.hubName, f.hub, f.announced = f.hub, url, announced
	return nil
}

// dialOf picks the URL to dial of a discovered gateway, a TLS one (the
// WebSocket first), and returns the fingerprint it announces. A gateway
// that announces only plain transports is refused unless insecure:
// anyone on the LAN can announce any name with tls=0, and the token
// would go to it in clear. The announced fingerprint is never trusted
// here: halclient checks the certificate against the known-gateways
// file, and only on first contact does --trust-announced take it.
func dialOf(g gatewayext.Gateway, insecure bool) (url, announced string, err error) {
	if len(g.URLs) == 0 {
		return "", "", fmt.Errorf("gateway %q announced no URL", g.Name)
	}
	if i := slices.IndexFunc(g.URLs, secureURL); i >= 0 {
		return g.URLs[i], announcedPin(g.Fingerprint), nil
	}
	if !insecure {
		return "", "", fmt.Errorf("gateway %q announces only plain transports (%s): the token would cross the LAN in clear, "+
			"to whatever answers in that name; refused, nothing was sent. Serve the gateway over TLS (hub.listen.wss, docs/install.md), "+
			"or give --insecure to send the token in clear anyway", g.Name, strings.Join(g.URLs, " "))
	}
	return g.URLs[0], "", nil
}

// nameFlag is the --hub a person gives the CLI to reach the gateway found
// by name (none for a URL): the name, quoted for a shell when it needs
// it, and fp, the fingerprint of the certificate this connection
// checked, so that the command pins what this one trusted rather than
// trusting a new announcement.
func (f *clientFlags) nameFlag(fp string) string {
	if f.hubName == "" {
		return ""
	}
	flag := shellWord(f.hubName)
	if fp != "" {
		flag += " --fingerprint " + fp
	}
	return flag
}

// shellWord quotes s for a POSIX shell when it holds more than letters,
// digits and -._/: (a URL or a path needs none)
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-._/:", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// announcedPin is an announced fingerprint as halclient compares one: 64
// lowercase hex digits, colons and case as a person may write them
// dropped; "" for none, or for what is not one (nothing to take on first
// contact).
func announcedPin(s string) string {
	pin := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(s), ":", ""))
	if b, err := hex.DecodeString(pin); err != nil || len(b) != sha256.Size {
		return ""
	}
	return pin
}
