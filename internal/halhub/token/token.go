// Package token is the Hub's token store (openhal-0.1 §4): random bearer
// tokens, each mapped to a principal {kind, name, scope} and optionally
// limited to some devices.
//
// A token is shown once, when it is made, and only its hash is kept, in
// tokens.json in the state directory. The file is rewritten atomically under
// an exclusive lock, so that `gateway token add` run beside a running
// gateway never loses an entry; the gateway watches the file and applies a
// change within a second.
package token

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

// Prefix starts every token, so that a token pasted into the wrong place
// (a log, a chat) is recognisable as a gateway secret.
const Prefix = "gw_"

// tokenBytes is the token's entropy: 256 bits, well above the spec's 128.
const tokenBytes = 32

// Entry is what a token stands for. It never holds the token nor its hash.
type Entry struct {
	Name  string        `json:"name"`
	Kind  string        `json:"kind"`
	Scope openhal.Scope `json:"scope"`
	// Devices limits the token to these device ids and "prefix.*"
	// patterns; empty means every device.
	Devices []string  `json:"devices,omitempty"`
	Created time.Time `json:"created"`
}

// Principal is who the entry speaks for on the wire.
func (e Entry) Principal() openhal.Principal {
	return openhal.Principal{Kind: e.Kind, Name: e.Name, Scope: e.Scope}
}

// Visible reports whether the token may see deviceID: any device when
// Devices is empty, otherwise one that an id equals or that a "prefix.*"
// pattern covers. "prefix.*" covers "prefix.x" but not "prefix" itself,
// as a shell glob would.
func (e Entry) Visible(deviceID string) bool {
	if len(e.Devices) == 0 {
		return true
	}
	for _, p := range e.Devices {
		if prefix, ok := strings.CutSuffix(p, ".*"); ok {
			if strings.HasPrefix(deviceID, prefix+".") {
				return true
			}
		} else if p == deviceID {
			return true
		}
	}
	return false
}

var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,63}$`)

// Check checks a token's name, kind, scope and device patterns as Add
// would, before any file is touched: `gateway token add` calls a wrong
// one a usage error.
func Check(name, kind string, scope openhal.Scope, devices []string) error {
	return Entry{Name: name, Kind: kind, Scope: scope, Devices: devices}.validate()
}

// validate checks everything but uniqueness, which needs the whole file.
func (e Entry) validate() error {
	if !namePattern.MatchString(e.Name) {
		return fmt.Errorf("name %q must match %s", e.Name, namePattern)
	}
	if _, err := openhal.ParseKind(e.Kind); err != nil {
		return err
	}
	if _, err := openhal.ParseScope(string(e.Scope)); err != nil {
		return err
	}
	for _, p := range e.Devices {
		if err := checkPattern(p); err != nil {
			return err
		}
	}
	return nil
}

// checkPattern accepts a device id or "prefix.*" where prefix is an id.
func checkPattern(p string) error {
	id := strings.TrimSuffix(p, ".*")
	if !device.ValidID(id) {
		return fmt.Errorf("device pattern %q must be a device id or <id>.*", p)
	}
	return nil
}

func (e Entry) clone() Entry {
	e.Devices = slices.Clone(e.Devices)
	return e
}

// newToken makes a fresh secret.
func newToken() (string, error) {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make token: %w", err)
	}
	return Prefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// hash is what the file keeps instead of the token. A plain SHA-256 is
// enough here, unlike for passwords: a token carries 256 random bits, so
// a stolen file cannot be brute-forced back to a token and a slow,
// salted hash (bcrypt, argon2) would add nothing but a cost on every
// connection.
func hash(token string) [sha256.Size]byte {
	return sha256.Sum256([]byte(token))
}

func hashHex(token string) string {
	h := hash(token)
	return hex.EncodeToString(h[:])
}
