// Package arm64 holds the arm64 QEMU system test: Debian's arm64 kernel
// under qemu-system-aarch64 (TCG) with the cross-compiled static gateway
// inside, gpio-sim lines, a USB and a PCI serial port wired to instrument
// simulators on the host, and a HAL client reaching the gateway through the
// emulated network card. The test is in arm64_test.go; it runs only with
// GATEWAY_QEMU=1 (make test-qemu-arm64). See ../README.md.
package arm64
