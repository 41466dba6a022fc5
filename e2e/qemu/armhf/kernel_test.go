package armhf_test

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/e2e/qemu/qemutest"
	"github.com/openhal/gateway/halclient"
)

// Sensors read through the kernel's own drivers (issue 30, point 3): QEMU's
// tmp105 model tmp2 (0x4c) through lm75 and hwmon, as `driver: hwmon,
// name: tmp105`; its DPS310 barometer model (0x77) through dps310 and
// IIO, as `driver: iio, name: dps310`. The gateway starts before either
// driver is bound: the test binds them.
const (
	hwmonDevice = "lab.hwmon"
	iioDevice   = "lab.baro"
)

// boundLater are the devices in fault until the test binds their driver.
var boundLater = map[string]bool{hwmonDevice: true, iioDevice: true}

var hwmonModel = model{"tmp2", hwmonDevice}

// kernelYAML is their entries in gatewayYAML's devices.
const kernelYAML = `  lab.hwmon:
    kind: sensor
    driver: hwmon
    name: tmp105
    quantities: [temperature]
    interval: 500ms
  lab.baro:
    kind: sensor
    driver: iio
    name: dps310
    quantities: [pressure, temperature]
    interval: 500ms
`

// kernelDrivers runs the checks of the sensors read through the kernel:
// (e) lab.hwmon is in fault while the kernel has no hwmon device named
// tmp105, reads model tmp2's temperature once lm75 is bound to it (echo
// tmp105 0x4c > .../new_device) and follows a change; (f) lab.baro reads
// what the kernel's dps310 driver gives in its IIO files, in Pa and °C;
// (g) gateway hardware, run in the guest, lists both with their
// quantities, and the bus.
func kernelDrivers(ctx context.Context, c *qemutest.Report, g *qemutest.Guest, q *qemutest.QMP, conn *halclient.Conn, bus string) {
	adapter := strings.TrimPrefix(bus, "/dev/")
	newDevice := "/sys/bus/i2c/devices/" + adapter + "/new_device"
	c.Check("(e) "+hwmonDevice+" (driver hwmon, name tmp105) is in fault before the kernel's lm75 is bound",
		func() error { return unbound(ctx, conn, hwmonDevice, `find hwmon device "tmp105"`, "hwmon", "tmp105") })
	c.Check("(e) echo tmp105 0x4c > "+newDevice+" binds lm75; "+hwmonDevice+" reads model tmp2's 31250 m°C",
		func() error {
			if err := setTemp(ctx, q, hwmonModel, 31250); err != nil {
				return err
			}
			if err := bind(ctx, g, newDevice, "tmp105 0x4c", "/sys/class/hwmon/hwmon*/name", "tmp105"); err != nil {
				return err
			}
			return readMatches(ctx, q, conn, hwmonModel, 31250)
		})
	c.Check("(e) QMP sets tmp2 to -5500 m°C, the client gets hal/value of "+hwmonDevice,
		func() error { return changeSeen(ctx, q, conn, hwmonModel, -5500) })
	c.Check("(f) "+iioDevice+" (driver iio, name dps310) is in fault, then reads what the kernel's dps310 driver gives, in Pa and Cel",
		func() error {
			if err := unbound(ctx, conn, iioDevice, `find iio device "dps310"`, "iio", "dps310"); err != nil {
				return err
			}
			if err := bind(ctx, g, newDevice, "dps310 0x77", "/sys/bus/iio/devices/iio:device*/name", "dps310"); err != nil {
				return err
			}
			return sameAsKernel(ctx, g, conn)
		})
	c.Check("(g) gateway hardware in the guest lists hwmon tmp105 and iio dps310 with their quantities and entries, and "+bus+" of controller 1c160000.i2c",
		func() error { return listed(ctx, g, bus) })
}

// unbound: a read of id fails saying what it looked for, and the device
// is listed in fault, where the configuration says it sits.
func unbound(ctx context.Context, conn *halclient.Conn, id, want, bus, address string) error {
	_, err := conn.Read(ctx, id, 0)
	if err == nil || !strings.Contains(err.Error(), want) {
		return fmt.Errorf("hal/read %s: %v, want an error saying %s", id, err, want)
	}
	devs, err := conn.Devices(ctx)
	if err != nil {
		return err
	}
	for _, d := range devs {
		if d.ID == id && (d.State != device.StateFault || d.Bus != bus || d.Address != address) {
			return fmt.Errorf("%s is %s at bus %q address %q, want fault at %s %s", d.ID, d.State, d.Bus, d.Address, bus, address)
		}
	}
	return nil
}

