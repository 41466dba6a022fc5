package serialline

import (
	"bufio"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock/clocktest"
	"github.com/openhal/gateway/internal/ptytest"
)

// pty is a pseudo-terminal pair: the test plays the instrument on the
// master side, the code under test opens the slave like a serial port.
type pty struct {
	master *os.File
	slave  string // /dev/pts/N
	lines  *bufio.Reader
}

// openPTY opens a pseudo-terminal pair (package ptytest).
func openPTY(t *testing.T) *pty {
	t.Helper()
	m, slave := ptytest.OpenT(t)
	return &pty{master: m, slave: slave, lines: bufio.NewReader(m)}
}

// termios returns the terminal settings of the pair, which the master
// shares with its slave.
func (p *pty) termios(t *testing.T) *unix.Termios {
	t.Helper()
	rc, err := p.master.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var tio *unix.Termios
	var ierr error
	if err := rc.Control(func(fd uintptr) { tio, ierr = unix.IoctlGetTermios(int(fd), unix.TCGETS2) }); err != nil {
		t.Fatal(err)
	}
	if ierr != nil {
		t.Fatalf("TCGETS2: %v", ierr)
	}
	return tio
}

func (p *pty) send(t *testing.T, s string) {
	t.Helper()
	if _, err := p.master.WriteString(s); err != nil {
		t.Fatalf("instrument write: %v", err)
	}
}

// plug points link at p's slave the way udev points a
// /dev/serial/by-id link at the adapter's tty: atomically.
func plug(t *testing.T, link string, p *pty) {
	t.Helper()
	tmp := link + ".new"
	if err := os.Symlink(p.slave, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, link); err != nil {
		t.Fatal(err)
	}
}

// unplug does what pulling a USB adapter does: its tty hangs up and its
// by-id link goes.
func unplug(t *testing.T, link string, p *pty) {
	t.Helper()
	if err := p.master.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
}

// TestOpenSetsMode opens pseudo-terminals with several modes and reads the
// settings back. The pty driver forces 8 data bits and no parity whatever
// it is asked for, so those two are checked in TestMode instead.
func TestOpenSetsMode(t *testing.T) {
	tests := []struct {
		name           string
		cfg            PortConfig
		stop2          bool
		speedBits      uint32
		ispeed, ospeed uint32
	}{
		{name: "9600 1 stop bit", cfg: PortConfig{Baud: 9600, StopBits: "1"}, speedBits: unix.B9600},
		{name: "19200 2 stop bits", cfg: PortConfig{Baud: 19200, StopBits: "2"}, stop2: true, speedBits: unix.B19200},
		{name: "300", cfg: PortConfig{Baud: 300, StopBits: "1"}, speedBits: unix.B300},
		{name: "115200", cfg: PortConfig{Baud: 115200, StopBits: "2"}, stop2: true, speedBits: unix.B115200},
		{name: "non-standard 250000", cfg: PortConfig{Baud: 250000, StopBits: "1"},
			speedBits: unix.BOTHER, ispeed: 250000, ospeed: 250000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := openPTY(t)
			cfg := tt.cfg
			cfg.Path = p.slave
			port, err := Open(context.Background(), cfg.WithDefaults())
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer port.Close()
			tio := p.termios(t)
			if got := tio.Cflag&unix.CSTOPB != 0; got != tt.stop2 {
				t.Errorf("CSTOPB = %v, want %v", got, tt.stop2)
			}
			if got := tio.Cflag & unix.CBAUD; got != tt.speedBits {
				t.Errorf("CBAUD = %#o, want %#o", got, tt.speedBits)
			}
			if tt.ospeed != 0 && (tio.Ispeed != tt.ispeed || tio.Ospeed != tt.ospeed) {
				t.Errorf("speed = %d/%d, want %d/%d", tio.Ispeed, tio.Ospeed, tt.ispeed, tt.ospeed)
			}
			if tio.Cflag&unix.CRTSCTS != 0 {
				t.Error("hardware flow control on")
			}
			if tio.Lflag&(unix.ICANON|unix.ECHO|unix.ISIG) != 0 || tio.Oflag&unix.OPOST != 0 || tio.Iflag&(unix.ICRNL|unix.IXON) != 0 {
				t.Errorf("not raw: iflag %#o lflag %#o oflag %#o", tio.Iflag, tio.Lflag, tio.Oflag)
			}
		})
	}
}

