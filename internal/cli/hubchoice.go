package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// givenFlag is a string flag that remembers whether it was given.
type givenFlag struct {
	v     *string
	given *bool
}

func (g givenFlag) String() string {
	if g.v == nil {
		return ""
	}
	return *g.v
}

func (g givenFlag) Set(s string) error {
	*g.v, *g.given = s, true
	return nil
}

// pickHub settles the URL a client command dials: the state directory's
// gateway when no hub was named (chooseHub), then a name looked up on the
// LAN (resolveHub, hubname.go).
func (f *clientFlags) pickHub(ctx context.Context) error {
	if err := f.chooseHub(); err != nil {
		return err
	}
	return f.resolveHub(ctx)
}

// chooseHub settles which gateway the command talks to, once, before it
// dials. --hub (or $GATEWAY_HUB) names it. Otherwise a state directory
// the command acts on (--state-dir given, or the default one holding
// admin.token) names it: the gateway that runs there, by the record beside
// its lock (StateDir.Running), or none, said so — never whatever listens
// on the default port, which may be another gateway. Otherwise, a state
// directory this user may not read, the default hub.
func (f *clientFlags) chooseHub() error {
	if f.hubGiven || f.stateDir == "" || f.env.StateDir == nil {
		return nil
	}
	hubs, fingerprint, err := f.env.StateDir.Running(f.stateDir)
	switch {
	case err == nil:
		f.hub, f.hubGiven, f.hubOfStateDir = preferredHub(hubs), true, true
		if f.fingerprint == "" && (strings.HasPrefix(f.hub, "wss://") || strings.HasPrefix(f.hub, "tls://")) {
			f.fingerprint = fingerprint
		}
	case errors.Is(err, ErrNotRunning) && f.actsOnStateDir():
		return fmt.Errorf("no gateway is running on state directory %s (start it with gateway run, or give --hub)", f.stateDir)
	}
	return nil
}

// actsOnStateDir reports whether the command is about its state directory:
// one given, or the default one when it holds the admin token.
func (f *clientFlags) actsOnStateDir() bool {
	if f.stateDirGiven {
		return true
	}
	_, err := os.Stat(filepath.Join(f.stateDir, "admin.token"))
	return err == nil
}

// preferredHub is the URL a local client uses among a gateway's: plain
// WebSocket, then TCP, the Unix socket, and the TLS ones.
func preferredHub(hubs []string) string {
	for _, scheme := range []string{"ws://", "tcp://", "unix://", "wss://", "tls://"} {
		for _, h := range hubs {
			if strings.HasPrefix(h, scheme) {
				return h
			}
		}
	}
	return defaultHub
}
