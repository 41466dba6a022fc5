package arm64_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/e2e/qemu/qemutest"
	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal"
)

// gatewayYAML is the guest's /etc/gateway/gateway.yaml: the generic board
// with the gpio-sim chip's lines (named by line name, and one by chip label
// and offset) and the two serial ports.
const gatewayYAML = `board: generic
stateDir: /var/lib/gateway
hub:
  listen:
    http: ""
    # QEMU's user network forwards a port of the host's 127.0.0.1 to
    # the guest's own address, not its loopback: plain, said insecure.
    tcp: {address: 0.0.0.0:7751, insecure: true}
devices:
  bench.relay:
    kind: gpio.output
    pin: RELAY
    safe: false
  bench.lamp:
    kind: gpio.output
    pin: "gwsim:1"
  bench.door:
    kind: gpio.input
    pin: DOOR
    pull: down
    debounce: 20ms
  bench.stop:
    kind: gpio.input
    pin: STOP
    pull: up
    invert: true
  bench.contact:
    kind: gpio.input
    pin: CONTACT
    pull: down
    debounce: 2s
  bench.meter:
    kind: serial
    port: /dev/ttyUSB0
    baud: 9600
  bench.psu:
    kind: serial
    port: /dev/ttyS0
    baud: 115200
  bench.flow:
    kind: counter
    pin: "gwsim:5"
    pull: down
    perPulse: 0.5
    unit: l
  bench.wind:
    kind: counter
    pin: "gwsim:6"
    pull: down
    edge: both
    debounce: 30ms
    interval: 200ms
  bench.pulses:
    kind: counter
    pin: "gwsim:7"
    pull: down
stopButton: bench.stop
`

// The gpio-sim offsets of the lines init names.
const (
	lineRelay   = 0
	lineLamp    = 1
	lineDoor    = 2
	lineStop    = 3
	lineContact = 4
)

// assets finds the kernel, the base initramfs and the arm64 gateway, or
// says how to make them.
func assets(t *testing.T) (kernel, base, bin string) {
	t.Helper()
	dir := os.Getenv("GATEWAY_QEMU_ASSETS")
	if dir == "" {
		cache, err := qemutest.CacheDir("arm64")
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(cache, "out")
	}
	bin = os.Getenv("GATEWAY_ARM64_BIN")
	if bin == "" {
		bin = filepath.Join("..", "..", "..", "bin", "cross", "gateway-linux-arm64")
	}
	kernel, base = filepath.Join(dir, "vmlinuz"), filepath.Join(dir, "base.cpio.gz")
	for _, f := range []string{kernel, base, bin} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("%v: run make test-qemu-arm64 (it runs make cross and e2e/qemu/arm64/assets.sh)", err)
		}
	}
	return kernel, base, bin
}