// portRig is a port device on a by-id style link in a temporary
// directory, running on a fake clock.
type portRig struct {
	dev  *LineDevice
	rec  *recorder
	clk  *clocktest.Fake
	link string
	done chan struct{}
}

func newPortRig(t *testing.T) *portRig {
	t.Helper()
	link := filepath.Join(t.TempDir(), "usb-OpenHAL_Meter_0001-if00-port0")
	clk := clocktest.NewFake(epoch)
	cfg := PortConfig{Path: link, Baud: 115200}.WithDefaults()
	r := &portRig{dev: NewPortDevice(meterDesc, cfg, clk, nil), rec: newRecorder(), clk: clk, link: link, done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		r.dev.Run(ctx, r.rec)
		close(r.done)
	}()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
	return r
}

// talk checks that lines flow both ways between the device and p.
func (r *portRig) talk(t *testing.T, p *pty, line string) {
	t.Helper()
	p.send(t, line+"\r\n")
	if got := r.rec.next(t).Value; got != line {
		t.Fatalf("value = %q, want %q", got, line)
	}
	go func() {
		q, err := p.lines.ReadString('\n')
		if err == nil {
			p.master.WriteString("re:" + q)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := r.dev.Write(ctx, device.WriteRequest{Value: "MEAS?", Reply: true})
	if err != nil || res.Reply == nil || res.Reply.Value != "re:MEAS?" {
		t.Fatalf("Write = %+v (reply %+v), %v; want the reply re:MEAS?", res, res.Reply, err)
	}
	if got := r.rec.next(t).Value; got != "re:MEAS?" {
		t.Fatalf("value = %q, want the reply re:MEAS?", got)
	}
}

// TestPortUnplugReplug runs a port device on real pseudo-terminals: not
// plugged in at start, plugged in, unplugged, plugged in again (a new
// tty, the same link).
func TestPortUnplugReplug(t *testing.T) {
	r := newPortRig(t)
	wantState(t, r.rec, device.StateOffline, "open "+r.link+": no such file or directory")
	_, err := r.dev.Write(context.Background(), device.WriteRequest{Value: "x"})
	if !errors.Is(err, ErrOffline) || !errors.Is(err, fs.ErrNotExist) ||
		!strings.HasPrefix(err.Error(), "bench.meter is offline: open "+r.link) {
		t.Errorf("Write before plugging in = %v, want offline naming device and port", err)
	}

	first := openPTY(t)
	plug(t, r.link, first)
	fireRetry(t, r.clk, minBackoff)
	wantState(t, r.rec, device.StateOK, "")
	r.talk(t, first, "21.500")

	unplug(t, r.link, first)
	wantState(t, r.rec, device.StateOffline, "read "+r.link)
	start := time.Now()
	_, err = r.dev.Write(context.Background(), device.WriteRequest{Value: "MEAS?", Reply: true})
	if !errors.Is(err, ErrOffline) || !strings.HasPrefix(err.Error(), "bench.meter is offline: read "+r.link) {
		t.Errorf("Write while unplugged = %v, want offline naming device and port", err)
	}
	if waited := time.Since(start); waited > time.Second {
		t.Errorf("Write while unplugged took %v, want it to fail at once", waited)
	}
	fireRetry(t, r.clk, 2*minBackoff) // the port failed as soon as it opened
	wantState(t, r.rec, device.StateOffline, "no such file or directory")

	second := openPTY(t) // often the same /dev/pts/N: the link is what stays
	plug(t, r.link, second)
	fireRetry(t, r.clk, 4*minBackoff)
	wantState(t, r.rec, device.StateOK, "")
	r.talk(t, second, "22.125")
}

// A port the gateway has open is refused to a second opener, even in the
// same process and as root (the gateway's lock of the port, which the
// kernel's exclusive mode does not give root), and opens again once it
// is closed.
func TestOpenBusy(t *testing.T) {
	p := openPTY(t)
	cfg := PortConfig{Path: p.slave, Baud: 9600}.WithDefaults()
	first, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), cfg); !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "open "+p.slave+": busy") {
		t.Fatalf("second open: %v, want ErrBusy", err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("open after close: %v", err)
	}
	again.Close()
}
