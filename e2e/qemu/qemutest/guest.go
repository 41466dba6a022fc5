package qemutest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Config says what QEMU to run and how the guest's network card reaches
// the host. The guest's network is QEMU's user networking with
// restrict=on: the guest reaches nothing, and the host reaches the guest
// only through the forwarded ports.
type Config struct {
	QEMU string   // the binary, such as qemu-system-aarch64
	Args []string // machine, kernel, devices, QMP; not the network card

	// The network card: NetDevice names a pluggable one (-netdev plus
	// -device NetDevice,netdev=net0, such as "virtio-net-pci,romfile="),
	// NICModel a board's own (-nic user,model=NICModel, such as lan9118).
	NetDevice, NICModel string

	// Forward lists guest TCP ports each forwarded from a free port on
	// the host's 127.0.0.1 (HostPort).
	Forward []int

	// CommandPort is the guest port of the command channel: a shell
	// (busybox nc -e /bin/sh) per TCP connection. It must be in Forward.
	CommandPort int
}

// Guest is a running QEMU and the host ends of its network card.
type Guest struct {
	cmd     *exec.Cmd
	console *Console
	ports   map[int]int // guest port -> host port
	cmdPort int
	exited  chan struct{}
}

// Start starts QEMU; it is killed when ctx ends, or by Stop. Its standard
// output and error are the guest's serial console (Console).
func Start(ctx context.Context, cfg Config) (*Guest, error) {
	g := &Guest{console: &Console{}, ports: map[int]int{}, cmdPort: cfg.CommandPort, exited: make(chan struct{})}
	var fwd []string
	for _, gp := range cfg.Forward {
		hp, err := freePort()
		if err != nil {
			return nil, err
		}
		g.ports[gp] = hp
		fwd = append(fwd, fmt.Sprintf("hostfwd=tcp:127.0.0.1:%d-:%d", hp, gp))
	}
	if _, ok := g.ports[cfg.CommandPort]; !ok {
		return nil, fmt.Errorf("command channel port %d is not forwarded", cfg.CommandPort)
	}
	args := append([]string(nil), cfg.Args...)
	user := strings.Join(append([]string{"restrict=on"}, fwd...), ",")
	switch {
	case cfg.NetDevice != "" && cfg.NICModel == "":
		args = append(args, "-netdev", "user,id=net0,"+user, "-device", cfg.NetDevice+",netdev=net0")
	case cfg.NICModel != "" && cfg.NetDevice == "":
		args = append(args, "-nic", "user,model="+cfg.NICModel+","+user)
	default:
		return nil, errors.New("give the guest one network card: NetDevice or NICModel")
	}
	g.cmd = exec.CommandContext(ctx, cfg.QEMU, args...)
	g.cmd.Stdout = g.console
	g.cmd.Stderr = g.console
	if err := g.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", cfg.QEMU, err)
	}
	go func() {
		err := g.cmd.Wait()
		fmt.Fprintf(g.console, "\n[qemutest: %s exited: %v]\n", cfg.QEMU, err)
		close(g.exited)
	}()
	return g, nil
}

// Stop kills QEMU, if it still runs, and waits for it to exit.
func (g *Guest) Stop() {
	select {
	case <-g.exited:
		return
	default:
	}
	_ = g.cmd.Process.Kill()
	<-g.exited
}

// PID is QEMU's process id.
func (g *Guest) PID() int { return g.cmd.Process.Pid }

// Exited is closed once QEMU has exited.
func (g *Guest) Exited() <-chan struct{} { return g.exited }

// Console is the guest's serial console.
func (g *Guest) Console() *Console { return g.console }

// HostPort is the host port forwarded to guestPort (one of Config.Forward).
func (g *Guest) HostPort(guestPort int) int { return g.ports[guestPort] }

// WaitConsole waits until the console shows want. It fails early when
// the console shows one of fails (a line saying want will never come) or
// QEMU exits.
func (g *Guest) WaitConsole(ctx context.Context, want string, fails ...string) error {
	return g.console.WaitFor(ctx, g.exited, want, fails...)
}

// shellEnd marks the end of a command's output: without it, a connection
// QEMU accepted before the guest listened (and then dropped) would look
// like a command with no output.
const shellEnd = "__qemutest_end__"

// Shell runs script in a fresh guest shell on the command channel and
// returns its output, standard error included, without the last newline.
// A connection that ends before the script has run (QEMU accepts it even
// before the guest listens) is retried until ctx ends.
func (g *Guest) Shell(ctx context.Context, script string) (string, error) {
	for {
		out, err := g.shellOnce(ctx, "{\n"+script+"\n} 2>&1\necho "+shellEnd+"\nexit\n")
		if before, _, found := strings.Cut(out, shellEnd); found {
			return strings.TrimSuffix(before, "\n"), nil
		}
		select {
		case <-ctx.Done():
			return out, fmt.Errorf("guest shell: run %q: %w (last try: %v)", script, ctx.Err(), err)
		case <-g.exited:
			return out, fmt.Errorf("guest shell: run %q: QEMU exited", script)
		case <-time.After(200 * time.Millisecond): // the guest's listener is not up yet
		}
	}
}

func (g *Guest) shellOnce(ctx context.Context, script string) (string, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(g.ports[g.cmdPort])))
	if err != nil {
		return "", fmt.Errorf("dial the command channel: %w", err)
	}
	defer c.Close()
	dl, _ := ctx.Deadline()
	_ = c.SetDeadline(dl)
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := io.WriteString(c, script); err != nil {
		return "", fmt.Errorf("send the script: %w", err)
	}
	_ = c.(*net.TCPConn).CloseWrite()
	out, err := io.ReadAll(c)
	if err != nil {
		return string(out), fmt.Errorf("read the output: %w", err)
	}
	return string(out), nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
