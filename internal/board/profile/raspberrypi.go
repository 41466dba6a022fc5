package profile

import "fmt"

// Facts below come from the Raspberry Pi documentation (GPIO header,
// UART and config.txt pages), the Raspberry Pi kernel's device trees
// (raspberrypi/linux: bcm2710-rpi-3-b.dts, bcm2710-rpi-zero-2-w.dts,
// bcm2711-rpi-4-b.dts, bcm2712-rpi-5-b.dts, rp1.dtsi) and gpiodetect output
// reported from real boards. Where they depend on the kernel or on
// config.txt the field's Note says so.

// Codes in the header layout for pins that are not GPIO lines.
const (
	hdr3V3 = -1
	hdr5V  = -2
	hdrGND = -3
)

// j8 is the 40-pin header (J8) shared by every Raspberry Pi with 40 pins:
// entry i is physical pin i+1, a BCM number or one of the hdr codes.
// GPIO0 and GPIO1 (pins 27 and 28) are the ID EEPROM's bus.
func j8() map[int]Pin {
	layout := [40]int{
		hdr3V3, hdr5V, // 1, 2
		2, hdr5V, // 3, 4
		3, hdrGND, // 5, 6
		4, 14, // 7, 8
		hdrGND, 15, // 9, 10
		17, 18, // 11, 12
		27, hdrGND, // 13, 14
		22, 23, // 15, 16
		hdr3V3, 24, // 17, 18
		10, hdrGND, // 19, 20
		9, 25, // 21, 22
		11, 8, // 23, 24
		hdrGND, 7, // 25, 26
		0, 1, // 27, 28
		5, hdrGND, // 29, 30
		6, 12, // 31, 32
		13, hdrGND, // 33, 34
		19, 16, // 35, 36
		26, 20, // 37, 38
		hdrGND, 21, // 39, 40
	}
	pins := make(map[int]Pin, len(layout))
	for i, v := range layout {
		n := i + 1
		switch {
		case v == hdr3V3:
			pins[n] = Pin{Number: n, Kind: Power3V3, BCM: -1}
		case v == hdr5V:
			pins[n] = Pin{Number: n, Kind: Power5V, BCM: -1}
		case v == hdrGND:
			pins[n] = Pin{Number: n, Kind: Ground, BCM: -1}
		case v == 0:
			pins[n] = Pin{Number: n, Kind: ID, Line: "ID_SD", BCM: 0}
		case v == 1:
			pins[n] = Pin{Number: n, Kind: ID, Line: "ID_SC", BCM: 1}
		default:
			pins[n] = Pin{Number: n, Kind: GPIO, Line: fmt.Sprintf("GPIO%d", v), BCM: v}
		}
	}
	return pins
}

// bcmAliases are the schematic names some kernels give the BCM283x/2711
// header lines instead of GPIOn: Raspberry Pi's own kernel on the Pi 3B
// and mainline kernels on every model (gpio-line-names in their .dts).
func bcmAliases() map[string]int {
	return map[string]int{
		"ID_SDA": 0, "ID_SCL": 1,
		"SDA1": 2, "SCL1": 3, "GPIO_GCLK": 4,
		"SPI_CE1_N": 7, "SPI_CE0_N": 8, "SPI_MISO": 9, "SPI_MOSI": 10, "SPI_SCLK": 11,
		"TXD1": 14, "RXD1": 15,
	}
}

// bcmPeripherals are the header's buses on a BCM2837 (Pi 3, Zero 2 W,
// peripherals at 0x3f000000) or BCM2711 (Pi 4, at 0xfe000000); base is the
// platform device prefix, "3f" or "fe".
func bcmI2C(base string) []Bus {
	return []Bus{
		{
			Name: "i2c-1", Device: "/dev/i2c-1", SDA: 2, SCL: 3,
			Controller: base + "804000.i2c", Enable: "dtparam=i2c_arm=on",
			Note: "pins 3 (SDA) and 5 (SCL); 1.8 kΩ pull-ups to 3.3V on the board",
		},
		{
			Name: "i2c-0", Device: "/dev/i2c-0", SDA: 0, SCL: 1, Reserved: true,
			Enable: "dtparam=i2c_vc=on",
			Note: "pins 27 (ID_SD) and 28 (ID_SC): the HAT ID EEPROM's bus, read by the firmware at boot; " +
				"not for devices. Behind an i2c mux on current kernels, so it has no single controller.",
		},
	}
}

