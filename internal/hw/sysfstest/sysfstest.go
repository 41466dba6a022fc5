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

// Pi lays out the /sys of a Raspberry Pi 4 with dtoverlay=w1-gpio (two
// DS18B20, a DS18S20 and a DS2401 serial number on the bus),
// dtoverlay=dht11 (a DHT22 on GPIO4), an MCP3008 bound by the kernel's mcp320x, an ADXL345
// accelerometer (channels the gateway does not read) and its trigger, a
// TMP105 bound by lm75, the SoC's own sensors (cpu_thermal; rpi_volt,
// which has an alarm only), I2C bus 1 with i2c-dev, the HAT EEPROM's
// bus 0 without it, and spidev on SPI0's chip select 0.
func Pi(t testing.TB) *Tree {
	t.Helper()
	s := New(t)
	s.W1Master(1)
	s.W1Slave(1, "28-0316a2797dff", "72 01 4b 46 7f ff 0e 10 57 : crc=57 YES\n72 01 4b 46 7f ff 0e 10 57 t=23125\n")
	s.W1Slave(1, "28-0516a4a8b2ff", "90 01 4b 46 7f ff 10 10 9f : crc=9f YES\n90 01 4b 46 7f ff 10 10 9f t=25000\n")
	s.W1Slave(1, "10-000802b4a1c2", "32 00 4b 46 ff ff 02 10 f4 : crc=f4 YES\n32 00 4b 46 ff ff 02 10 f4 t=25062\n")
	s.W1Slave(1, "01-000012345678", "")
	// The dht11 driver names its device after its device-tree node (its
	// platform device's name): dht11@4 for the overlay on GPIO4.
	s.IIO(0, "platform/dht11@4", map[string]string{"name": "dht11@4\n", "in_temp_input": "23400\n", "in_humidityrelative_input": "45600\n"})
	s.IIO(1, "platform/soc/fe204000.spi/spi_master/spi0/spi0.1", map[string]string{"name": "mcp3008\n",
		"in_voltage0_raw": "512\n", "in_voltage1_raw": "1023\n", "in_voltage_scale": "3.222656250\n"})
	s.IIO(2, "platform/soc/fe804000.i2c/i2c-1/1-0053", map[string]string{"name": "adxl345\n", "in_accel_x_raw": "12\n", "in_accel_scale": "0.038\n"})
	s.IIOTrigger(0, "adxl345-dev2")
	s.Hwmon(0, "virtual/thermal/thermal_zone0", map[string]string{"name": "cpu_thermal\n", "temp1_input": "48312\n"})
	s.Hwmon(1, "platform/soc/soc:firmware/raspberrypi-hwmon", map[string]string{"name": "rpi_volt\n", "in0_lcrit_alarm": "0\n"})
	s.Hwmon(2, "platform/soc/fe804000.i2c/i2c-1/1-0048", map[string]string{"name": "tmp105\n", "temp1_input": "21500\n", "temp1_max": "80000\n"})
	s.I2C(1, "platform/soc/fe804000.i2c", "bcm2835 (i2c@7e804000)", true)
	s.I2CClient(1, 0x48, "platform/soc/fe804000.i2c", "tmp105")
	s.I2C(0, "platform/soc/fe205000.i2c", "bcm2835 (i2c@7e205000)", false)
	s.SPIDev(0, 0, "platform/soc/fe204000.spi/spi_master/spi0")
	return s
}
