// Package mosquittotest starts Debian's mosquitto (/usr/sbin/mosquitto,
// MQTT 5) for a test: on free loopback ports, with a configuration it
// writes, optionally a password file (made with mosquitto_passwd) and a
// TLS listener with certificates it makes (a CA, the broker's for
// 127.0.0.1 and localhost, a client's). It waits for the broker's
// "running" line, and stops it when the test ends. Never the system's
// broker on 1883.
//
// Where mosquitto is not installed the test is skipped, except in CI
// (CI set), where it fails: CI installs it (.ci/run).
package mosquittotest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Binary is Debian's mosquitto.
const Binary = "/usr/sbin/mosquitto"

// startWait bounds the wait for the "running" line.
const startWait = 10 * time.Second

// Options choose the broker's listeners and authentication.
type Options struct {
	// Users, user name → password, makes a password file and refuses
	// anonymous clients; none allows anonymous clients.
	Users map[string]string
	// TLS adds a TLS listener (TLSURL) with a certificate made for
	// 127.0.0.1 and localhost, signed by a CA the test trusts (CAFile).
	TLS bool
	// ClientCert makes the TLS listener require a client certificate
	// signed by the same CA (ClientCert, ClientKey are one).
	ClientCert bool
}

// Broker is one mosquitto run by a test.
type Broker struct {
	URL    string // mqtt://127.0.0.1:port
	TLSURL string // mqtts://127.0.0.1:port, with Options.TLS
	// CAFile signs the broker's and the client's certificates;
	// ClientCertFile and ClientKeyFile are a client certificate it
	// accepts (Options.TLS).
	CAFile, ClientCertFile, ClientKeyFile string

	t    testing.TB
	dir  string
	conf string

	mu     sync.Mutex
	cmd    *exec.Cmd
	log    strings.Builder
	logged chan struct{} // closed and replaced at each line logged
	done   chan struct{} // closed when the running process has exited
}

// Need returns the path of one of mosquitto's programs (the broker's
// path, or a client's name such as mosquitto_sub): without it the test is
// skipped, except in CI (CI set), where it fails, since .ci/run installs
// them.
func Need(t testing.TB, program string) string {
	t.Helper()
	p, err := exec.LookPath(program)
	if err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is required in CI: %v (apt-get install mosquitto mosquitto-clients)", program, err)
	}
	t.Skipf("no %s (%v): apt-get install mosquitto mosquitto-clients", program, err)
	return ""
}

// Start starts a broker for the test and stops it when the test ends.
func Start(t testing.TB, o Options) *Broker {
	t.Helper()
	Need(t, Binary)
	b := &Broker{t: t, dir: t.TempDir(), logged: make(chan struct{})}
	b.URL = "mqtt://127.0.0.1:" + freePort(t)
	conf := []string{
		"per_listener_settings false",
		"persistence false",
		"log_dest stderr",
		"log_type error", "log_type warning", "log_type notice", "log_type information",
		"connection_messages true",
		"user root", // the test's files are the test's own: keep its user, do not drop to mosquitto
		"listener " + strings.TrimPrefix(b.URL, "mqtt://127.0.0.1:") + " 127.0.0.1",
	}
	conf = append(conf, b.auth(o)...)
	if o.TLS {
		conf = append(conf, b.tlsListener(o.ClientCert)...)
	}
	b.conf = filepath.Join(b.dir, "mosquitto.conf")
	if err := os.WriteFile(b.conf, []byte(strings.Join(conf, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b.start()
	t.Cleanup(b.Stop)
	return b
}

func (b *Broker) auth(o Options) []string {
	if len(o.Users) == 0 {
		return []string{"allow_anonymous true"}
	}
	file := filepath.Join(b.dir, "passwd")
	create := "-c"
	for user, pass := range o.Users {
		args := []string{"-b", file, user, pass}
		if create != "" {
			args = append([]string{create}, args...)
			create = ""
		}
		if out, err := exec.Command("mosquitto_passwd", args...).CombinedOutput(); err != nil {
			b.t.Fatalf("mosquitto_passwd: %v: %s", err, out)
		}
	}
	return []string{"allow_anonymous false", "password_file " + file}
}

func (b *Broker) tlsListener(clientCert bool) []string {
	files := makeCerts(b.t, b.dir)
	b.CAFile, b.ClientCertFile, b.ClientKeyFile = files.ca, files.clientCert, files.clientKey
	port := freePort(b.t)
	b.TLSURL = "mqtts://127.0.0.1:" + port
	conf := []string{
		"listener " + port + " 127.0.0.1",
		"cafile " + files.ca,
		"certfile " + files.serverCert,
		"keyfile " + files.serverKey,
	}
	if clientCert {
		conf = append(conf, "require_certificate true")
	}
	return conf
}

// start runs mosquitto and waits for its "running" line.
func (b *Broker) start() {
	b.t.Helper()
	cmd := exec.Command(Binary, "-c", b.conf)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.t.Fatal(err)
	}
	cmd.Stdout = cmd.Stderr
	if err := cmd.Start(); err != nil {
		b.t.Fatalf("start mosquitto: %v", err)
	}
	running := make(chan struct{})
	done := make(chan struct{})
	b.mu.Lock()
	b.cmd, b.done = cmd, done
	b.mu.Unlock()
	go func() {
		sc := bufio.NewScanner(stderr)
		seen := false
		for sc.Scan() {
			b.mu.Lock()
			b.log.WriteString(sc.Text() + "\n")
			close(b.logged)
			b.logged = make(chan struct{})
			b.mu.Unlock()
			if !seen && strings.Contains(sc.Text(), " running") {
				seen = true
				close(running)
			}
		}
		_ = cmd.Wait()
		close(done)
	}()
	select {
	case <-running:
	case <-done:
		b.t.Fatalf("mosquitto exited at start:\n%s", b.Log())
	case <-time.After(startWait):
		b.t.Fatalf("mosquitto not running within %v:\n%s", startWait, b.Log())
	}
}

// Log is what mosquitto has logged so far, every run of it.
func (b *Broker) Log() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.log.String()
}

// WaitLog waits until the log holds s (a connection, a refusal), and
// fails the test after 10 s.
func (b *Broker) WaitLog(s string) {
	b.t.Helper()
	deadline := time.After(startWait)
	for {
		b.mu.Lock()
		found, logged := strings.Contains(b.log.String(), s), b.logged
		b.mu.Unlock()
		if found {
			return
		}
		select {
		case <-logged:
		case <-deadline:
			b.t.Fatalf("mosquitto never logged %q:\n%s", s, b.Log())
		}
	}
}

// Kill kills the broker at once (SIGKILL), as a crash would, and waits
// for it to be gone.
func (b *Broker) Kill() { b.signal(syscall.SIGKILL) }

// Stop stops the broker (SIGTERM) and waits for it; a second Stop does
// nothing.
func (b *Broker) Stop() { b.signal(syscall.SIGTERM) }

func (b *Broker) signal(sig syscall.Signal) {
	b.mu.Lock()
	cmd, done := b.cmd, b.done
	b.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(startWait):
		_ = cmd.Process.Kill()
		<-done
	}
}

// Restart starts the broker again on the same ports with the same
// configuration, once it has been killed or stopped.
func (b *Broker) Restart() {
	b.t.Helper()
	b.start()
}

// freePort returns a loopback port free a moment ago.
func freePort(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
}
