package armhf_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// console collects the guest's serial console (QEMU's stdout and stderr)
// and lets the test wait for a line to appear in it.
type console struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{} // closed and replaced on every write
}

func newConsole() *console { return &console{changed: make(chan struct{})} }

func (c *console) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf.Write(p)
	close(c.changed)
	c.changed = make(chan struct{})
	return len(p), nil
}

func (c *console) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// waitFor waits until the console holds s, or ctx ends.
func (c *console) waitFor(ctx context.Context, s string) error {
	for {
		c.mu.Lock()
		found := strings.Contains(c.buf.String(), s)
		ch := c.changed
		c.mu.Unlock()
		if found {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("wait for %q on the console: %w", s, ctx.Err())
		}
	}
}

// guest is one qemu-system-arm vexpress-a15 with tmp105 models at 0x48
// (id tmp0) and 0x49 (id tmp1) of the board's I2C bus, its LAN9118
// forwarded from the host.
type guest struct {
	cmd       *exec.Cmd
	con       *console
	qmpPath   string
	halPort   int // host port of the gateway's TCP listener (guest 7751)
	shellPort int // host port of the command channel (guest 2323)
	exited    chan struct{}
}

// assets are the files systemtest/qemu/armhf/assets.sh builds.
type assets struct{ dir string }

func (a assets) path(name string) string { return filepath.Join(a.dir, name) }

// bootGuest starts QEMU with the base initramfs followed by extra (a cpio
// with /gateway and /etc/gateway/gateway.yaml).
func bootGuest(a assets, extra []byte, tmp string) (*guest, error) {
	base, err := os.ReadFile(a.path("base.cpio.gz"))
	if err != nil {
		return nil, fmt.Errorf("read base initramfs: %w", err)
	}
	// The kernel looks for the next archive's magic on a 4-byte
	// boundary after the compressed one ends.
	initrd := append(base, make([]byte, (4-len(base)%4)%4)...)
	initrd = append(initrd, extra...)
	initrdPath := filepath.Join(tmp, "initrd")
	if err := os.WriteFile(initrdPath, initrd, 0o644); err != nil {
		return nil, fmt.Errorf("write initrd: %w", err)
	}
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	g := &guest{con: newConsole(), qmpPath: filepath.Join(tmp, "qmp.sock"),
		halPort: ports[0], shellPort: ports[1], exited: make(chan struct{})}
	nic := fmt.Sprintf("user,model=lan9118,restrict=on,hostfwd=tcp:127.0.0.1:%d-:7751,hostfwd=tcp:127.0.0.1:%d-:2323",
		g.halPort, g.shellPort)
	g.cmd = exec.Command("qemu-system-arm",
		"-M", "vexpress-a15", "-cpu", "cortex-a15", "-smp", "2", "-m", "512",
		"-accel", "tcg,thread=multi", "-nographic", "-no-reboot", "-audiodev", "none,id=noaudio", "-global", "pl041.audiodev=noaudio",
		"-kernel", a.path("vmlinuz"), "-dtb", a.path("vexpress-v2p-ca15-tc1.dtb"),
		"-initrd", initrdPath, "-append", "console=ttyAMA0 panic=-1 quiet",
		"-device", "tmp105,id=tmp0,bus=i2c,address=0x48",
		"-device", "tmp105,id=tmp1,bus=i2c,address=0x49",
		"-nic", nic,
		"-qmp", "unix:"+g.qmpPath+",server=on,wait=off")
	g.cmd.Stdout = g.con
	g.cmd.Stderr = g.con
	if err := g.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start qemu-system-arm: %w", err)
	}
	go func() {
		err := g.cmd.Wait()
		fmt.Fprintf(g.con, "\n[test: qemu exited: %v]\n", err)
		close(g.exited)
	}()
	return g, nil
}

// stop kills QEMU and waits for it.
func (g *guest) stop() {
	_ = g.cmd.Process.Kill()
	<-g.exited
}

// waitFor waits for s on the console, failing early if QEMU exits.
func (g *guest) waitFor(ctx context.Context, s string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-g.exited:
			cancel()
		case <-ctx.Done():
		}
	}()
	return g.con.waitFor(ctx, s)
}

