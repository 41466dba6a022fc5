// Package rpi3b holds the Raspberry Pi 3 Model B QEMU system test: Debian's
// arm64 kernel with the Pi 3B device tree (bcm2837-rpi-3-b.dtb, from the
// same kernel package) on qemu-system-aarch64 -M raspi3b, the
// cross-compiled static gateway inside with board: rpi3b, its GPIO devices
// on the SoC's own GPIO controller (the kernel's pinctrl-bcm2835 driver
// over QEMU's model of the BCM2835 GPIO block), and a HAL client reaching
// the gateway through QEMU's usb-net on the board's USB host. The host
// reads the model's registers through QMP. The test is in rpi3b_test.go;
// it runs only with GATEWAY_QEMU=1 (make test-qemu-rpi3b). See
// ../README.md; gpioinfo/ is the line-info tool the test runs in the guest.
package rpi3b
