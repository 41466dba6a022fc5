// Package armhf_test is the I2C part of the real-kernel system test
// (issue 8, point 4): the GOARM=7 gateway of `make cross` runs on Debian's
// armhf kernel under qemu-system-arm (vexpress-a15), reads QEMU's TMP105
// models through the kernel's i2c-versatile and i2c-dev drivers, and a HAL
// client on the host reaches it through the board's emulated LAN9118.
//
// It boots only with GATEWAY_QEMU=1 (make test-qemu-armhf); see
// README.md in this folder.
package armhf_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/e2e/qemu/qemutest"
	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal"
)

const skipMsg = "boots Debian's armhf kernel under qemu-system-arm (about 10 s with the assets cached): " +
	"run `make test-qemu-armhf`, or `make cross` then GATEWAY_QEMU=1 go test -count=1 -v ./e2e/qemu/armhf"

// The gateway's configuration; init.sh puts the /dev/i2c-N of the
// board's I2C controller (0x1c160000) in place of @I2C_BUS@. lab.temp
// uses the TMP105 driver on model tmp0, lab.temp2 the TMP102 driver on
// model tmp1. QEMU's model powers up, as the real TMP105 does, at 9 bits
// (0.5 °C steps): the TMP105 driver sets 12 bits, so 23.125 and -10.125
// read exactly only if it did; the TMP102 driver leaves the resolution
// alone (fixed at 12 bits on a real TMP102), so lab.temp2 is given
// values on the 0.5 °C grid. lab.missing points a driver at 0x4a, where
// nothing answers: it must be served in fault. lab.lamp is an output on
// an MCP23017 at 0x20, which QEMU has no model of: it too must be served
// in fault, saying which chip did not answer. lab.hwmon and lab.baro
// (kernel_test.go) read through the kernel's drivers once the test binds
// them.
const gatewayYAML = `board: generic
chips:
  ex1: {type: mcp23017, bus: "@I2C_BUS@", address: 0x20}
hub:
  listen:
    http: ""
    # QEMU's user network forwards a port of the host's 127.0.0.1 to
    # the guest's own address, not its loopback: plain, said insecure.
    tcp: {address: 0.0.0.0:7751, insecure: true}
devices:
  lab.temp:
    kind: sensor
    driver: tmp105
    bus: "@I2C_BUS@"
    address: 0x48
    interval: 500ms
  lab.temp2:
    kind: sensor
    driver: tmp102
    bus: "@I2C_BUS@"
    address: 0x49
    interval: 500ms
  lab.missing:
    kind: sensor
    driver: tmp105
    bus: "@I2C_BUS@"
    address: 0x4a
    interval: 500ms
  lab.lamp:
    kind: gpio.output
    pin: ex1:GPA0
    risk: low
` + kernelYAML

// model is a QEMU tmp105 device and the gateway device that reads it.
type model struct{ qomID, device string }

var models = []model{{"tmp0", "lab.temp"}, {"tmp1", "lab.temp2"}}

