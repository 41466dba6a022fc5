package board

// Sensors the kernel reads for the gateway (issue 30, points 2 and 3):
// 1-Wire thermometers through its w1 and w1_therm drivers, found by
// their 1-Wire id, and any sensor with a kernel driver through IIO or
// hwmon, found by the kernel's name for it. What the file says of them
// is checked here, against the ids and quantities the kernel uses; what
// is on this machine is not looked at: a file may be written for
// another (`gateway hardware` lists what is here).

import (
	"fmt"
	"slices"
	"strings"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/hw/kernelsensor"
	"github.com/openhal/gateway/internal/hw/sensor"
	"github.com/openhal/gateway/internal/hw/w1therm"
)

// w1Families are the 1-Wire thermometers' drivers, each with the family
// code its ids start with (Documentation/w1/slaves/w1_therm.rst).
var w1Families = map[string]string{"ds18b20": "28", "ds18s20": "10", "ds1822": "22", "ds1825": "3b"}

// w1DriverNames lists them in the order messages name them.
var w1DriverNames = []string{"ds18b20", "ds18s20", "ds1822", "ds1825"}

// kernelInterfaces are the drivers that read a device of the kernel's.
var kernelInterfaces = map[string]kernelsensor.Interface{"iio": kernelsensor.IIO, "hwmon": kernelsensor.Hwmon}

// The sensor fields each takes (beyond commonFields).
var (
	w1Fields     = []string{"driver", "w1Id", "interval", "thresholds"}
	kernelFields = []string{"driver", "name", "index", "quantities", "interval", "thresholds"}
)

// W1Driver names the gateway's driver for a 1-Wire id's family: ds18b20
// for 28-0316a2797dff; "" when it has none.
func W1Driver(id string) string {
	family, _, _ := strings.Cut(id, "-")
	for _, d := range w1DriverNames {
		if w1Families[d] == family {
			return d
		}
	}
	return ""
}

// W1Sensor reports whether dc is a 1-Wire thermometer (driver ds18b20,
// ds18s20, ds1822 or ds1825).
func (dc DeviceConfig) W1Sensor() bool {
	_, ok := w1Families[dc.Driver]
	return ok
}

// KernelInterface is the interface an iio or hwmon sensor is read
// through; false for other drivers.
func (dc DeviceConfig) KernelInterface() (kernelsensor.Interface, bool) {
	i, ok := kernelInterfaces[dc.Driver]
	return i, ok
}

// KernelIndex is which of the kernel's devices of that name an iio or
// hwmon sensor reads: 0, the lowest numbered, unless the file says.
func (dc DeviceConfig) KernelIndex() int {
	if dc.Index == nil {
		return 0
	}
	return *dc.Index
}

// KernelQuantities are what a 1-Wire or kernel sensor measures, with
// their units: a thermometer's temperature; the quantities an iio or
// hwmon sensor lists, those the interface knows, each once. Nil for
// other drivers, and when none of the quantities listed is known.
func (dc DeviceConfig) KernelQuantities() []sensor.Quantity {
	if dc.W1Sensor() {
		return w1therm.Quantities()
	}
	i, ok := dc.KernelInterface()
	if !ok {
		return nil
	}
	var out []sensor.Quantity
	for _, name := range dc.Quantities {
		q, known := i.Quantity(name)
		if known && !slices.Contains(out, q) {
			out = append(out, q)
		}
	}
	return out
}

// sensorDriver is what the configuration knows of dc's sensor driver:
// an I2C driver's entry of drivers, or one made of a 1-Wire or kernel
// sensor's quantities.
func sensorDriver(dc DeviceConfig) (driver, bool) {
	if d, ok := drivers[dc.Driver]; ok {
		return d, true
	}
	qs := dc.KernelQuantities()
	if qs == nil {
		return driver{}, false
	}
	return driver{quantities: fixed(qs...)}, true
}

// kernelPlace says in d where a 1-Wire or kernel sensor sits: bus w1
// and its id, or the interface and the kernel's name for the device.
func (dc DeviceConfig) kernelPlace(d *device.Descriptor) {
	switch _, kernel := dc.KernelInterface(); {
	case dc.W1Sensor():
		d.Bus, d.Address, d.Chip = "w1", dc.W1ID, dc.Driver
	case kernel:
		d.Bus, d.Address, d.Chip = dc.Driver, dc.Name, dc.Name
	}
}

// kernelSensor checks a 1-Wire or kernel sensor and reports whether dc
// was one. For an I2C driver it refuses these sensors' fields, and lets
// sensorDevice check the rest.
func (v *validator) kernelSensor(path, id string, dc DeviceConfig, u *usage) bool {
	family, w1 := w1Families[dc.Driver]
	iface, kernel := kernelInterfaces[dc.Driver]
	switch {
	case w1:
		v.onlyFields(path, dc, w1Fields, "it finds the sensor by its w1Id")
		v.w1Sensor(path, id, dc, family, u)
	case kernel:
		v.onlyFields(path, dc, kernelFields, "it finds the kernel's device by its name")
		v.kernelDevice(path, dc, iface)
		if dc.Interval != nil {
			v.duration(path+".interval", *dc.Interval)
		}
	default:
		if _, i2c := drivers[dc.Driver]; i2c {
			v.notKernelFields(path, dc)
		}
		return false
	}
	if drv, ok := sensorDriver(dc); ok {
		v.thresholds(path+".thresholds", dc, drv)
	}
	return true
}