func bcmSerial0(base string) UART {
	return UART{
		Name: "serial0", Device: "/dev/serial0", TX: 14, RX: 15,
		Enable: "enable_uart=1 (and remove console=serial0,... from cmdline.txt)",
		Note: "pins 8 (TX) and 10 (RX). By default the PL011 (/dev/ttyAMA0, " + base + "201000.serial) drives " +
			"Bluetooth and serial0 is the mini UART /dev/ttyS0 (" + base + "215040.serial), whose baud rate follows " +
			"the core clock; dtoverlay=disable-bt (or miniuart-bt) puts the PL011 on the header and serial0 -> ttyAMA0. " +
			"/dev/serial0 is a udev symlink made by Raspberry Pi OS; other distributions may lack it. " +
			"Debian's own kernel with the mainline device tree names the mini UART /dev/ttyS1 (alias serial1).",
	}
}

// bcmPWM is the BCM283x/2711 PWM block: two channels, each on one of two
// header lines (PWM0: GPIO12 ALT0 or GPIO18 ALT5; PWM1: GPIO13 ALT0 or
// GPIO19 ALT5).
func bcmPWM(base, note string) []PWM {
	enable := "dtoverlay=pwm-2chan (GPIO18 and GPIO19; pin=12,func=4,pin2=13,func2=4 for GPIO12 and GPIO13), " +
		"or dtoverlay=pwm for channel 0 alone"
	return []PWM{
		{Controller: base + "20c000.pwm", Sysfs: "pwmchip0", Channel: 0, GPIO: []int{12, 18}, Enable: enable, Note: note},
		{Controller: base + "20c000.pwm", Sysfs: "pwmchip0", Channel: 1, GPIO: []int{13, 19}, Enable: enable, Note: note},
	}
}

const pwmAudioNote = "the analogue audio output uses the same PWM block: do not use both"

func rpi3b() *Profile {
	return &Profile{
		Name:          "rpi3b",
		Description:   "Raspberry Pi 3 Model B",
		Models:        []string{"Raspberry Pi 3 Model B"},
		GPIOChipLabel: "pinctrl-bcm2835",
		GPIOChipLines: 54,
		Pins:          j8(),
		LineAliases:   bcmAliases(),
		I2C:           bcmI2C("3f"),
		UART:          []UART{bcmSerial0("3f")},
		PWM:           bcmPWM("3f", pwmAudioNote),
		SPI:           bcmSPI("3f"),
	}
}

func rpi3bplus() *Profile {
	p := rpi3b()
	p.Name = "rpi3bplus"
	p.Description = "Raspberry Pi 3 Model B+"
	// "Model B+" is the mainline kernel's model string; Raspberry Pi's
	// firmware reports "Model B Plus Rev 1.3".
	p.Models = []string{"Raspberry Pi 3 Model B Plus", "Raspberry Pi 3 Model B+"}
	return p
}

func rpizero2w() *Profile {
	p := rpi3b()
	p.Name = "rpizero2w"
	p.Description = "Raspberry Pi Zero 2 W"
	p.Models = []string{"Raspberry Pi Zero 2 W"}
	// The Zero 2 W has no analogue audio output to share the PWM with.
	p.PWM = bcmPWM("3f", "")
	return p
}

func rpi4b() *Profile {
	p := &Profile{
		Name:          "rpi4b",
		Description:   "Raspberry Pi 4 Model B",
		Models:        []string{"Raspberry Pi 4 Model B"},
		GPIOChipLabel: "pinctrl-bcm2711",
		GPIOChipLines: 58,
		Pins:          j8(),
		LineAliases:   bcmAliases(),
		I2C:           bcmI2C("fe"),
		UART:          []UART{bcmSerial0("fe")},
		PWM:           bcmPWM("fe", pwmAudioNote),
		SPI:           bcmSPI("fe"),
	}
	// The BCM2711's four extra PL011s. uart2 (GPIO0/1) is left out: it
	// takes the ID EEPROM's pins. Their ttyAMA numbers follow the order
	// they probe in (the first one enabled is usually /dev/ttyAMA1), so
	// find the tty by Controller.
	for _, u := range []struct {
		n, tx, rx int
		addr      string
	}{{3, 4, 5, "fe201600"}, {4, 8, 9, "fe201800"}, {5, 12, 13, "fe201a00"}} {
		p.UART = append(p.UART, UART{
			Name: fmt.Sprintf("uart%d", u.n), TX: u.tx, RX: u.rx,
			Controller: u.addr + ".serial",
			Enable:     fmt.Sprintf("dtoverlay=uart%d", u.n),
			Note:       "/dev/ttyAMAn with n given in probe order; find it with FindByController(fsys, \"tty\", Controller)",
		})
	}
	return p
}