func TestI2CSensorOnVexpress(t *testing.T) {
	if !qemutest.Enabled() {
		t.Skip(skipMsg)
	}
	start := time.Now()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := os.Getenv("GATEWAY_ARMV7")
	if bin == "" {
		bin = filepath.Join(root, "bin/cross/gateway-linux-armv7")
	}
	gw, err := os.ReadFile(bin)
	if err != nil {
		t.Fatalf("read the ARMv7 gateway (make cross): %v", err)
	}
	var stderr strings.Builder
	cmd := exec.Command("bash", "assets.sh")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("assets.sh: %v\n%s", err, stderr.String())
	}
	a := assets{dir: strings.TrimSpace(string(out))}
	tAssets := time.Since(start)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	tmp := t.TempDir()
	qmpPath := filepath.Join(tmp, "qmp.sock")
	g, err := bootGuest(ctx, a, []qemutest.File{
		{Name: "gateway", Mode: 0o755, Data: gw},
		{Name: "etc/gateway/gateway.yaml", Mode: 0o644, Data: []byte(gatewayYAML)},
	}, tmp, qmpPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Stop)
	t.Logf("QEMU pid %d", g.PID())
	c := qemutest.NewReport(t, os.Stdout)
	defer func() {
		c.Summary()
		if c.Failed() > 0 || t.Failed() || os.Getenv("GATEWAY_QEMU_LOG") == "1" {
			t.Logf("guest console:\n%s", g.Console().String())
		}
	}()
	fail := func(name string, err error) { c.Check(name, func() error { return err }) }

	bootStart := time.Now()
	if err := g.WaitConsole(ctx, "msg=ready"); err != nil {
		fail("gateway ready in the guest", err)
		return
	}
	tBoot := time.Since(bootStart)
	bus := regexp.MustCompile(`guest: i2c (/dev/i2c-\d+)`).FindStringSubmatch(g.Console().String())
	if bus == nil {
		fail("guest found the I2C bus at 1c160000", fmt.Errorf("no 'guest: i2c' line"))
		return
	}
	token, err := g.Shell(ctx, "cat /var/lib/gateway/admin.token")
	if err != nil {
		fail("read the admin token over the command channel", err)
		return
	}
	q, err := qemutest.DialQMP(ctx, qmpPath)
	if err != nil {
		fail("QMP", err)
		return
	}
	defer q.Close()
	conn, err := halclient.Dial(ctx, fmt.Sprintf("tcp://127.0.0.1:%d", g.HostPort(guestHALPort)),
		halclient.Options{Token: strings.TrimSpace(token), ClientName: "armhf-systemtest"})
	if err != nil {
		fail("HAL client dials the gateway through the LAN9118", err)
		return
	}
	defer conn.Close()
	checksStart := time.Now()

	for i, m := range models {
		milli := []int64{23125, 30500}[i]
		c.Check(fmt.Sprintf("(a) %s reads model %s's temperature (%d m°C)", m.device, m.qomID, milli),
			func() error { return readMatches(ctx, q, conn, m, milli) })
	}
	for i, m := range models {
		milli := []int64{-10125, 42500}[i]
		c.Check(fmt.Sprintf("(b) QMP sets %s to %d m°C, the client gets hal/value", m.qomID, milli),
			func() error { return changeSeen(ctx, q, conn, m, milli) })
	}
	c.Check("(c) a sensor at a missing address (0x4a) is served in fault, and the gateway serves the rest",
		func() error { return missingAddress(ctx, conn) })
	c.Check("(e) an output on an MCP23017 that is not there (QEMU has no model) is served in fault, and its write fails naming the chip",
		func() error { return missingExpander(ctx, conn, bus[1]) })
	unplug(ctx, c, q, conn)
	kernelDrivers(ctx, c, g, q, conn, bus[1])
	t.Logf("times: assets %v, boot to gateway ready %v, checks %v, total %v",
		tAssets.Round(time.Millisecond), tBoot.Round(time.Millisecond),
		time.Since(checksStart).Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}

// setTemp sets a model's temperature in m°C through QMP and reads it back.
func setTemp(ctx context.Context, q *qemutest.QMP, m model, milli int64) error {
	path := "/machine/peripheral/" + m.qomID
	if _, err := q.Run(ctx, "qom-set", map[string]any{"path": path, "property": "temperature", "value": milli}); err != nil {
		return err
	}
	raw, err := q.Run(ctx, "qom-get", map[string]any{"path": path, "property": "temperature"})
	if err != nil {
		return err
	}
	var got int64
	if err := json.Unmarshal(raw, &got); err != nil || got != milli {
		return fmt.Errorf("qom-get %s temperature = %s, want %d", path, raw, milli)
	}
	return nil
}

// temperature is the "temperature" of a sensor's value object.
func temperature(v any) (float64, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return 0, fmt.Errorf("value %v is not an object", v)
	}
	f, ok := obj["temperature"].(float64)
	if !ok {
		return 0, fmt.Errorf("value %v has no numeric temperature", v)
	}
	return f, nil
}

func readMatches(ctx context.Context, q *qemutest.QMP, conn *halclient.Conn, m model, milli int64) error {
	if err := setTemp(ctx, q, m, milli); err != nil {
		return err
	}
	// QEMU's model answers with the temperature it holds, so one fresh
	// measurement (maxAgeMs 0) must see it.
	res, err := conn.Read(ctx, m.device, 0)
	if err != nil {
		return fmt.Errorf("hal/read %s: %w", m.device, err)
	}
	got, err := temperature(res.Value)
	if err != nil {
		return err
	}
	if want := float64(milli) / 1000; math.Abs(got-want) > 1e-9 {
		return fmt.Errorf("hal/read %s = %v °C, want %v", m.device, got, want)
	}
	return nil
}

func changeSeen(ctx context.Context, q *qemutest.QMP, conn *halclient.Conn, m model, milli int64) error {
	if err := setTemp(ctx, q, m, milli); err != nil {
		return err
	}
	want := float64(milli) / 1000
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second) // 20 poll intervals
	defer cancel()
	var last any
	for {
		select {
		case n, ok := <-conn.Notifications():
			if !ok {
				return fmt.Errorf("connection ended: %v", conn.Err())
			}
			if n.Method != openhal.NotifyValue {
				continue
			}
			var v openhal.ValueResult
			if err := json.Unmarshal(n.Params, &v); err != nil {
				return fmt.Errorf("decode hal/value: %w", err)
			}
			if v.Device != m.device {
				continue
			}
			last = v.Value
			if got, err := temperature(v.Value); err == nil && math.Abs(got-want) < 1e-9 {
				return nil
			}
		case <-ctx.Done():
			return fmt.Errorf("no hal/value %s with %v °C (last %v): %w", m.device, want, last, ctx.Err())
		}
	}
}

