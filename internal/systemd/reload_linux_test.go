package systemd

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestNotifierReloading: RELOADING=1 carries MONOTONIC_USEC, read from
// CLOCK_MONOTONIC between two readings of the test's own.
func TestNotifierReloading(t *testing.T) {
	sock := newNotifySocket(t)
	n := NewNotifier(nil)
	before := monotonic(t)
	if err := n.Reloading(); err != nil {
		t.Fatal(err)
	}
	after := monotonic(t)
	msg := sock.next(5 * time.Second)
	m := regexp.MustCompile(`^RELOADING=1\nMONOTONIC_USEC=(\d+)$`).FindStringSubmatch(msg)
	if m == nil {
		t.Fatalf("sent %q", msg)
	}
	us, _ := strconv.ParseInt(m[1], 10, 64)
	if us < before || us > after {
		t.Errorf("MONOTONIC_USEC=%d, not within [%d, %d]", us, before, after)
	}
}

func monotonic(t *testing.T) int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		t.Fatal(err)
	}
	return ts.Nano() / 1000
}
