package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/openhal/gateway/discover"
	"github.com/openhal/gateway/tlscert"
)

// A --hub that is not a URL names a gateway announced on the LAN
// (package announce): its name as `gateway discover` lists it, or its id.
// resolveHub asks the LAN for it and dials the URL it announced.

// nameLookup bounds the wait for a named gateway to answer.
const nameLookup = 5 * time.Second

// addTrustFlag adds --trust-announced to a client command.
func addTrustFlag(fs *flag.FlagSet, trust *bool) {
	fs.BoolVar(trust, "trust-announced", false, "with --hub NAME of a TLS gateway: pin the certificate fingerprint the gateway announces on the LAN, unchecked, instead of giving --fingerprint")
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

// dialOf picks the URL to dial of a discovered gateway (the first it
// announced: the WebSocket) and the pin to use: the announced fingerprint
// only when trusted, since anyone on the LAN can announce any name. A TLS
// gateway without a pin given or trusted is an error that says both ways.
func dialOf(g discover.Gateway, pinGiven, trust bool) (url, pin string, err error) {
	if len(g.URLs) == 0 {
		return "", "", fmt.Errorf("gateway %q announced no URL", g.Name)
	}
	url = g.URLs[0]
	if !strings.HasPrefix(url, "wss://") && !strings.HasPrefix(url, "tls://") {
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