// missingAddress: lab.missing, a TMP105 configured at 0x4a where nothing
// answers, is served in state fault with the chip's error, and the
// gateway serves the other sensors meanwhile.
func missingAddress(ctx context.Context, conn *halclient.Conn) error {
	_, err := conn.Read(ctx, "lab.missing", 0)
	if err == nil || !strings.Contains(err.Error(), "0x4a") {
		return fmt.Errorf("hal/read lab.missing: %v, want the setup's error naming 0x4a", err)
	}
	devs, err := conn.Devices(ctx)
	if err != nil {
		return fmt.Errorf("hal/devices/list: %w", err)
	}
	for _, d := range devs {
		if d.ID == "lab.missing" && d.State != device.StateFault {
			return fmt.Errorf("lab.missing is %s, want fault", d.State)
		}
	}
	return serving(ctx, conn)
}

// missingExpander: lab.lamp, on pin GPA0 of an MCP23017 at 0x20 where
// nothing answers, is in fault with the chip's words (the kernel's NAK,
// through periph, recognised as one), its descriptor says where it is,
// a write fails with the same words, and the rest is served.
func missingExpander(ctx context.Context, conn *halclient.Conn, bus string) error {
	words := "ex1 (mcp23017 at 0x20 on " + bus + ") did not answer: check its wiring, power and address"
	devs, err := conn.Devices(ctx)
	if err != nil {
		return fmt.Errorf("hal/devices/list: %w", err)
	}
	found := false
	for _, d := range devs {
		if d.ID != "lab.lamp" {
			continue
		}
		found = true
		if d.State != device.StateFault || !strings.Contains(d.Fault, words) {
			return fmt.Errorf("lab.lamp is %s (%s), want fault with %q", d.State, d.Fault, words)
		}
		if d.Pin != "ex1:GPA0" || d.Chip != "mcp23017" || d.Address != "0x20" || d.Bus != bus || d.Channel == nil || *d.Channel != 0 {
			return fmt.Errorf("lab.lamp's descriptor: pin %q chip %q address %q bus %q channel %v", d.Pin, d.Chip, d.Address, d.Bus, d.Channel)
		}
	}
	if !found {
		return fmt.Errorf("no lab.lamp in hal/devices/list")
	}
	if _, err := conn.Write(ctx, "lab.lamp", true, "armhf system test"); err == nil || !strings.Contains(err.Error(), words) {
		return fmt.Errorf("hal/write lab.lamp: %v, want a fault with %q", err, words)
	}
	return serving(ctx, conn)
}

// serving checks that the gateway answers and its sensors read ok.
func serving(ctx context.Context, conn *halclient.Conn) error {
	if err := conn.Ping(ctx); err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	devs, err := conn.Devices(ctx)
	if err != nil {
		return fmt.Errorf("hal/devices/list: %w", err)
	}
	for _, d := range devs {
		if d.State != device.StateOK && d.ID != "lab.missing" && d.ID != "lab.lamp" && !boundLater[d.ID] {
			return fmt.Errorf("%s is %s (%s)", d.ID, d.State, d.Fault)
		}
	}
	if _, err := conn.Read(ctx, models[0].device, 0); err != nil {
		return fmt.Errorf("hal/read %s: %w", models[0].device, err)
	}
	return nil
}

// unplug removes model tmp1 with QMP device_del. QEMU 7.2's I2C bus
// cannot unplug ("Bus 'i2c' does not support hotplugging"): the check is
// then reported as SKIP with QEMU's answer, and check (c) stands for it.
// (Unbinding the I2C controller in the guest is no substitute: the kernel
// waits for every open /dev/i2c-N to be closed before it lets the adapter
// go, so the unbind blocks while the gateway holds the bus.)
// Where QEMU can, lab.temp2 must go to fault while lab.temp reads on.
func unplug(ctx context.Context, c *qemutest.Report, q *qemutest.QMP, conn *halclient.Conn) {
	const name = "(d) QMP device_del tmp1: lab.temp2 goes to fault, lab.temp reads on"
	_, err := q.Run(ctx, "device_del", map[string]any{"id": "tmp1"})
	if err != nil && strings.Contains(err.Error(), "does not support hotplugging") {
		c.Skip(name, err)
		return
	}
	c.Check(name, func() error {
		if err != nil {
			return err
		}
		return faultWhileOthersRead(ctx, conn)
	})
}

// faultWhileOthersRead waits for lab.temp2 to be in fault, then reads lab.temp.
func faultWhileOthersRead(ctx context.Context, conn *halclient.Conn) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	for {
		devs, err := conn.Devices(ctx)
		if err != nil {
			return err
		}
		for _, d := range devs {
			if d.ID == "lab.temp2" && d.State == device.StateFault {
				_, err := conn.Read(ctx, "lab.temp", 0)
				return err
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("lab.temp2 not in fault: %w", ctx.Err())
		case <-time.After(250 * time.Millisecond): // polling the list, as a client without events would
		}
	}
}
