package gateway_test

import (
	"net"
	"os"
	"os/exec"
	"regexp"
	"syscall"
	"testing"
)

// TestBinaryNoListenerButActivated: listeners all disabled, but systemd
// passes a socket by name: the gateway serves it (the unit is the
// operator's choice too), so "no listener" does not apply.
func TestBinaryNoListenerButActivated(t *testing.T) {
	t.Parallel()
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	f, err := ln.File()
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // f keeps the socket
	// sh's $$ is the pid exec keeps: LISTEN_PID names the gateway.
	args := []string{"-c", `LISTEN_PID=$$ exec "$0" "$@"`, gatewayBinary(t), "run", "--state-dir", t.TempDir(), "--http", "", "--tcp", ""}
	c := newChild("gateway (socket-activated, no listener of its own)", exec.Command("/bin/sh", args...))
	c.cmd.Env = append(childEnv(), "LISTEN_FDS=1", "LISTEN_FDNAMES=http")
	c.cmd.ExtraFiles = []*os.File{f}
	c.start(t)
	f.Close()
	c.err.waitFor(t, 0, `msg=listening transport=websocket url=ws://`+regexp.QuoteMeta(addr)+`/hal addr=\S+ socket=systemd$`, waitLong)
	c.err.waitFor(t, 0, `msg=ready `, waitLong)
	if code, _ := c.signal(t, syscall.SIGTERM, waitLong); code != 0 {
		t.Errorf("exit code %d", code)
	}
}
