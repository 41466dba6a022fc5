package main

import (
	"testing"
	"unsafe"
)

// The structures must have the sizes linux/gpio.h gives them: the ioctl
// numbers encode them, and a wrong one is refused with ENOTTY.
func TestUAPISizes(t *testing.T) {
	if s := unsafe.Sizeof(chipInfo{}); s != 68 {
		t.Errorf("sizeof(gpiochip_info) = %d, want 68", s)
	}
	if s := unsafe.Sizeof(lineInfo{}); s != 256 {
		t.Errorf("sizeof(gpio_v2_line_info) = %d, want 256", s)
	}
}
