package lantest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Avahi is avahi-daemon running in one side's namespace, on a system
// D-Bus of its own.
type Avahi struct {
	// BusAddress is the bus's address: DBUS_SYSTEM_BUS_ADDRESS for a
	// process that should find this avahi.
	BusAddress string

	t      testing.TB
	side   Side
	config string
	stop   func() // stops the running avahi-daemon
}

// NoBus is a system bus address where no bus is, for a process that must
// not find the host's avahi.
func NoBus(t testing.TB) string {
	return "unix:path=" + filepath.Join(t.TempDir(), "no_bus_socket")
}

// busConfig lets anyone on the private bus own and call anything: the
// bus exists for one test, in a directory only root reaches.
const busConfig = `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=%s</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
`

// avahiConfig keeps avahi to the LAN's interface, IPv4, and the services
// it is given (no workstation or hardware records of its own).
const avahiConfig = `[server]
use-ipv4=yes
use-ipv6=no
allow-interfaces=%s
enable-dbus=yes
[wide-area]
enable-wide-area=no
[publish]
publish-hinfo=no
publish-workstation=no
`

// StartAvahi starts dbus-daemon and avahi-daemon in s's namespace and
// waits until avahi has started up. Both are killed when the test ends.
func StartAvahi(t testing.TB, s Side, within time.Duration) *Avahi {
	t.Helper()
	Need(t, "avahi-daemon dbus", "avahi-daemon", "dbus-daemon")
	dir := t.TempDir()
	sock := filepath.Join(dir, "system_bus_socket")
	write(t, filepath.Join(dir, "bus.conf"), fmt.Sprintf(busConfig, sock))
	write(t, filepath.Join(dir, "avahi-daemon.conf"), fmt.Sprintf(avahiConfig, s.Iface))

	bus := s.Command("dbus-daemon", "--config-file="+filepath.Join(dir, "bus.conf"), "--nofork", "--print-address")
	addr, _ := startUntil(t, bus, "dbus-daemon", "unix:path=", within)
	a := &Avahi{BusAddress: strings.TrimSpace(addr), t: t, side: s, config: filepath.Join(dir, "avahi-daemon.conf")}
	a.start(within)
	return a
}

// start starts avahi-daemon and waits until it has started up. /run is a
// tmpfs of its own mount namespace (ip netns exec makes one): its pid
// file and socket never meet the host's avahi.
func (a *Avahi) start(within time.Duration) {
	a.t.Helper()
	daemon := a.side.Command("sh", "-c", `mount -t tmpfs tmpfs /run && exec avahi-daemon --no-drop-root --no-chroot --no-rlimits -f "$1"`,
		"sh", a.config)
	daemon.Env = append(os.Environ(), "DBUS_SYSTEM_BUS_ADDRESS="+a.BusAddress)
	_, a.stop = startUntil(a.t, daemon, "avahi-daemon", "Server startup complete", within)
}

// Restart stops avahi-daemon (SIGTERM: it withdraws what it published)
// and starts it again on the same bus, as an upgrade of the package does.
func (a *Avahi) Restart(within time.Duration) {
	a.t.Helper()
	a.stop()
	a.start(within)
}

// startUntil starts cmd, waits for a line of its output holding want and
// returns it with a function that stops cmd (SIGTERM) and waits for its
// end. The test's end kills cmd; the output seen is logged when the test
// fails.
func startUntil(t testing.TB, cmd *exec.Cmd, name, want string, within time.Duration) (string, func()) {
	t.Helper()
	r, w := io.Pipe()
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		w.Close()
		close(exited)
	}()
	var mu sync.Mutex
	var seen strings.Builder
	output := func() string { mu.Lock(); defer mu.Unlock(); return seen.String() }
	found := make(chan string, 1)
	read := make(chan struct{})
	go func() { // to the end, so that cmd never blocks on a full pipe
		defer close(read)
		sc := bufio.NewScanner(r)
		sent := false
		for sc.Scan() {
			mu.Lock()
			seen.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if !sent && strings.Contains(sc.Text(), want) {
				found <- sc.Text()
				sent = true
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		<-read
		if t.Failed() {
			t.Logf("%s output:\n%s", name, output())
		}
	})
	stop := func() {
		cmd.Process.Signal(syscall.SIGTERM)
		<-exited
	}
	select {
	case l := <-found:
		return l, stop
	case <-read:
		select {
		case l := <-found:
			return l, stop
		default:
		}
		t.Fatalf("%s ended before %q:\n%s", name, want, output())
	case <-time.After(within):
		t.Fatalf("%s: no %q within %s:\n%s", name, want, within, output())
	}
	return "", stop
}

func write(t testing.TB, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
