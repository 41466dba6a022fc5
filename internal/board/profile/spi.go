package profile

import "fmt"

// SPI is an SPI controller the board brings out to its header. Each of
// its chip selects is a device file, /dev/spidev<Bus>.<chip select>,
// once the kernel's spidev driver binds it (the Enable line).
type SPI struct {
	Name string // "spi0"
	// Bus is the N of /dev/spidevN.M: the controller's spi alias in the
	// device tree.
	Bus              int
	SCLK, MOSI, MISO int // BCM lines
	// CS are the chip-select lines by chip select: /dev/spidevN.M is
	// selected by CS[M]. The kernel drives them as GPIOs (cs-gpios).
	CS []int
	// EnableCS is how many of CS the Enable line gives the kernel
	// whichever chip selects the devices use: dtparam=spi=on takes both
	// of SPI0's. Past it, a chip select's line is taken only when a
	// device uses it (spi1-2cs for /dev/spidev1.1...).
	EnableCS   int
	Controller string // platform device name; empty when unknown
	Enable     string // the config.txt line that binds spidev to it
	Note       string
}

// Device is the device file of chip select cs: "/dev/spidev0.1".
func (s SPI) Device(cs int) string { return fmt.Sprintf("/dev/spidev%d.%d", s.Bus, cs) }

// Lines are the BCM lines the kernel holds once devices use chip selects
// 0 to maxCS of s: the clock, the data lines, and the chip selects the
// Enable line or those devices take; each with its function's name.
func (s SPI) Lines(maxCS int) map[int]string {
	up := max(maxCS+1, s.EnableCS)
	lines := map[int]string{s.SCLK: "SCLK", s.MOSI: "MOSI", s.MISO: "MISO"}
	for cs, line := range s.CS {
		if cs < up {
			lines[line] = fmt.Sprintf("CE%d", cs)
		}
	}
	return lines
}

// bcmSPI are the BCM283x/2711 SPI controllers on the header, from the
// BCM2835 peripherals datasheet's alternate-function table (section
// 6.2), the same on the BCM2837 and BCM2711: SPI0 at ALT0 (GPIO7 CE1,
// GPIO8 CE0, GPIO9 MISO, GPIO10 MOSI, GPIO11 SCLK) and the auxiliary
// SPI1 at ALT4 (GPIO16 CE2, GPIO17 CE1, GPIO18 CE0, GPIO19 MISO, GPIO20
// MOSI, GPIO21 SCLK). The chip selects are GPIOs in Raspberry Pi's
// device trees (cs-gpios), on the same lines. base is the platform
// device prefix, "3f" or "fe". The BCM2711's SPI3 to SPI6 are left out:
// their overlays choose the chip-select lines.
func bcmSPI(base string) []SPI {
	return []SPI{
		{
			Name: "spi0", Bus: 0, SCLK: 11, MOSI: 10, MISO: 9, CS: []int{8, 7}, EnableCS: 2,
			Controller: base + "204000.spi", Enable: "dtparam=spi=on",
			Note: "pins 23 (SCLK), 19 (MOSI), 21 (MISO), 24 (CE0) and 26 (CE1): dtparam=spi=on gives " +
				"/dev/spidev0.0 and /dev/spidev0.1 and takes both chip-select lines",
		},
		{
			Name: "spi1", Bus: 1, SCLK: 21, MOSI: 20, MISO: 19, CS: []int{18, 17, 16},
			Controller: base + "215080.spi", Enable: "dtoverlay=spi1-1cs (or spi1-2cs, spi1-3cs for CE1, CE2)",
			Note: "the auxiliary SPI: pins 40 (SCLK), 38 (MOSI), 35 (MISO), 12 (CE0), 11 (CE1), 36 (CE2); " +
				"its CE0 is GPIO18, the PWM0 line",
		},
	}
}

// rp1SPI is the Raspberry Pi 5's header SPI: RP1's SPI0 on the same lines
// as the older boards' (rp1.dtsi's rp1_spi0_gpio9 and rp1_spi0_cs_gpio7
// groups; bcm2712-rpi.dtsi gives it cs-gpios 8 and 7 and dtparam=spi).
// RP1's other SPI controllers are left out: their overlays choose their
// lines.
func rp1SPI() []SPI {
	return []SPI{{
		Name: "spi0", Bus: 0, SCLK: 11, MOSI: 10, MISO: 9, CS: []int{8, 7}, EnableCS: 2,
		Enable: "dtparam=spi=on",
		Note: "RP1 SPI0 on pins 23 (SCLK), 19 (MOSI), 21 (MISO), 24 (CE0) and 26 (CE1): dtparam=spi=on gives " +
			"/dev/spidev0.0 and /dev/spidev0.1 and takes both chip-select lines",
	}}
}
