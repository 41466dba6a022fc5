package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/openhal/gateway/discover"
	"github.com/openhal/gateway/tlscert"
)

// A --hub that is not a URL names a gateway announced on the LAN
// (package announce): its name as `gateway discover` lists it, or its id.
// resolveHub asks the LAN for it and dials the URL it announced.

// nameLookup bounds the wait for a named gateway to answer.
const nameLookup = 6 * time.Second

// addTrustFlag adds --trust-announced to a client command.
func addTrustFlag(fs *flag.FlagSet, trust *bool) {
	fs.BoolVar(trust, "trust-announced", false, "with --hub NAME of a TLS gateway: pin the certificate fingerprint the gateway announces on the LAN, unchecked, instead of giving --fingerprint")
}

// secureURL reports whether u is a TLS URL (wss://, tls://).
func secureURL(u string) bool {
	return strings.HasPrefix(u, "wss://") || strings.HasPrefix(u, "tls://")
}

// isHubURL reports whether a --hub value is a URL rather than a name.
func isHubURL(hub string) bool { return hub == "" || strings.Contains(hub, "://") }

// resolveHub replaces a --hub NAME by the URL the gateway of that name
// announces, and, with --trust-announced, takes its announced
// fingerprint as the pin. The name is kept in f.hubName.
func (f *clientFlags) resolveHub(ctx context.Context) error {
	if isHubURL(f.hub) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, nameLookup)
	defer cancel()
	g, err := discover.Find(ctx, discover.LookupType, f.hub)
	if errors.Is(err, discover.ErrNotFound) {
		return fmt.Errorf("--hub %s: no gateway of that name answered on the LAN within %s (`gateway discover` lists those that do; a URL such as ws://HOST:7750/hal reaches one that is not announced)", f.hub, nameLookup)
	}
	if err != nil {
		return fmt.Errorf("--hub %s: %w", f.hub, err)
	}
	url, pin, err := dialOf(g, f.fingerprint != "" || os.Getenv("GATEWAY_FINGERPRINT") != "", f.trustAnnounced)
	if err != nil {
		return fmt.Errorf("--hub %s: %w", f.hub, err)
	}
	f.hubName, f.hub = f.hub, url
	if pin != "" {
		f.fingerprint = pin
	}
	return nil
}

// dialOf picks the URL to dial of a discovered gateway (a TLS one first,
// so that a token never goes in clear when the gateway offers TLS; then
// the WebSocket, listed first) and the pin to use: the announced
// fingerprint only when trusted, since anyone on the LAN can announce any
// name. A TLS gateway without a pin given or trusted is an error that
// says both ways.
func dialOf(g discover.Gateway, pinGiven, trust bool) (url, pin string, err error) {
	if len(g.URLs) == 0 {
		return "", "", fmt.Errorf("gateway %q announced no URL", g.Name)
	}
	url = g.URLs[0]
	if i := slices.IndexFunc(g.URLs, secureURL); i >= 0 {
		url = g.URLs[i]
	}
	if !secureURL(url) {
		return url, "", nil
	}
	switch {
	case pinGiven:
		return url, "", nil
	case g.Fingerprint == "":
		return "", "", fmt.Errorf("gateway %q at %s announced no certificate fingerprint: give --fingerprint", g.Name, url)
	}
	fp, err := tlscert.ParsePin(g.Fingerprint)
	if err != nil {
		return "", "", fmt.Errorf("gateway %q at %s announced a bad fingerprint %q: %w", g.Name, url, g.Fingerprint, err)
	}
	if !trust {
		return "", "", fmt.Errorf("gateway %q at %s uses TLS; it announces the certificate fingerprint %s: compare it with the one the gateway logs at start, then give --fingerprint %s, or --trust-announced to take the announcement's word", g.Name, url, fp, fp)
	}
	return url, fp, nil
}

// nameFlag is the --hub a person gives the CLI to reach the gateway found
// by name (none for a URL): the name, quoted for a shell when it needs
// it, and the fingerprint pinned, so that the command pins what this one
// did rather than trusting a new announcement.
func (f *clientFlags) nameFlag() string {
	if f.hubName == "" {
		return ""
	}
	flag := shellWord(f.hubName)
	if f.fingerprint != "" {
		flag += " --fingerprint " + f.fingerprint
	}
	return flag
}

// shellWord quotes s for a POSIX shell when it holds more than letters,
// digits and -._
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-._", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
