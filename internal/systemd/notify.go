// Package systemd is the gateway's side of systemd: readiness and status
// notifications (sd_notify), a watchdog that pets systemd only while the
// gateway's core parts show progress, and socket activation. Every part is
// a no-op when the gateway does not run under systemd (the variables
// systemd sets are absent), so that `gateway run` behaves the same from a
// shell.
package systemd

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
)

// Notifier sends sd_notify messages to the socket named by NOTIFY_SOCKET.
// Without NOTIFY_SOCKET every method does nothing and returns nil. A
// Notifier is safe for concurrent use. Its methods take no context: a
// message is one datagram to a local socket, which only waits when
// systemd itself has stopped reading (and then nothing else matters).
// A socket that is set but gone (systemd restarted under us) is an error
// the caller logs; it never stops the gateway.
type Notifier struct {
	log *slog.Logger

	mu         sync.Mutex
	lastStatus string
}

// NewNotifier returns a Notifier. NOTIFY_SOCKET is read at each message
// and left in the environment: adapters do not inherit it, because the
// supervisor gives them an environment of their own.
func NewNotifier(log *slog.Logger) *Notifier {
	if log == nil {
		log = slog.Default()
	}
	return &Notifier{log: log}
}

// Enabled reports whether messages go anywhere.
func (n *Notifier) Enabled() bool {
	return os.Getenv("NOTIFY_SOCKET") != ""
}

// send sends state; a missing NOTIFY_SOCKET is not an error.
func (n *Notifier) send(state string) error {
	if _, err := daemon.SdNotify(false, state); err != nil {
		return fmt.Errorf("sd_notify %q: %w", firstLine(state), err)
	}
	return nil
}

// Ready tells systemd that start-up is complete (READY=1): a Type=notify
// unit becomes active only now.
func (n *Notifier) Ready() error { return n.send(daemon.SdNotifyReady) }

// Stopping tells systemd that the gateway is shutting down (STOPPING=1).
func (n *Notifier) Stopping() error { return n.send(daemon.SdNotifyStopping) }

// Watchdog pets the watchdog once (WATCHDOG=1). The Watchdog runner
// calls it only while every probe answers.
func (n *Notifier) Watchdog() error { return n.send(daemon.SdNotifyWatchdog) }

// ExtendTimeout asks systemd for d more time from now for the step in
// progress (EXTEND_TIMEOUT_USEC): start-up, or shutdown. It only ever
// extends; a d below one microsecond sends nothing.
func (n *Notifier) ExtendTimeout(d time.Duration) error {
	us := d.Microseconds()
	if us < 1 {
		return nil
	}
	return n.send(fmt.Sprintf("EXTEND_TIMEOUT_USEC=%d", us))
}

// Status sets the one-line status `systemctl status` shows (STATUS=).
// Line breaks become spaces; a line equal to the last one sent is not
// sent again, so that callers may call it on every change they see.
func (n *Notifier) Status(line string) error {
	line = strings.Join(strings.Fields(line), " ")
	n.mu.Lock()
	defer n.mu.Unlock()
	if line == n.lastStatus {
		return nil
	}
	if err := n.send("STATUS=" + line); err != nil {
		return err
	}
	n.lastStatus = line
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
