package hardware

// Sensors the kernel reads (issue 30, points 2 and 3): 1-Wire
// thermometers through w1_therm and IIO or hwmon devices, under the
// Host's sysfs root. Nothing is opened at build: each read opens its
// files, so a sensor the kernel has not listed yet (a 1-Wire slave not
// enumerated, a DHT not bound) is a device in fault until it is.

import (
	"fmt"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/board"
	"github.com/openhal/gateway/internal/hw/kernelsensor"
	"github.com/openhal/gateway/internal/hw/sensor"
	"github.com/openhal/gateway/internal/hw/w1therm"
)

// kernelSensor makes the device of a 1-Wire or kernel sensor, and
// reports whether dc was one.
func (b *builder) kernelSensor(desc device.Descriptor, dc board.DeviceConfig) (device.Device, bool) {
	opts := sensor.PollOpts{Interval: dc.SensorInterval(), Thresholds: dc.Thresholds}
	if dc.W1Sensor() {
		// w1therm.New refuses only an id the validator has refused.
		root, id := w1therm.Under(b.host.SysRoot()), dc.W1ID
		s := sensor.Defer(w1therm.Quantities(), func() (sensor.Sensor, error) { return w1therm.New(root, id) })
		opts.Deadline = w1Deadline(b.cfg)
		return sensor.NewDevice(desc, s, opts, b.clk), true
	}
	i, ok := dc.KernelInterface()
	if !ok {
		return nil, false
	}
	root, name, index := i.Under(b.host.SysRoot()), dc.Name, dc.KernelIndex()
	quantities := dc.KernelQuantities()
	var names []string
	for _, q := range quantities {
		names = append(names, q.Name)
	}
	// Found again after any failed read: a device unbound and bound
	// again may come back as another iio:deviceN or hwmonN.
	s := sensor.Defer(quantities, func() (sensor.Sensor, error) {
		d, err := kernelsensor.Open(i, root, name, index)
		if err != nil {
			return nil, err
		}
		sel, err := d.Select(names)
		if err != nil {
			return nil, fmt.Errorf("%s %q index %d: %w", i, name, index, err)
		}
		return sel, nil
	})
	return sensor.NewDevice(desc, s, opts, b.clk), true
}

// w1Deadline bounds one read of a 1-Wire thermometer. w1_therm holds its
// bus for the whole conversion (it sleeps the conversion time with the
// bus mutex held), so a read may wait for every other thermometer's
// conversion before its own: a deadline of one conversion would call a
// busy bus stuck. Every thermometer of the file is counted, as if all
// were on one bus, as they are with one w1-gpio overlay.
func w1Deadline(cfg *board.Config) time.Duration {
	n := 0
	for _, dc := range cfg.Devices {
		if dc.W1Sensor() {
			n++
		}
	}
	return time.Duration(n)*w1therm.ConversionTime + 2*time.Second
}
