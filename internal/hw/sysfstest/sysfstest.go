// Package sysfstest lays out sysfs trees in a test's directory as the
// kernel lays out /sys, for the readers of 1-Wire, IIO and hwmon sensors
// and the listing of buses: each device a directory under devices/ (its
// parent's path, as the kernel nests them), and the bus and class
// directories symbolic links to it (Documentation/ABI/testing/
// sysfs-bus-iio, sysfs-class-hwmon, Documentation/w1/w1-generic.rst,
// Documentation/i2c/dev-interface.rst, Documentation/spi/spidev.rst).
package sysfstest

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// Tree is a sysfs tree; Root is what stands for /sys.
type Tree struct {
	Root string
	t    testing.TB
}

// New returns an empty tree in a temporary directory of t's.
func New(t testing.TB) *Tree {
	t.Helper()
	return &Tree{Root: t.TempDir(), t: t}
}

// W1Master adds the 1-Wire bus master w1_bus_masterN (w1-gpio's), at
// devices/w1_bus_masterN, listed in bus/w1/devices.
func (s *Tree) W1Master(n int) {
	s.t.Helper()
	name := "w1_bus_master" + strconv.Itoa(n)
	s.device(filepath.Join("devices", name), map[string]string{"w1_master_slave_count": "0"})
	s.link(filepath.Join("bus", "w1", "devices", name), filepath.Join("devices", name))
}

// W1Slave adds the slave id on master n, its w1_slave holding text
// (the two lines of w1_therm, or "" for a device that is no
// thermometer: then it has no w1_slave), listed in bus/w1/devices.
func (s *Tree) W1Slave(master int, id, text string) {
	s.t.Helper()
	dir := filepath.Join("devices", "w1_bus_master"+strconv.Itoa(master), id)
	files := map[string]string{"name": id + "\n"}
	if text != "" {
		files["w1_slave"] = text
	}
	s.device(dir, files)
	s.link(filepath.Join("bus", "w1", "devices", id), dir)
}

// RemoveW1Slave takes the slave id off master n, as the kernel does when
// its search no longer finds it.
func (s *Tree) RemoveW1Slave(master int, id string) {
	s.t.Helper()
	s.remove(filepath.Join("bus", "w1", "devices", id))
	s.remove(filepath.Join("devices", "w1_bus_master"+strconv.Itoa(master), id))
}

// IIO adds iio:deviceN as a child of parent (a path under devices/,
// "platform/dht11@4"), with files (name, in_temp_input...), listed in
// bus/iio/devices.
func (s *Tree) IIO(n int, parent string, files map[string]string) {
	s.t.Helper()
	name := "iio:device" + strconv.Itoa(n)
	dir := filepath.Join("devices", parent, name)
	s.device(dir, files)
	s.link(filepath.Join("bus", "iio", "devices", name), dir)
}

// IIOTrigger adds triggerN, which has a name file as devices do.
func (s *Tree) IIOTrigger(n int, name string) {
	s.t.Helper()
	dir := filepath.Join("devices", "trigger"+strconv.Itoa(n))
	s.device(dir, map[string]string{"name": name + "\n"})
	s.link(filepath.Join("bus", "iio", "devices", "trigger"+strconv.Itoa(n)), dir)
}

// Hwmon adds hwmonN under parent's hwmon directory, with files (name,
// temp1_input...), listed in class/hwmon.
func (s *Tree) Hwmon(n int, parent string, files map[string]string) {
	s.t.Helper()
	name := "hwmon" + strconv.Itoa(n)
	dir := filepath.Join("devices", parent, "hwmon", name)
	s.device(dir, files)
	s.link(filepath.Join("class", "hwmon", name), dir)
}

// RemoveHwmon unbinds hwmonN of parent.
func (s *Tree) RemoveHwmon(n int, parent string) {
	s.t.Helper()
	name := "hwmon" + strconv.Itoa(n)
	s.remove(filepath.Join("class", "hwmon", name))
	s.remove(filepath.Join("devices", parent, "hwmon", name))
}

// I2C adds the adapter i2c-N under parent with its name, listed in
// bus/i2c/devices; with dev, i2c-dev's class device too (what gives it
// /dev/i2c-N).
func (s *Tree) I2C(n int, parent, name string, dev bool) {
	s.t.Helper()
	bus := "i2c-" + strconv.Itoa(n)
	dir := filepath.Join("devices", parent, bus)
	s.device(dir, map[string]string{"name": name + "\n"})
	s.link(filepath.Join("bus", "i2c", "devices", bus), dir)
	if dev {
		cdev := filepath.Join(dir, "i2c-dev", bus)
		s.device(cdev, map[string]string{"dev": "89:" + strconv.Itoa(n) + "\n", "name": name + "\n"})
		s.link(filepath.Join("class", "i2c-dev", bus), cdev)
	}
}

// I2CClient adds the client of a kernel driver at addr on bus n (a
// directory "1-0048" beside the adapters in bus/i2c/devices).
func (s *Tree) I2CClient(n, addr int, parent, name string) {
	s.t.Helper()
	client := strconv.Itoa(n) + "-" + hex4(addr)
	dir := filepath.Join("devices", parent, "i2c-"+strconv.Itoa(n), client)
	s.device(dir, map[string]string{"name": name + "\n"})
	s.link(filepath.Join("bus", "i2c", "devices", client), dir)
}

// SPIDev adds spidevB.C, the device file of chip select c on bus b, as
// spidev's class lists it.
func (s *Tree) SPIDev(b, c int, parent string) {
	s.t.Helper()
	name := "spidev" + strconv.Itoa(b) + "." + strconv.Itoa(c)
	dir := filepath.Join("devices", parent, "spi"+strconv.Itoa(b)+"."+strconv.Itoa(c), "spidev", name)
	s.device(dir, map[string]string{"dev": "153:" + strconv.Itoa(c) + "\n"})
	s.link(filepath.Join("class", "spidev", name), dir)
}

// Write replaces the file at rel (a path under Root, through links as
// the tree has them) with text.
func (s *Tree) Write(rel, text string) {
	s.t.Helper()
	if err := os.WriteFile(filepath.Join(s.Root, rel), []byte(text), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

func (s *Tree) device(dir string, files map[string]string) {
	s.t.Helper()
	if err := os.MkdirAll(filepath.Join(s.Root, dir), 0o755); err != nil {
		s.t.Fatal(err)
	}
	for f, text := range files {
		if err := os.WriteFile(filepath.Join(s.Root, dir, f), []byte(text), 0o644); err != nil {
			s.t.Fatal(err)
		}
	}
}

// link makes at the symbolic link to target, relative as sysfs's are.
func (s *Tree) link(at, target string) {
	s.t.Helper()
	if err := os.MkdirAll(filepath.Join(s.Root, filepath.Dir(at)), 0o755); err != nil {
		s.t.Fatal(err)
	}
	rel, err := filepath.Rel(filepath.Dir(at), target)
	if err != nil {
		s.t.Fatal(err)
	}
	if err := os.Symlink(rel, filepath.Join(s.Root, at)); err != nil {
		s.t.Fatal(err)
	}
}

func (s *Tree) remove(rel string) {
	s.t.Helper()
	if err := os.RemoveAll(filepath.Join(s.Root, rel)); err != nil {
		s.t.Fatal(err)
	}
}

func hex4(a int) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[a>>12&15], digits[a>>8&15], digits[a>>4&15], digits[a&15]})
}
