// Package lantest makes a small LAN for a test: two network namespaces
// joined by a veth pair, with IPv4 addresses and a multicast route, so
// that multicast DNS goes from one to the other and nowhere else. With
// Avahi, Debian's avahi-daemon runs in one of them on a system D-Bus of
// its own that the test starts, never the host's. Everything made is
// removed when the test ends, failed or not.
//
// It needs root and iproute2 (avahi-daemon and dbus-daemon for Avahi):
// without them a test is skipped, except in CI (CI set), where it fails,
// since .ci/run installs them.
//
// This package is test support for e2e: it carries no promise of
// stability.
package lantest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Side is one end of the LAN: a network namespace with one interface.
type Side struct {
	NS    string // the namespace's name
	Iface string // its end of the veth pair
	Addr  string // its IPv4 address
}

// Command runs name in s's namespace.
func (s Side) Command(name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", s.NS, name}, args...)...)
}

// LAN is two sides joined by a veth pair.
type LAN struct {
	A, B Side
}

// Need skips t, or fails it in CI, unless it runs as root and the
// programs are installed (with apt-get install pkgs).
func Need(t testing.TB, pkgs string, programs ...string) {
	t.Helper()
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root")
	}
	for _, p := range programs {
		if _, err := exec.LookPath(p); err != nil {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return
	}
	msg := fmt.Sprintf("needs %s (apt-get install %s; run as root)", strings.Join(missing, ", "), pkgs)
	if os.Getenv("CI") != "" {
		t.Fatalf("required in CI: %s", msg)
	}
	t.Skip(msg)
}

// New makes the LAN: namespaces named after a random tag (other tests and
// other people's namespaces keep theirs), 10.77.0.1 on A, 10.77.0.2 on B,
// loopback up, IPv6 off (its addresses would be tentative for a while),
// and 224.0.0.0/4 routed to the veth.
func New(t testing.TB) *LAN {
	t.Helper()
	Need(t, "iproute2", "ip")
	tag := randomTag(t)
	l := &LAN{
		A: Side{NS: "gwlan-" + tag + "-a", Iface: "gw" + tag + "a", Addr: "10.77.0.1"},
		B: Side{NS: "gwlan-" + tag + "-b", Iface: "gw" + tag + "b", Addr: "10.77.0.2"},
	}
	for _, s := range []Side{l.A, l.B} {
		run(t, "ip", "netns", "add", s.NS)
		t.Cleanup(func() { runQuiet("ip", "netns", "del", s.NS) })
	}
	run(t, "ip", "link", "add", l.A.Iface, "netns", l.A.NS, "type", "veth", "peer", "name", l.B.Iface, "netns", l.B.NS)
	for _, s := range []Side{l.A, l.B} {
		run(t, "ip", "netns", "exec", s.NS, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1")
		run(t, "ip", "-n", s.NS, "link", "set", "lo", "up")
		run(t, "ip", "-n", s.NS, "addr", "add", s.Addr+"/24", "dev", s.Iface)
		run(t, "ip", "-n", s.NS, "link", "set", s.Iface, "up")
		run(t, "ip", "-n", s.NS, "route", "add", "224.0.0.0/4", "dev", s.Iface)
	}
	return l
}

// randomTag is 6 hex digits: interface names have at most 15 bytes.
func randomTag(t testing.TB) string {
	var b [3]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

func run(t testing.TB, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// runQuiet is for cleanups: what they remove may be gone already.
func runQuiet(name string, args ...string) { _ = exec.Command(name, args...).Run() }