// shell runs script in a fresh guest shell on the command channel and
// returns what it printed. QEMU accepts the host's connection even
// before the guest listens and then drops it, so an empty answer is
// retried until ctx ends.
func (g *guest) shell(ctx context.Context, script string) (string, error) {
	const end = "__armhf_test_end__"
	for {
		out, err := g.shellOnce(ctx, script+"\necho "+end+"\nexit\n")
		if err == nil && strings.Contains(out, end) {
			return strings.TrimSuffix(strings.SplitN(out, end, 2)[0], "\n"), nil
		}
		select {
		case <-ctx.Done():
			return out, fmt.Errorf("guest shell (%v): %w", err, ctx.Err())
		case <-g.exited:
			return out, errors.New("guest shell: qemu exited")
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (g *guest) shellOnce(ctx context.Context, script string) (string, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", g.shellPort))
	if err != nil {
		return "", fmt.Errorf("dial command channel: %w", err)
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	if _, err := io.WriteString(c, script); err != nil {
		return "", fmt.Errorf("send script: %w", err)
	}
	out, err := io.ReadAll(c)
	return string(out), err
}

// qmp is a QEMU Machine Protocol session on a Unix socket.
type qmp struct {
	c net.Conn
	r *bufio.Reader
}

func dialQMP(ctx context.Context, path string) (*qmp, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("dial qmp %s: %w", path, err)
	}
	q := &qmp{c: c, r: bufio.NewReader(c)}
	if _, err := q.r.ReadBytes('\n'); err != nil { // the greeting
		c.Close()
		return nil, fmt.Errorf("qmp greeting: %w", err)
	}
	if _, err := q.run("qmp_capabilities", nil); err != nil {
		c.Close()
		return nil, err
	}
	return q, nil
}

// run executes one command and returns its "return", or its "error" as
// an error; events in between are skipped.
func (q *qmp) run(cmd string, args any) (json.RawMessage, error) {
	req, err := json.Marshal(map[string]any{"execute": cmd, "arguments": args})
	if args == nil {
		req, err = json.Marshal(map[string]any{"execute": cmd})
	}
	if err != nil {
		return nil, err
	}
	_ = q.c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := q.c.Write(append(req, '\n')); err != nil {
		return nil, fmt.Errorf("qmp %s: %w", cmd, err)
	}
	for {
		line, err := q.r.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("qmp %s: %w", cmd, err)
		}
		var ans struct {
			Return json.RawMessage `json:"return"`
			Error  *struct {
				Class string `json:"class"`
				Desc  string `json:"desc"`
			} `json:"error"`
		}
		if err := json.Unmarshal(line, &ans); err != nil {
			return nil, fmt.Errorf("qmp %s: decode %q: %w", cmd, line, err)
		}
		if ans.Error != nil {
			return nil, fmt.Errorf("qmp %s: %s: %s", cmd, ans.Error.Class, ans.Error.Desc)
		}
		if ans.Return != nil {
			return ans.Return, nil
		}
	}
}

func (q *qmp) Close() error { return q.c.Close() }

// freePorts returns n TCP ports on 127.0.0.1 that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// cpioFile is one regular file of a newc archive.
type cpioFile struct {
	name string
	mode uint32 // permission bits
	data []byte
}

// newc writes files (and the directories they need) as an uncompressed
// cpio "newc" archive, the format the kernel unpacks into its rootfs.
func newc(files []cpioFile) []byte {
	var b bytes.Buffer
	ino := 1
	entry := func(name string, mode uint32, data []byte) {
		fmt.Fprintf(&b, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
			ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name)+1, 0)
		ino++
		b.WriteString(name)
		b.WriteByte(0)
		for b.Len()%4 != 0 {
			b.WriteByte(0)
		}
		b.Write(data)
		for b.Len()%4 != 0 {
			b.WriteByte(0)
		}
	}
	dirs := map[string]bool{}
	for _, f := range files {
		var parts []string
		for d := filepath.Dir(f.name); d != "." && d != "/"; d = filepath.Dir(d) {
			parts = append([]string{d}, parts...)
		}
		for _, d := range parts {
			if !dirs[d] {
				dirs[d] = true
				entry(d, 0o040755, nil)
			}
		}
		entry(f.name, 0o100000|f.mode, f.data)
	}
	entry("TRAILER!!!", 0, nil)
	return b.Bytes()
}