func TestGatewayOnArm64(t *testing.T) {
	if !qemutest.Enabled() {
		t.Skip("boots Debian's arm64 kernel under QEMU (minutes): run `make test-qemu-arm64`, " +
			"or GATEWAY_QEMU=1 go test -count=1 -v ./e2e/qemu/arm64 after make cross and e2e/qemu/arm64/assets.sh")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	started := time.Now()
	b := startBench(ctx, t)
	r := qemutest.NewReport(t, os.Stdout)
	defer func() {
		r.Summary()
		if r.Failed() > 0 || t.Failed() || os.Getenv("GATEWAY_QEMU_LOG") == "1" {
			b.dump(t)
		}
	}()

	var s *scenario
	r.Check("boot, then HAL over the guest's virtio-net (hostfwd) with the admin token", func() (err error) {
		s, err = b.connect(ctx, t)
		return err
	})
	if s == nil {
		return
	}
	t.Logf("booted and connected after %s", time.Since(started).Round(100*time.Millisecond))
	r.Check("gpio output by line name (RELAY): HAL write true/false -> gpio-sim value 1/0", func() error { return s.output("bench.relay", lineRelay) })
	r.Check("gpio output by chip label:offset (gwsim:1): HAL write true/false -> value 1/0", func() error { return s.output("bench.lamp", lineLamp) })
	r.Check("gpio input DOOR: pull-up/pull-down in the guest -> hal/value true, false", s.input)
	r.Check("gpio input CONTACT, debounce 2s: a 0.5 s pulse publishes nothing, held levels publish true, false", s.debounce)
	r.Check("serial USB (ftdi_sio, /dev/ttyUSB0): instrument line -> hal/value, *IDN? with reply", func() error { return s.serial("bench.meter", b.usb) })
	r.Check("serial PCI (8250, /dev/ttyS0): instrument line -> hal/value, *IDN? with reply", func() error { return s.serial("bench.psu", b.pci) })
	r.Check("serial USB unplug (QMP device_del) -> offline, replug (device_add) -> ok and answers", s.replug)
	r.Check("stop button STOP pressed -> hal/stopped, relay driven safe; released -> resume", s.stopButton)
	r.Check("counter bench.flow (gwsim:5): 100 pulses at 20 Hz -> count 50 l; each rate: the edges stamped in its window; then 0", s.counterTrain)
	r.Check("counter bench.wind, debounce 30ms, both edges: 10 ringing closings and openings -> count 20, the rings nothing", s.counterDebounce)
	r.Check("counter bench.pulses: 400 pulses while the gateway is stopped -> the kernel drops 144, all 400 counted, the drop logged", s.counterDrops)
	r.Check("counter kept across a clean restart (SIGTERM, started again) in the state directory", s.counterRestart)
	t.Logf("all checks done after %s", time.Since(started).Round(100*time.Millisecond))
}

// bench is the running guest with its QMP connection and instruments.
type bench struct {
	g        *qemutest.Guest
	qmp      *qemutest.QMP
	usb, pci *instrument
}

// startBench makes the initramfs, boots the guest and connects QMP and the
// instruments; t.Cleanup stops them all.
func startBench(ctx context.Context, t *testing.T) *bench {
	t.Helper()
	kernel, base, bin := assets(t)
	dir := t.TempDir()
	gw, err := os.ReadFile(bin)
	if err != nil {
		t.Fatalf("read the gateway binary: %v", err)
	}
	initrd := filepath.Join(dir, "initrd")
	err = qemutest.WriteInitrd(base, initrd, []qemutest.File{
		{Name: "gateway", Mode: 0o755, Data: gw},
		{Name: "etc/gateway/gateway.yaml", Mode: 0o644, Data: []byte(gatewayYAML)},
		{Name: guestPulsegen[1:], Mode: 0o755, Data: pulsegen(t)},
	})
	if err != nil {
		t.Fatal(err)
	}
	usbSock, pciSock := filepath.Join(dir, "usb.sock"), filepath.Join(dir, "pci.sock")
	qmpPath := filepath.Join(dir, "qmp.sock")
	g, err := startGuest(ctx, guestConfig{kernel: kernel, initrd: initrd,
		usbChardev: usbSock, pciChard: pciSock, qmpPath: qmpPath})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Stop)
	t.Logf("QEMU pid %d", g.PID())
	b := &bench{g: g}
	qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if b.qmp, err = qemutest.DialQMP(qctx, qmpPath); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.qmp.Close() })
	if b.usb, err = connectInstrument("USB-DMM", usbSock); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.usb.close)
	if b.pci, err = connectInstrument("PCI-PSU", pciSock); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.pci.close)
	return b
}