// onlyFields refuses the sensor fields of other drivers.
func (v *validator) onlyFields(path string, dc DeviceConfig, takes []string, how string) {
	for _, f := range dc.setFields() {
		if slices.Contains(kindFields[device.KindSensor], f) && !slices.Contains(takes, f) {
			v.add(path+"."+f, "the %s driver takes no %s: %s (its fields: %s)", dc.Driver, f, how, strings.Join(takes, ", "))
		}
	}
}

// notKernelFields refuses the 1-Wire and kernel sensors' fields on an
// I2C driver.
func (v *validator) notKernelFields(path string, dc DeviceConfig) {
	for _, f := range dc.setFields() {
		switch {
		case f == "w1Id":
			v.add(path+"."+f, "the %s driver takes no w1Id (w1Id is for the 1-Wire drivers %s)", dc.Driver, listWords(w1DriverNames))
		case slices.Contains(kernelFields, f) && !slices.Contains(w1Fields, f):
			v.add(path+"."+f, "the %s driver takes no %s (%s is for the kernel's iio and hwmon devices)", dc.Driver, f, f)
		}
	}
}

// w1Sensor checks a 1-Wire thermometer's id against its driver, claims
// it, and holds its interval to the conversion time.
func (v *validator) w1Sensor(path, id string, dc DeviceConfig, family string, u *usage) {
	chip := w1therm.Chip(family)
	err := w1therm.CheckID(dc.W1ID)
	switch {
	case dc.W1ID == "":
		v.add(path+".w1Id", "required (the %s's 1-Wire id, as the kernel lists it under /sys/bus/w1/devices: %s-0316a2797dff; gateway hardware lists them)", chip, family)
	case err != nil:
		v.add(path+".w1Id", "%v", err)
	case !strings.HasPrefix(dc.W1ID, family+"-"):
		have, _, _ := strings.Cut(dc.W1ID, "-")
		fix := "the gateway has no driver for it"
		if d := W1Driver(dc.W1ID); d != "" {
			fix = "set driver: " + d
		}
		v.add(path+".w1Id", "%s is a %s (family %s), not a %s (family %s): %s", dc.W1ID, w1therm.Chip(have), have, chip, family, fix)
	}
	if err == nil {
		if u.w1 == nil {
			u.w1 = map[string]string{}
		}
		if other, dup := u.w1[dc.W1ID]; dup {
			v.add(path+".w1Id", "%s is also used by devices.%s", dc.W1ID, other)
		} else {
			u.w1[dc.W1ID] = id
		}
	}
	switch iv := dc.Interval; {
	case iv == nil:
	case *iv <= 0:
		v.duration(path+".interval", *iv)
	case *iv < w1therm.ConversionTime:
		v.add(path+".interval", "%v is shorter than the %s's conversion time (%v at 12 bits), which each read waits for: want at least %v",
			*iv, chip, w1therm.ConversionTime, w1therm.ConversionTime)
	}
}

// kernelDevice checks the name, index and quantities of an iio or hwmon
// sensor.
func (v *validator) kernelDevice(path string, dc DeviceConfig, i kernelsensor.Interface) {
	switch {
	case dc.Name == "":
		v.add(path+".name", "required (the kernel's name for the device, its name file under %s: dht11, lm75; gateway hardware lists them)", i.Root())
	case strings.ContainsAny(dc.Name, "/\n") || strings.TrimSpace(dc.Name) != dc.Name:
		v.add(path+".name", "%q is not a kernel device name: want what its name file holds, such as dht11 (no '/', no spaces around it)", dc.Name)
	}
	if dc.Index != nil && *dc.Index < 0 {
		v.add(path+".index", "must not be negative, got %d (0 is the first device of that name)", *dc.Index)
	}
	var known []string
	for _, q := range i.Quantities() {
		known = append(known, q.Name)
	}
	if len(dc.Quantities) == 0 {
		v.add(path+".quantities", "required: what to read of the device, of %s (gateway hardware lists what each device gives)", listWords(known))
	}
	seen := map[string]bool{}
	for n, q := range dc.Quantities {
		p := fmt.Sprintf("%s.quantities[%d]", path, n)
		_, ok := i.Quantity(q)
		switch {
		case !ok:
			v.add(p, "%s gives no %q: want %s, followed by the kernel's channel number when the device has several of one (voltage1)", i, q, listWords(known))
		case seen[q]:
			v.add(p, "%q listed twice", q)
		}
		seen[q] = true
	}
}
