package rpi3b_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/e2e/qemu/qemutest"
	"github.com/openhal/gateway/halclient"
)

// gatewayYAML is the guest's /etc/gateway/gateway.yaml: board rpi3b, its
// lines named in each way the profile takes them, outputs and inputs with
// a pull each way.
const gatewayYAML = `board: rpi3b
stateDir: /var/lib/gateway
hub:
  listen:
    http: ""
    # QEMU's user network forwards a port of the host's 127.0.0.1 to
    # the guest's own address, not its loopback: plain, said insecure.
    tcp: {address: 0.0.0.0:7751, insecure: true}
devices:
  rpi.relay:
    kind: gpio.output
    pin: pin11                 # GPIO17, by header pin
    safe: false
  rpi.lamp:
    kind: gpio.output
    pin: "pinctrl-bcm2835:22"  # by chip label and offset
    invert: true
  rpi.clock:
    kind: gpio.output
    pin: GPIO_GCLK             # GPIO4, by the Pi 3B kernel's own name
  rpi.button:
    kind: gpio.input
    pin: GPIO27
    pull: up
  rpi.door:
    kind: gpio.input
    pin: pin16                 # GPIO23
    pull: down
    edge: rising
`

// The outputs and inputs of gatewayYAML, with their BCM lines.
var (
	outputs = []struct {
		id     string
		line   int
		invert bool
	}{{"rpi.relay", 17, false}, {"rpi.lamp", 22, true}, {"rpi.clock", 4, false}}
	inputs = []struct {
		id, pull, edge string
		line           int
	}{{"rpi.button", "pull-up", "both", 27}, {"rpi.door", "pull-down", "rising", 23}}
)

// assets finds the kernel, device tree, base initramfs and the arm64
// gateway, or says how to make them.
func assets(t *testing.T) (kernel, dtb, base, bin string) {
	t.Helper()
	dir := os.Getenv("GATEWAY_QEMU_RPI3B_ASSETS")
	if dir == "" {
		cache, err := qemutest.CacheDir("rpi3b")
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(cache, "out")
	}
	bin = os.Getenv("GATEWAY_ARM64_BIN")
	if bin == "" {
		bin = filepath.Join("..", "..", "..", "bin", "cross", "gateway-linux-arm64")
	}
	kernel, dtb, base = filepath.Join(dir, "vmlinuz"), filepath.Join(dir, dtbName), filepath.Join(dir, "base.cpio.gz")
	for _, f := range []string{kernel, dtb, base, bin} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("%v: run make test-qemu-rpi3b (it runs make cross and e2e/qemu/rpi3b/assets.sh)", err)
		}
	}
	return kernel, dtb, base, bin
}

