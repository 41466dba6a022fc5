package rpi3b_test

import (
	"context"

	"github.com/openhal/gateway/e2e/qemu/qemutest"
)

// The guest ports init listens on: the gateway's HAL (TCP) and the
// command channel (busybox nc -ll -e /bin/sh).
const (
	guestHALPort = 7751
	guestCmdPort = 5555
)

// dtbName is the Pi 3B's device tree in Debian's arm64 kernel package
// (usr/lib/linux-image-*/broadcom/).
const dtbName = "bcm2837-rpi-3-b.dtb"

// guestConfig names what the guest boots and where QEMU's trace goes.
type guestConfig struct {
	kernel, dtb, initrd string
	qmpPath             string
	traceLog            string // -D: QEMU's log, where trace events go
}

// guestArgs is QEMU's raspi3b: the BCM2837 with its four Cortex-A53 cores
// and 1 GiB, as the machine fixes them. QEMU's raspi boot loader takes
// Debian's arm64 vmlinuz (an uncompressed Image with an EFI stub) as it
// is. The console is the PL011 (ttyAMA0), QEMU's first serial port on
// this machine. iomem=relaxed lets the guest's devmem reach the GPIO
// block that pinctrl-bcm2835 holds (IO_STRICT_DEVMEM refuses it
// otherwise): the test sets an input's level in the model that way.
func guestArgs(gc guestConfig) []string {
	return []string{
		"-M", "raspi3b", "-m", "1G",
		"-nographic", "-no-reboot",
		"-kernel", gc.kernel, "-dtb", gc.dtb, "-initrd", gc.initrd,
		"-append", "console=ttyAMA0 panic=-1 loglevel=4 iomem=relaxed",
		"-qmp", "unix:" + gc.qmpPath + ",server=on,wait=off",
		"-D", gc.traceLog,
	}
}

// startGuest boots qemu-system-aarch64 -M raspi3b. Its only network card
// is QEMU's usb-net (CDC Ethernet, the guest's usb0 through dwc2 and
// cdc_ether) on the board's USB host: the Pi 3B's own LAN9514 has no
// QEMU model.
func startGuest(ctx context.Context, gc guestConfig) (*qemutest.Guest, error) {
	return qemutest.Start(ctx, qemutest.Config{
		QEMU:        "qemu-system-aarch64",
		Args:        guestArgs(gc),
		NetDevice:   "usb-net",
		Forward:     []int{guestHALPort, guestCmdPort},
		CommandPort: guestCmdPort,
	})
}
