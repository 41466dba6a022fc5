// Package inventory lists what the kernel of this machine says is
// there for the gateway to read — 1-Wire thermometers, IIO and hwmon
// devices with the quantities they give, I2C buses and SPI device files —
// and writes a configuration entry for each sensor, for `gateway
// hardware`. It reads a sysfs tree only ("/sys", or a test's), as the
// kernel documents it: the bus and class directories
// (Documentation/ABI/testing/sysfs-bus-iio, sysfs-class-hwmon,
// Documentation/w1/w1-generic.rst, Documentation/i2c/dev-interface.rst,
// Documentation/spi/spidev.rst); a device file is named as the kernel
// names it in /dev.
package inventory

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/openhal/gateway/internal/board"
	"github.com/openhal/gateway/internal/hw/kernelsensor"
	"github.com/openhal/gateway/internal/hw/w1therm"
)

// Inventory is what Scan found.
type Inventory struct {
	// W1Masters are the 1-Wire bus masters (w1_bus_master1); none
	// without the w1-gpio overlay.
	W1Masters []string   `json:"w1Masters"`
	W1        []W1Device `json:"w1"`
	IIO       []Kernel   `json:"iio"`
	Hwmon     []Kernel   `json:"hwmon"`
	I2C       []I2CBus   `json:"i2c"`
	// SPI are the spidev device files (/dev/spidev0.0).
	SPI []string `json:"spi"`
}

// W1Device is a device on a 1-Wire bus.
type W1Device struct {
	ID     string `json:"id"`     // 28-0316a2797dff
	Family string `json:"family"` // 28
	Chip   string `json:"chip"`   // DS18B20; "" for a family w1_therm does not serve
	// Driver is the gateway's driver for it (ds18b20); "" for none.
	Driver string `json:"driver"`
	// Config is its entry for the configuration file; "" without a
	// driver.
	Config string `json:"config"`
}

// Kernel is an IIO or hwmon device.
type Kernel struct {
	Name  string `json:"name"`  // its name file: dht11
	Index int    `json:"index"` // among those of its name
	Dir   string `json:"dir"`   // iio:device0, hwmon1
	// Quantities are what the gateway reads of it, as a configuration
	// names them.
	Quantities []Quantity `json:"quantities"`
	// Problem says why the gateway reads nothing of it; "" when it does.
	Problem string `json:"problem,omitempty"`
	// Config is its entry for the configuration file; "" with a
	// problem.
	Config string `json:"config"`
}

// Quantity is one quantity a device gives, in its SenML unit.
type Quantity struct {
	Name string `json:"name"`
	Unit string `json:"unit"`
}

// I2CBus is an I2C adapter.
type I2CBus struct {
	Number int    `json:"number"`
	Name   string `json:"name"` // the adapter's: bcm2835 (i2c@7e804000)
	// Controller is the device the adapter belongs to (fe804000.i2c):
	// adapters of one driver often have one name.
	Controller string `json:"controller"`
	// Device is its device file, /dev/i2c-1; "" when i2c-dev has not
	// made one (the module is not loaded).
	Device string `json:"device"`
}

// Scan lists what the sysfs tree at sys holds. A part of it the kernel
// has not made (no 1-Wire bus, no IIO device) is an empty list; sys
// itself must be a sysfs tree.
func Scan(sys string) (*Inventory, error) {
	if fi, err := os.Stat(filepath.Join(sys, "bus")); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a sysfs tree: it has no bus directory", sys)
	}
	// Empty lists, not null, for scripts.
	inv := &Inventory{W1Masters: []string{}, W1: []W1Device{}, IIO: []Kernel{}, Hwmon: []Kernel{}, I2C: []I2CBus{}, SPI: []string{}}
	var err error
	masters, w1, err := scanW1(w1therm.Under(sys))
	if err != nil {
		return nil, err
	}
	iio, err := scanKernel(kernelsensor.IIO, sys)
	if err != nil {
		return nil, err
	}
	hwmon, err := scanKernel(kernelsensor.Hwmon, sys)
	if err != nil {
		return nil, err
	}
	i2c, err := scanI2C(sys)
	if err != nil {
		return nil, err
	}
	spi, err := scanSPI(sys)
	if err != nil {
		return nil, err
	}
	inv.W1Masters = append(inv.W1Masters, masters...)
	inv.W1 = append(inv.W1, w1...)
	inv.IIO = append(inv.IIO, iio...)
	inv.Hwmon = append(inv.Hwmon, hwmon...)
	inv.I2C = append(inv.I2C, i2c...)
	inv.SPI = append(inv.SPI, spi...)
	inv.configs()
	return inv, nil
}

// readDir lists dir, or nothing when the kernel has not made it.
func readDir(dir string) ([]fs.DirEntry, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	return entries, nil
}

var w1Slave = regexp.MustCompile(`^([0-9a-f]{2})-[0-9a-f]{12}$`)

func scanW1(dir string) (masters []string, devs []W1Device, err error) {
	entries, err := readDir(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		m := w1Slave.FindStringSubmatch(e.Name())
		switch {
		case strings.HasPrefix(e.Name(), "w1_bus_master"):
			masters = append(masters, e.Name())
		case m != nil:
			devs = append(devs, W1Device{ID: e.Name(), Family: m[1], Chip: w1therm.Chip(m[1]), Driver: board.W1Driver(e.Name())})
		}
	}
	return masters, devs, nil
}

func scanKernel(i kernelsensor.Interface, sys string) ([]Kernel, error) {
	root := i.Under(sys)
	if _, err := os.Stat(root); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	found, err := kernelsensor.List(i, root)
	if err != nil {
		return nil, err
	}
	var out []Kernel
	for _, f := range found {
		k := Kernel{Name: f.Name, Index: f.Index, Dir: filepath.Base(f.Dir), Quantities: []Quantity{}}
		chs, err := kernelsensor.Channels(i, f.Dir)
		if err != nil {
			k.Problem = "no channel the gateway reads (it reads temperature, humidity, pressure, voltage, current, illuminance, power and fan)"
		}
		for _, ch := range chs {
			k.Quantities = append(k.Quantities, Quantity{ch.Quantity.Name, ch.Quantity.Unit})
		}
		out = append(out, k)
	}
	return out, nil
}

func scanI2C(sys string) ([]I2CBus, error) {
	entries, err := readDir(filepath.Join(sys, "bus", "i2c", "devices"))
	if err != nil {
		return nil, err
	}
	var out []I2CBus
	for _, e := range entries {
		n, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "i2c-"))
		if err != nil || !strings.HasPrefix(e.Name(), "i2c-") {
			continue // a client of a kernel driver (1-0048)
		}
		b := I2CBus{Number: n}
		dir := filepath.Join(sys, "bus", "i2c", "devices", e.Name())
		if name, err := os.ReadFile(filepath.Join(dir, "name")); err == nil {
			b.Name = strings.TrimSpace(string(name))
		}
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			b.Controller = filepath.Base(filepath.Dir(real))
		}
		if _, err := os.Stat(filepath.Join(sys, "class", "i2c-dev", e.Name())); err == nil {
			b.Device = "/dev/" + e.Name()
		}
		out = append(out, b)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Number < out[b].Number })
	return out, nil
}

func scanSPI(sys string) ([]string, error) {
	entries, err := readDir(filepath.Join(sys, "class", "spidev"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		out = append(out, "/dev/"+e.Name())
	}
	return out, nil
}