func rpi5() *Profile {
	p := &Profile{
		Name:        "rpi5",
		Description: "Raspberry Pi 5",
		Models:      []string{"Raspberry Pi 5 Model B", "Raspberry Pi 5"},
		// The RP1 I/O controller carries the header. It is gpiochip4 on
		// kernels before 6.6.45 and gpiochip0 after (raspberrypi/linux
		// #6144); reports say some 6.12 kernels number it differently
		// again. Only the label is stable.
		GPIOChipLabel: "pinctrl-rp1",
		GPIOChipLines: 54,
		Pins:          j8(),
		// Raspberry Pi's Pi 5 device tree names the header lines GPIO2..
		// GPIO27 and the ID pins ID_SDA/ID_SCL.
		LineAliases: map[string]int{"ID_SDA": 0, "ID_SCL": 1},
		I2C: []Bus{
			{
				Name: "i2c-1", Device: "/dev/i2c-1", SDA: 2, SCL: 3,
				Controller: "1f00074000.i2c", Enable: "dtparam=i2c_arm=on",
				Note: "RP1 I2C1 on pins 3 (SDA) and 5 (SCL)",
			},
			{
				Name: "i2c-0", Device: "/dev/i2c-0", SDA: 0, SCL: 1, Reserved: true,
				Controller: "1f00070000.i2c", Enable: "dtparam=i2c_vc=on",
				Note: "RP1 I2C0 on pins 27 (ID_SD) and 28 (ID_SC): the HAT ID EEPROM's bus; not for devices",
			},
		},
		PWM: rp1PWM(),
		SPI: rp1SPI(),
	}
	// RP1 UARTs on the header. uart1 (GPIO0/1) is left out: it takes the
	// ID EEPROM's pins. The Pi 5's serial0 is the 3-pin debug connector
	// (/dev/ttyAMA10), not the header.
	p.UART = append(p.UART, UART{
		Name: "uart0", Device: "/dev/ttyAMA0", TX: 14, RX: 15,
		Controller: "1f00030000.serial",
		Enable:     "dtparam=uart0=on",
		Note: "RP1 UART0 on pins 8 (TX) and 10 (RX). /dev/serial0 points at the debug connector's " +
			"/dev/ttyAMA10 by default, not at these pins.",
	})
	for _, u := range []struct {
		n, tx, rx int
		addr      string
	}{{2, 4, 5, "1f00038000"}, {3, 8, 9, "1f0003c000"}, {4, 12, 13, "1f00040000"}} {
		p.UART = append(p.UART, UART{
			Name: fmt.Sprintf("uart%d", u.n), Device: fmt.Sprintf("/dev/ttyAMA%d", u.n), TX: u.tx, RX: u.rx,
			Controller: u.addr + ".serial",
			Enable:     fmt.Sprintf("dtoverlay=uart%d-pi5", u.n),
			Note: "the ttyAMA number matching the UART number is what Raspberry Pi OS users report; " +
				"FindByController(fsys, \"tty\", Controller) confirms it",
		})
	}
	return p
}

// rp1PWM is RP1's PWM0, the header's block: four channels, each on one
// line (GPIO12 = PWM0_CHAN0, GPIO13 = CHAN1, GPIO18 = CHAN2, GPIO19 =
// CHAN3). RP1's PWM1 (1f0009c000.pwm) drives the fan connector. Which
// pwmchip PWM0 becomes has changed between kernels (pwmchip2 on early
// Pi 5 kernels, pwmchip0 on later ones): resolve it by Controller.
func rp1PWM() []PWM {
	enable := "dtoverlay=pwm-2chan,pin=12,func=4,pin2=13,func2=4 for GPIO12/13 " +
		"(GPIO18/19 need other func values on RP1: see the overlay's README)"
	note := "pwmchip2 on early Pi 5 kernels, pwmchip0 on later ones: use FindByController"
	var out []PWM
	for ch, line := range []int{12, 13, 18, 19} {
		out = append(out, PWM{
			Controller: "1f00098000.pwm", Sysfs: "pwmchip0", Channel: ch,
			GPIO: []int{line}, Enable: enable, Note: note,
		})
	}
	return out
}

// generic is any Linux board with a GPIO character device: no header is
// known, so lines are addressed by the kernel's line names or by chip and
// offset, and buses and ports are named in the configuration directly.
func generic() *Profile {
	return &Profile{
		Name:        "generic",
		Description: "generic Linux board (lines by name or CHIP:OFFSET; no known header)",
		Pins:        map[int]Pin{},
	}
}
