package arm64_test

import (
	"context"
	"fmt"

	"github.com/openhal/gateway/e2e/qemu/qemutest"
)

// The guest ports init listens on: the gateway's HAL (TCP) and the
// command channel (busybox nc -ll -e /bin/sh).
const (
	guestHALPort = 7751
	guestCmdPort = 5555
)

// guestConfig names what the guest boots and where its wires end.
type guestConfig struct {
	kernel, initrd       string
	usbChardev, pciChard string // Unix sockets QEMU listens on for the instruments
	qmpPath              string
}

// guestMachine is the emulated board: QEMU's virt machine with two
// Cortex-A53 cores (the Pi 3's) and 1 GiB under multi-threaded TCG, one
// host thread per vCPU.
func guestMachine() []string {
	return []string{"-M", "virt", "-cpu", "cortex-a53", "-smp", "2", "-m", "1024", "-accel", "tcg,thread=multi"}
}

// startGuest boots qemu-system-aarch64 -M virt; QEMU listens on the
// chardevs' sockets and the instruments connect once QMP answers.
func startGuest(ctx context.Context, gc guestConfig) (*qemutest.Guest, error) {
	return qemutest.Start(ctx, qemutest.Config{
		QEMU: "qemu-system-aarch64",
		Args: append(guestMachine(),
			"-nographic", "-no-reboot",
			"-kernel", gc.kernel, "-initrd", gc.initrd,
			"-append", "console=ttyAMA0 panic=-1 loglevel=4",
			"-device", "qemu-xhci,id=xhci",
			"-chardev", "socket,id=cu,path="+gc.usbChardev+",server=on,wait=off",
			"-device", "usb-serial,chardev=cu,id=usbser,bus=xhci.0",
			"-chardev", "socket,id=cp,path="+gc.pciChard+",server=on,wait=off",
			"-device", "pci-serial,chardev=cp,id=pciser",
			"-qmp", "unix:"+gc.qmpPath+",server=on,wait=off",
		),
		NetDevice:   "virtio-net-pci,romfile=",
		Forward:     []int{guestHALPort, guestCmdPort},
		CommandPort: guestCmdPort,
	})
}

// simAttr is the shell expression of a gpio-sim line's sysfs attribute
// (value or pull), found through the chip's configfs entry.
func simAttr(offset int, attr string) string {
	const cfg = "/sys/kernel/config/gpio-sim/bench"
	return fmt.Sprintf("/sys/devices/platform/$(cat %s/dev_name)/$(cat %s/bank0/chip_name)/sim_gpio%d/%s", cfg, cfg, offset, attr)
}
