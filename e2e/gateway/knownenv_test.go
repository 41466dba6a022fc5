package gateway_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/openhal/gateway/halclient"
)

// isolateKnownGateways points the tests' clients, in this process and in
// the binaries it starts, at a known-gateways file of their own rather
// than the user's, and returns what removes it. A test that needs a file
// of its own sets $GATEWAY_KNOWN_GATEWAYS for its child.
func isolateKnownGateways() (remove func()) {
	dir, err := os.MkdirTemp("", "gateway-known-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "known gateways:", err)
		os.Exit(2)
	}
	sharedKnown = filepath.Join(dir, "known_gateways")
	os.Setenv(halclient.KnownGatewaysEnv, sharedKnown)
	return func() { os.RemoveAll(dir) }
}

// sharedKnown is the known-gateways file the tests share.
var sharedKnown string

// ownKnownGateways gives the test a known-gateways file of its own, for
// its clients and the binaries it starts, and returns its path. A test
// whose gateways take names or addresses that other tests' gateways
// take too (10.77.0.1:7752, "bench") needs one: the shared file would
// rightly refuse the second gateway as a changed one.
func ownKnownGateways(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(halclient.KnownGatewaysEnv); p != sharedKnown {
		return p // given already
	}
	p := filepath.Join(t.TempDir(), "known_gateways")
	t.Setenv(halclient.KnownGatewaysEnv, p)
	return p
}