// connect waits for the gateway to listen, reads the admin token through
// the command channel and dials the Hub through the forwarded port.
func (b *bench) connect(ctx context.Context, t *testing.T) (*scenario, error) {
	bootCtx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()
	if err := b.g.WaitConsole(bootCtx, "msg=listening transport=tcp",
		"init: gateway exited", "init: no /gateway", "Kernel panic"); err != nil {
		return nil, fmt.Errorf("boot: %w", err)
	}
	tokCtx, cancelTok := context.WithTimeout(ctx, 20*time.Second)
	defer cancelTok()
	token, err := b.g.Shell(tokCtx, "cat /var/lib/gateway/admin.token")
	token = strings.TrimSpace(token)
	if err != nil || token == "" || strings.Contains(token, " ") {
		return nil, fmt.Errorf("read the admin token in the guest: %q %v", token, err)
	}
	url := fmt.Sprintf("tcp://127.0.0.1:%d", b.g.HostPort(guestHALPort))
	conn, err := halclient.Dial(ctx, url, halclient.Options{Token: token, ClientName: "qemu-arm64-test"})
	if err != nil {
		return nil, fmt.Errorf("HAL over the guest's network card: %w", err)
	}
	t.Cleanup(func() { conn.Close() })
	return &scenario{ctx: ctx, g: b.g, conn: conn, rec: newRecorder(conn.Notifications()),
		qmp: b.qmp, usb: b.usb, pci: b.pci, logf: t.Logf}, nil
}

// dump logs what the instruments received and the guest's console.
func (b *bench) dump(t *testing.T) {
	t.Logf("instrument USB-DMM received %q", b.usb.received())
	t.Logf("instrument PCI-PSU received %q", b.pci.received())
	t.Logf("guest console:\n%s", b.g.Console().String())
}

// recorder keeps every notification the client receives, so that a check
// can wait for one that arrives after its action (from a mark).
type recorder struct {
	mu      sync.Mutex
	notes   []halclient.Notification
	changed chan struct{}
	closed  bool
}

func newRecorder(ch <-chan halclient.Notification) *recorder {
	r := &recorder{changed: make(chan struct{})}
	go func() {
		for n := range ch {
			r.mu.Lock()
			r.notes = append(r.notes, n)
			close(r.changed)
			r.changed = make(chan struct{})
			r.mu.Unlock()
		}
		r.mu.Lock()
		r.closed = true
		close(r.changed)
		r.changed = make(chan struct{})
		r.mu.Unlock()
	}()
	return r
}

func (r *recorder) mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.notes)
}

// waitFor returns the index just past the first notification at or after
// from with the method whose params match, waiting up to within. An empty
// method leaves the choice to match, which then sees the whole notification.
func (r *recorder) waitFor(ctx context.Context, from int, within time.Duration, method string, match any) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	for {
		r.mu.Lock()
		for i := from; i < len(r.notes); i++ {
			if n := r.notes[i]; matches(n, method, match) {
				r.mu.Unlock()
				return i + 1, nil
			}
		}
		from = len(r.notes)
		ch, closed := r.changed, r.closed
		r.mu.Unlock()
		if closed {
			return 0, fmt.Errorf("connection closed while waiting for %s", method)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			if method == "" {
				method = "matching notification"
			}
			return 0, fmt.Errorf("no %s within %s", method, within)
		}
	}
}

// values returns the values of id's hal/value notifications from index from.
func (r *recorder) values(from int, id string) []any {
	r.mu.Lock()
	defer r.mu.Unlock()
	var vs []any
	for _, n := range r.notes[from:] {
		var v openhal.ValueResult
		if n.Method == openhal.NotifyValue && json.Unmarshal(n.Params, &v) == nil && v.Device == id {
			vs = append(vs, v.Value)
		}
	}
	return vs
}

func matches(n halclient.Notification, method string, match any) bool {
	switch m := match.(type) {
	case nil:
		return n.Method == method
	case func(json.RawMessage) bool:
		return n.Method == method && m(n.Params)
	case func(halclient.Notification) bool:
		return (method == "" || n.Method == method) && m(n)
	}
	return false
}

func valueIs(id string, want any) func(json.RawMessage) bool {
	return func(p json.RawMessage) bool {
		var v openhal.ValueResult
		return json.Unmarshal(p, &v) == nil && v.Device == id && v.Value == want
	}
}

func stateIs(id string, want device.State) func(json.RawMessage) bool {
	return func(p json.RawMessage) bool {
		var v openhal.DeviceStateParams
		return json.Unmarshal(p, &v) == nil && v.Device == id && v.State == want
	}
}
