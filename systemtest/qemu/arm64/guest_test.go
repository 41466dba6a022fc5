package arm64_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// guest is a running qemu-system-aarch64 and the host ends of its wires.
type guest struct {
	cmd     *exec.Cmd
	console *syncBuffer
	exited  chan struct{}
	halPort int // host port forwarded to the gateway's TCP listener
	cmdPort int // host port forwarded to the command channel (guest 5555)
	qmpPath string
	waitErr error
}

// guestConfig names what the guest boots and where its wires end.
type guestConfig struct {
	kernel, initrd       string
	usbChardev, pciChard string // Unix sockets QEMU listens on for the instruments
	qmpPath              string
}

const (
	guestHALPort = 7751
	guestCmdPort = 5555
)

// startGuest boots the guest; QEMU listens on the chardevs' sockets and
// the instruments connect once QMP answers.
func startGuest(ctx context.Context, gc guestConfig) (*guest, error) {
	hal, err := freePort()
	if err != nil {
		return nil, err
	}
	cmdp, err := freePort()
	if err != nil {
		return nil, err
	}
	args := []string{
		"-M", "virt", "-cpu", "cortex-a53", "-smp", "2", "-m", "1024",
		"-accel", "tcg,thread=multi", "-nographic", "-no-reboot",
		"-kernel", gc.kernel, "-initrd", gc.initrd,
		"-append", "console=ttyAMA0 panic=-1 loglevel=4",
		"-netdev", fmt.Sprintf("user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:%d-:%d,hostfwd=tcp:127.0.0.1:%d-:%d",
			hal, guestHALPort, cmdp, guestCmdPort),
		"-device", "virtio-net-pci,netdev=n0,romfile=",
		"-device", "qemu-xhci,id=xhci",
		"-chardev", "socket,id=cu,path=" + gc.usbChardev + ",server=on,wait=off",
		"-device", "usb-serial,chardev=cu,id=usbser,bus=xhci.0",
		"-chardev", "socket,id=cp,path=" + gc.pciChard + ",server=on,wait=off",
		"-device", "pci-serial,chardev=cp,id=pciser",
		"-qmp", "unix:" + gc.qmpPath + ",server=on,wait=off",
	}
	cmd := exec.CommandContext(ctx, "qemu-system-aarch64", args...)
	g := &guest{cmd: cmd, console: &syncBuffer{}, exited: make(chan struct{}),
		halPort: hal, cmdPort: cmdp, qmpPath: gc.qmpPath}
	cmd.Stdout = g.console
	cmd.Stderr = g.console
	cmd.Stdin = nil
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start qemu-system-aarch64: %w", err)
	}
	go func() {
		g.waitErr = cmd.Wait()
		close(g.exited)
	}()
	return g, nil
}

// stop kills QEMU and waits for it.
func (g *guest) stop() {
	select {
	case <-g.exited:
		return
	default:
	}
	g.cmd.Process.Kill()
	<-g.exited
}

// run runs a shell command in the guest through the command channel (one
// TCP connection per command, a busybox sh on the other end) and returns
// its output, standard error included.
func (g *guest) run(command string, timeout time.Duration) (string, error) {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(g.cmdPort), timeout)
	if err != nil {
		return "", fmt.Errorf("command channel: %w", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	if _, err := io.WriteString(c, "{ "+command+"; } 2>&1\n"); err != nil {
		return "", fmt.Errorf("command channel: send %q: %w", command, err)
	}
	c.(*net.TCPConn).CloseWrite()
	out, err := io.ReadAll(c)
	if err != nil {
		return string(out), fmt.Errorf("command channel: run %q: %w", command, err)
	}
	return string(out), nil
}

// simAttr is the shell expression of a gpio-sim line's sysfs attribute
// (value or pull), found through the chip's configfs entry.
func simAttr(offset int, attr string) string {
	const cfg = "/sys/kernel/config/gpio-sim/bench"
	return fmt.Sprintf("/sys/devices/platform/$(cat %s/dev_name)/$(cat %s/bank0/chip_name)/sim_gpio%d/%s", cfg, cfg, offset, attr)
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// syncBuffer is the console log, written by QEMU's output copier and read
// by the test, which can wait for a line to appear.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{} // closed and replaced at each write
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor waits until the log contains want, or one of fails (a line
// saying want will never come), the guest exits or ctx ends.
func (s *syncBuffer) waitFor(ctx context.Context, exited <-chan struct{}, want string, fails ...string) error {
	for {
		s.mu.Lock()
		log := s.b.String()
		found := strings.Contains(log, want)
		for _, f := range fails {
			if strings.Contains(log, f) {
				s.mu.Unlock()
				return fmt.Errorf("the console printed %q before %q", f, want)
			}
		}
		if s.changed == nil {
			s.changed = make(chan struct{})
		}
		ch := s.changed
		s.mu.Unlock()
		if found {
			return nil
		}
		select {
		case <-ch:
		case <-exited:
			return fmt.Errorf("QEMU exited before the console printed %q", want)
		case <-ctx.Done():
			return fmt.Errorf("the console did not print %q: %w", want, ctx.Err())
		}
	}
}
