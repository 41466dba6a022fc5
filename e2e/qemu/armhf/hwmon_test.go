package armhf_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/e2e/qemu/qemutest"
	"github.com/openhal/gateway/halclient"
)

// hwmonDevice reads QEMU's tmp105 model tmp2 (0x4c) through the kernel's
// own driver, lm75, and its hwmon interface (issue 30, point 3), as
// `driver: hwmon, name: tmp105`. The gateway starts before the driver
// is bound: the test binds it.
const hwmonDevice = "lab.hwmon"

var hwmonModel = model{"tmp2", hwmonDevice}

// hwmonYAML is lab.hwmon's entry in gatewayYAML's devices.
const hwmonYAML = `  lab.hwmon:
    kind: sensor
    driver: hwmon
    name: tmp105
    quantities: [temperature]
    interval: 500ms
`

// kernelHwmon runs the checks of a sensor read through the kernel: (e)
// lab.hwmon is in fault while the kernel has no hwmon device named
// tmp105, reads model tmp2's temperature once lm75 is bound to it
// (echo tmp105 0x4c > .../new_device) and follows a change; (f) gateway
// hardware, run in the guest, lists it with its quantity and the bus.
func kernelHwmon(ctx context.Context, c *qemutest.Report, g *qemutest.Guest, q *qemutest.QMP, conn *halclient.Conn, bus string) {
	adapter := strings.TrimPrefix(bus, "/dev/")
	c.Check("(e) "+hwmonDevice+" (driver hwmon, name tmp105) is in fault before the kernel's lm75 is bound",
		func() error { return unbound(ctx, conn) })
	c.Check("(e) echo tmp105 0x4c > /sys/bus/i2c/devices/"+adapter+"/new_device binds lm75; "+hwmonDevice+" reads model tmp2's 31250 m°C",
		func() error {
			if err := setTemp(ctx, q, hwmonModel, 31250); err != nil {
				return err
			}
			out, err := g.Shell(ctx, "echo tmp105 0x4c > /sys/bus/i2c/devices/"+adapter+"/new_device && cat /sys/class/hwmon/hwmon*/name")
			if err != nil {
				return err
			}
			if !strings.Contains(out, "tmp105") {
				return fmt.Errorf("no hwmon device named tmp105 after new_device: %q", out)
			}
			return readMatches(ctx, q, conn, hwmonModel, 31250)
		})
	c.Check("(e) QMP sets tmp2 to -5500 m°C, the client gets hal/value of "+hwmonDevice,
		func() error { return changeSeen(ctx, q, conn, hwmonModel, -5500) })
	c.Check("(f) gateway hardware in the guest lists hwmon tmp105 with its temperature in Cel, its entry, and "+bus+" of controller 1c160000.i2c",
		func() error { return listed(ctx, g, bus) })
}

// unbound: a read of lab.hwmon fails saying what it looked for, and the
// device is listed in fault.
func unbound(ctx context.Context, conn *halclient.Conn) error {
	_, err := conn.Read(ctx, hwmonDevice, 0)
	if err == nil || !strings.Contains(err.Error(), `find hwmon device "tmp105"`) {
		return fmt.Errorf("hal/read %s: %v, want the error of a hwmon device not found", hwmonDevice, err)
	}
	devs, err := conn.Devices(ctx)
	if err != nil {
		return err
	}
	for _, d := range devs {
		if d.ID == hwmonDevice && (d.State != device.StateFault || d.Bus != "hwmon" || d.Address != "tmp105") {
			return fmt.Errorf("%s is %s at bus %q address %q, want fault at hwmon tmp105", d.ID, d.State, d.Bus, d.Address)
		}
	}
	return nil
}

var hwmonRow = regexp.MustCompile(`(?m)^  tmp105 +0 +hwmon\d+ +temperature Cel$`)

func listed(ctx context.Context, g *qemutest.Guest, bus string) error {
	out, err := g.Shell(ctx, "/gateway hardware; echo exit=$?")
	if err != nil {
		return err
	}
	busRow := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(bus) + ` +Versatile I2C adapter +1c160000\.i2c$`)
	if !busRow.MatchString(out) {
		return fmt.Errorf("gateway hardware has no row %q:\n%s", busRow, out)
	}
	for _, want := range []string{"exit=0", "    driver: hwmon\n    name: tmp105\n    quantities: [temperature]\n"} {
		if !strings.Contains(out, want) {
			return fmt.Errorf("gateway hardware says no %q:\n%s", want, out)
		}
	}
	if !hwmonRow.MatchString(out) {
		return fmt.Errorf("gateway hardware has no row %q:\n%s", hwmonRow, out)
	}
	return nil
}
