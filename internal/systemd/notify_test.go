package systemd

import (
	"bytes"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// notifySocket is a real NOTIFY_SOCKET: a unixgram socket in a temporary
// directory, named in the environment for the test.
type notifySocket struct {
	t    *testing.T
	conn *net.UnixConn
}

func newNotifySocket(t *testing.T) *notifySocket {
	t.Helper()
	path := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatalf("listen %s: %v", path, err)
	}
	t.Cleanup(func() { conn.Close() })
	t.Setenv("NOTIFY_SOCKET", path)
	return &notifySocket{t: t, conn: conn}
}

// next returns the next message, failing the test after within.
func (s *notifySocket) next(within time.Duration) string {
	s.t.Helper()
	buf := make([]byte, 4096)
	s.conn.SetReadDeadline(time.Now().Add(within))
	n, err := s.conn.Read(buf)
	if err != nil {
		s.t.Fatalf("read NOTIFY_SOCKET: %v", err)
	}
	return string(buf[:n])
}

func TestNotifierMessages(t *testing.T) {
	sock := newNotifySocket(t)
	n := NewNotifier(nil)
	if !n.Enabled() {
		t.Fatal("Enabled() = false with NOTIFY_SOCKET set")
	}
	for _, tc := range []struct {
		name string
		send func() error
		want string
	}{
		{"ready", n.Ready, "READY=1"},
		{"stopping", n.Stopping, "STOPPING=1"},
		{"watchdog", n.Watchdog, "WATCHDOG=1"},
		{"extend", func() error { return n.ExtendTimeout(30 * time.Second) }, "EXTEND_TIMEOUT_USEC=30000000"},
		{"status one line", func() error { return n.Status("3 devices\n 0 faults") }, "STATUS=3 devices 0 faults"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.send(); err != nil {
				t.Fatal(err)
			}
			if got := sock.next(5 * time.Second); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNotifierStatusSentOnlyOnChange(t *testing.T) {
	sock := newNotifySocket(t)
	n := NewNotifier(nil)
	for _, line := range []string{"a", "a", "b", "b", "a"} {
		if err := n.Status(line); err != nil {
			t.Fatal(err)
		}
	}
	n.Ready() // a marker: whatever came before it was sent
	var got []string
	for m := sock.next(5 * time.Second); m != "READY=1"; m = sock.next(5 * time.Second) {
		got = append(got, m)
	}
	if want := "STATUS=a STATUS=b STATUS=a"; strings.Join(got, " ") != want {
		t.Errorf("sent %q, want %q", got, want)
	}
}

func TestNotifierWithoutSocketIsNoOp(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	n := NewNotifier(nil)
	if n.Enabled() {
		t.Error("Enabled() = true without NOTIFY_SOCKET")
	}
	for _, err := range []error{n.Ready(), n.Status("x"), n.Watchdog(), n.Stopping(), n.ExtendTimeout(time.Second)} {
		if err != nil {
			t.Errorf("without NOTIFY_SOCKET: %v", err)
		}
	}
}

func TestNotifierSocketGoneIsAnError(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", filepath.Join(t.TempDir(), "none"))
	if err := NewNotifier(nil).Ready(); err == nil {
		t.Error("Ready() to a socket that does not exist returned nil")
	}
}

// logBuffer is a slog destination the test can read while others write.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newLog() (*slog.Logger, *logBuffer) {
	b := &logBuffer{}
	return slog.New(slog.NewTextHandler(b, nil)), b
}
