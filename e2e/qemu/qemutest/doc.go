// Package qemutest holds what the QEMU system tests (../arm64, ../armhf)
// share, so that each guest's test says only what is particular to its
// board: a running guest (its console, forwarded ports and command
// channel), a QEMU Machine Protocol client, the newc cpio writer for the
// initramfs the test appends the gateway to, the asset cache location,
// and the PASS/FAIL report printing "N passed, N failed".
//
// Everything that waits takes a context: a guest that never boots must
// fail a check, not hang the test. See ../README.md.
package qemutest
