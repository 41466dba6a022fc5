//go:build linux

package hardware

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"periph.io/x/conn/v3/spi"
	"periph.io/x/conn/v3/spi/spireg"
	"periph.io/x/host/v3/sysfs"
)

// SPIPort opens an SPI device file through periph: the port driverreg.Init's
// sysfs-spi driver registered (spireg), or, for a device file that
// appeared since (SPI enabled, an overlay loaded at run time), periph's
// sysfs-spi driver directly, which driverreg.Init only lists. A file that is
// not there says what enables it.
func (*Periph) SPIPort(dev string) (spi.PortCloser, error) {
	for _, r := range spireg.All() {
		if r.Name == dev {
			return spireg.Open(dev)
		}
	}
	bus, cs, ok := spidevNumbers(dev)
	if !ok {
		return nil, fmt.Errorf("%q is not an SPI device file (/dev/spidevB.C)", dev)
	}
	if _, err := os.Stat(dev); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no %s: is SPI enabled (dtparam=spi=on in config.txt for SPI0, dtoverlay=spi1-1cs for SPI1) and the machine rebooted since?", dev)
	}
	return sysfs.NewSPI(bus, cs)
}

// spidevNumbers reads /dev/spidevB.C.
func spidevNumbers(dev string) (bus, cs int, ok bool) {
	b, c, found := strings.Cut(strings.TrimPrefix(dev, "/dev/spidev"), ".")
	bus, err1 := strconv.Atoi(b)
	cs, err2 := strconv.Atoi(c)
	return bus, cs, found && strings.HasPrefix(dev, "/dev/spidev") && err1 == nil && err2 == nil && bus >= 0 && cs >= 0
}