// bind asks the kernel for a device on the bus (new_device) and checks
// that its driver has made the device named name.
func bind(ctx context.Context, g *qemutest.Guest, newDevice, what, names, name string) error {
	out, err := g.Shell(ctx, "echo "+what+" > "+newDevice+" && cat "+names)
	if err != nil {
		return err
	}
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `$`).MatchString(out) {
		return fmt.Errorf("no device named %s after %s > new_device: %q", name, what, out)
	}
	return nil
}

// sameAsKernel reads the dps310's IIO files in the guest and lab.baro
// through the gateway: the same pressure (the kernel's kPa as Pa) and
// temperature (m°C as °C). The driver measures anew at each read of its
// files, and its first measurements after the bind compensate the
// pressure with a temperature not yet settled (93510 Pa, then 92947:
// seen in CI), so the gateway's read is judged between two reads of the
// files that agree; up to 20 tries for the readings to settle.
func sameAsKernel(ctx context.Context, g *qemutest.Guest, conn *halclient.Conn) error {
	var last string
	for try := 0; try < 20; try++ {
		before, err := kernelBaro(ctx, g)
		if err != nil {
			return err
		}
		res, err := conn.Read(ctx, iioDevice, 0)
		if err != nil {
			return fmt.Errorf("hal/read %s: %w", iioDevice, err)
		}
		after, err := kernelBaro(ctx, g)
		if err != nil {
			return err
		}
		if before != after {
			last = fmt.Sprintf("%v then %v", before, after)
			continue
		}
		return sameBaro(res.Value, before)
	}
	return fmt.Errorf("the dps310's files gave a new reading at every read, 20 times (last: %s)", last)
}

// baroReading is the dps310's files: pressure in kPa, temperature in m°C.
type baroReading struct{ kPa, milli float64 }

func kernelBaro(ctx context.Context, g *qemutest.Guest) (baroReading, error) {
	out, err := g.Shell(ctx, `for d in /sys/bus/iio/devices/iio:device*; do [ "$(cat $d/name)" = dps310 ] && cat $d/in_pressure_input $d/in_temp_input; done`)
	if err != nil {
		return baroReading{}, err
	}
	f := strings.Fields(out)
	if len(f) != 2 {
		return baroReading{}, fmt.Errorf("the dps310's in_pressure_input and in_temp_input: %q", out)
	}
	kPa, err1 := strconv.ParseFloat(f[0], 64)
	milli, err2 := strconv.ParseFloat(f[1], 64)
	if err1 != nil || err2 != nil {
		return baroReading{}, fmt.Errorf("the dps310's files hold %q", out)
	}
	return baroReading{kPa, milli}, nil
}

// sameBaro compares the gateway's value of lab.baro with the kernel's.
func sameBaro(value any, k baroReading) error {
	v, ok := value.(map[string]any)
	if !ok {
		return fmt.Errorf("hal/read %s = %v, not an object", iioDevice, value)
	}
	for q, want := range map[string]float64{"pressure": k.kPa * 1000, "temperature": k.milli / 1000} {
		got, ok := v[q].(float64)
		if !ok || math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			return fmt.Errorf("hal/read %s: %s = %v, want %v (the kernel's files: %v kPa, %v m°C)", iioDevice, q, v[q], want, k.kPa, k.milli)
		}
	}
	if p := k.kPa * 1000; p < 30000 || p > 110000 {
		return fmt.Errorf("the dps310 gives %v Pa: not an air pressure on earth", p)
	}
	return nil
}

var (
	hwmonRow = regexp.MustCompile(`(?m)^  tmp105 +0 +hwmon\d+ +temperature Cel$`)
	iioRow   = regexp.MustCompile(`(?m)^  dps310 +0 +iio:device\d+ +pressure Pa, temperature Cel$`)
)

func listed(ctx context.Context, g *qemutest.Guest, bus string) error {
	out, err := g.Shell(ctx, "/gateway hardware; echo exit=$?")
	if err != nil {
		return err
	}
	busRow := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(bus) + ` +Versatile I2C adapter +1c160000\.i2c$`)
	for _, row := range []*regexp.Regexp{hwmonRow, iioRow, busRow} {
		if !row.MatchString(out) {
			return fmt.Errorf("gateway hardware has no row %q:\n%s", row, out)
		}
	}
	for _, want := range []string{"exit=0", "    driver: hwmon\n    name: tmp105\n    quantities: [temperature]\n",
		"    driver: iio\n    name: dps310\n    quantities: [pressure, temperature]\n"} {
		if !strings.Contains(out, want) {
			return fmt.Errorf("gateway hardware says no %q:\n%s", want, out)
		}
	}
	return nil
}