// buildGPIOInfo cross-builds ./gpioinfo for the guest with $GO (make's
// Go), else the go on PATH.
func buildGPIOInfo(t *testing.T, dir string) []byte {
	t.Helper()
	goCmd := os.Getenv("GO")
	if goCmd == "" {
		goCmd = "go"
	}
	out := filepath.Join(dir, "gpioinfo")
	cmd := exec.Command(goCmd, "build", "-trimpath", "-ldflags", "-s -w", "-o", out, "./gpioinfo")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build gpioinfo for arm64: %v\n%s", err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGatewayOnRaspi3b(t *testing.T) {
	if !qemutest.Enabled() {
		t.Skip("boots Debian's arm64 kernel on QEMU's raspi3b (a minute): run `make test-qemu-rpi3b`, " +
			"or GATEWAY_QEMU=1 go test -count=1 -v ./e2e/qemu/rpi3b after make cross and e2e/qemu/rpi3b/assets.sh")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	started := time.Now()
	s := startScenario(ctx, t)
	r := qemutest.NewReport(t, os.Stdout)
	defer func() {
		r.Summary()
		if r.Failed() > 0 || t.Failed() || os.Getenv("GATEWAY_QEMU_LOG") == "1" {
			t.Logf("guest console:\n%s", s.g.Console().String())
		}
	}()

	booted := false
	r.Check("boot on raspi3b with bcm2837-rpi-3-b.dtb: the device tree's model is the rpi3b profile's", func() error {
		err := s.boot()
		booted = err == nil
		return err
	})
	if !booted {
		return
	}
	t.Logf("booted to init after %s", time.Since(started).Round(100*time.Millisecond))
	connected := false
	r.Check("gateway with board rpi3b starts (QEMU tracing the GPIO block's writes); HAL over usb-net", func() error {
		err := s.start(t)
		connected = err == nil
		return err
	})
	if !connected {
		return
	}
	t.Logf("gateway ready and connected after %s", time.Since(started).Round(100*time.Millisecond))
	r.Check("pinctrl-bcm2835: 54 lines named as the Pi 3B device tree names them; the profile resolves each header name to its offset", s.lineNames)
	r.Check("the profile's I2C and PWM controllers are the device tree's; GPIO14/15 in ALT5 (mini UART) as serial0 says", s.controllers)
	r.Check("the gateway's lines in the kernel's line info: outputs, inputs with their bias and edges", s.lineInfo)
	r.Check("outputs (pin11, pinctrl-bcm2835:22 inverted, GPIO_GCLK): initial levels, HAL writes -> the model's GPFSEL and GPLEV", s.outputs)
	r.Check("bias: the inputs' pull-up and pull-down reach the model's GPPUD/GPPUDCLK0 (QEMU trace)", s.bias)
	r.Check("inputs: hal/read is the model's GPLEV (which ignores pulls); a level set in the model reads true, then false", s.inputLevels)
	s.edges(r)
	t.Logf("all checks done after %s", time.Since(started).Round(100*time.Millisecond))
}

// startScenario makes the initramfs (the gateway, its configuration and
// gpioinfo), boots the guest and connects QMP; t.Cleanup stops them.
func startScenario(ctx context.Context, t *testing.T) *scenario {
	t.Helper()
	kernel, dtb, base, bin := assets(t)
	dir := t.TempDir()
	gw, err := os.ReadFile(bin)
	if err != nil {
		t.Fatalf("read the gateway binary: %v", err)
	}
	initrd := filepath.Join(dir, "initrd")
	err = qemutest.WriteInitrd(base, initrd, []qemutest.File{
		{Name: "gateway", Mode: 0o755, Data: gw},
		{Name: "bin/gpioinfo", Mode: 0o755, Data: buildGPIOInfo(t, dir)},
		{Name: "etc/gateway/gateway.yaml", Mode: 0o644, Data: []byte(gatewayYAML)},
	})
	if err != nil {
		t.Fatal(err)
	}
	gc := guestConfig{kernel: kernel, dtb: dtb, initrd: initrd,
		qmpPath: filepath.Join(dir, "qmp.sock"), traceLog: filepath.Join(dir, "qemu.log")}
	g, err := startGuest(ctx, gc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Stop)
	t.Logf("QEMU pid %d", g.PID())
	qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	q, err := qemutest.DialQMP(qctx, gc.qmpPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return &scenario{ctx: ctx, g: g, qmp: q, traceLog: gc.traceLog, logf: t.Logf}
}

// start turns QEMU's trace of MMIO writes on, lets init start the gateway,
// turns the trace off once the gateway is ready (its lines requested),
// reads the admin token and dials the Hub through usb-net.
func (s *scenario) start(t *testing.T) error {
	if err := s.trace(true); err != nil {
		return err
	}
	if _, err := s.shell("echo start >/run/start"); err != nil {
		return err
	}
	readyCtx, cancel := context.WithTimeout(s.ctx, 2*time.Minute)
	defer cancel()
	err := s.g.WaitConsole(readyCtx, "msg=ready", "init: gateway exited", "init: no /gateway", "Kernel panic")
	if terr := s.trace(false); err == nil && terr != nil {
		err = terr
	}
	if err != nil {
		return fmt.Errorf("gateway start: %w", err)
	}
	token, err := s.shell("cat /var/lib/gateway/admin.token")
	token = strings.TrimSpace(token)
	if err != nil || token == "" || strings.Contains(token, " ") {
		return fmt.Errorf("read the admin token in the guest: %q %v", token, err)
	}
	url := fmt.Sprintf("tcp://127.0.0.1:%d", s.g.HostPort(guestHALPort))
	conn, err := halclient.Dial(s.ctx, url, halclient.Options{Token: token, ClientName: "qemu-rpi3b-test"})
	if err != nil {
		return fmt.Errorf("HAL over the guest's usb-net: %w", err)
	}
	t.Cleanup(func() { conn.Close() })
	s.conn, s.notes = conn, newRecorder(conn.Notifications())
	return nil
}
