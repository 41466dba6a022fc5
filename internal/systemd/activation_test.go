package systemd

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The child half of TestActivatedSockets: run by the test binary itself
// under a real LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES.
func TestMain(m *testing.M) {
	if os.Getenv("SYSTEMD_TEST_CHILD") == "activation" {
		os.Exit(activationChild())
	}
	os.Exit(m.Run())
}

// activationChild takes "http" and "tcp" from systemd's sockets, a
// fallback listener for "unix", closes the rest, and answers one
// connection on each passed socket with its name.
func activationChild() int {
	log, logs := newLog()
	s, err := ActivatedSockets(log)
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	if os.Getenv("LISTEN_FDS") != "" {
		fmt.Println("error: LISTEN_FDS left in the environment")
		return 1
	}
	ctx := context.Background()
	for _, name := range []string{"http", "tcp"} {
		ln, activated, err := s.Listen(ctx, name, "tcp", "127.0.0.1:1") // never bound: passed
		if err != nil || !activated {
			fmt.Println("error:", name, activated, err)
			return 1
		}
		go func() {
			c, err := ln.Accept()
			if err == nil {
				fmt.Fprintln(c, name)
				c.Close()
			}
		}()
	}
	ln, activated, err := s.Listen(ctx, "other", "tcp", "127.0.0.1:0")
	if err != nil || activated {
		fmt.Println("error: fallback:", activated, err)
		return 1
	}
	ln.Close()
	closed := s.CloseUnused()
	fmt.Printf("closed %s\n", strings.Join(closed, ","))
	fmt.Printf("log %q\n", logs.String())
	fmt.Println("ready")
	bufio.NewReader(os.Stdin).ReadString('\n') // until the parent is done
	return 0
}

func TestActivatedSockets(t *testing.T) {
	var lns []*net.TCPListener
	var files []*os.File
	for range 3 {
		ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		f, err := ln.File()
		if err != nil {
			t.Fatal(err)
		}
		lns, files = append(lns, ln), append(files, f)
	}
	// sh's $$ is the pid exec keeps: LISTEN_PID names the child for real.
	cmd := exec.Command("/bin/sh", "-c", `LISTEN_PID=$$ exec "$0" -test.run=^$`, os.Args[0])
	cmd.Env = append(os.Environ(), "SYSTEMD_TEST_CHILD=activation", "LISTEN_FDS=3", "LISTEN_FDNAMES=http:tcp:extra")
	cmd.ExtraFiles = files // fds 3, 4, 5
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	// From here only the child holds the sockets.
	var addrs []string
	for i, ln := range lns {
		addrs = append(addrs, ln.Addr().String())
		files[i].Close()
		ln.Close()
	}
	out := bufio.NewReader(stdout)
	var lines []string
	for {
		line, err := out.ReadString('\n')
		if err != nil {
			t.Fatalf("child ended: %v; said %q", err, lines)
		}
		line = strings.TrimSpace(line)
		if line == "ready" {
			break
		}
		if strings.HasPrefix(line, "error") {
			t.Fatal(line)
		}
		lines = append(lines, line)
	}
	if lines[0] != "closed extra" {
		t.Errorf("child said %q, want closed extra", lines[0])
	}
	if !strings.Contains(lines[1], "not used") || !strings.Contains(lines[1], "name=extra") {
		t.Errorf("closing the unused socket not logged: %s", lines[1])
	}
	for i, name := range []string{"http", "tcp"} {
		c, err := net.DialTimeout("tcp", addrs[i], 5*time.Second)
		if err != nil {
			t.Fatalf("dial %s: %v", name, err)
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		got, _ := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if strings.TrimSpace(got) != name {
			t.Errorf("socket %s answered %q", name, got)
		}
	}
	if c, err := net.DialTimeout("tcp", addrs[2], 5*time.Second); err == nil {
		c.Close()
		t.Error("the unused socket still accepts connections")
	}
}

func TestNotActivated(t *testing.T) {
	t.Setenv("LISTEN_PID", "")
	s, err := ActivatedSockets(nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Has("http") {
		t.Error("Has(http) without socket activation")
	}
	ln, activated, err := s.Listen(context.Background(), "http", "tcp", "127.0.0.1:0")
	if err != nil || activated {
		t.Fatalf("Listen = %v, %v", activated, err)
	}
	ln.Close()
	if got := s.CloseUnused(); got != nil {
		t.Errorf("CloseUnused() = %q", got)
	}
}
