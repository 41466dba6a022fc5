package rpi3b_test

import (
	"maps"
	"strings"
	"testing"
)

// The function select of the lines the test uses, from GPFSEL values read
// off the model with the gateway running (GPIO17 output; GPIO14 and
// GPIO15 in ALT5, the mini UART; GPIO22 output, GPIO23 and 27 inputs).
func TestFselFunc(t *testing.T) {
	for _, c := range []struct {
		reg  uint32
		line int
		want string
	}{
		{0x00212000, 17, "output"},
		{0x00212000, 14, "alt5"},
		{0x00212000, 15, "alt5"},
		{0x00212000, 10, "input"},
		{0x00000040, 22, "output"},
		{0x00000040, 23, "input"},
		{0x00000040, 27, "input"},
		{0x00001000, 4, "output"},
		{4 << 9, 3, "alt0"},
		{7 << 27, 9, "alt3"},
	} {
		if got := fselFunc(c.reg, c.line); got != c.want {
			t.Errorf("fselFunc(%#x, %d) = %s, want %s", c.reg, c.line, got, c.want)
		}
	}
	for line, want := range map[int]uint32{0: 0x3f200000, 9: 0x3f200000, 17: 0x3f200004, 27: 0x3f200008, 53: 0x3f200014} {
		if got := fselAddr(line); got != want {
			t.Errorf("fselAddr(%d) = %#x, want %#x", line, got, want)
		}
	}
}

func TestParseXP(t *testing.T) {
	v, err := parseXP("000000003f200034: 0x00400000\r\n", 0x3f200034)
	if err != nil || v != 0x00400000 {
		t.Errorf("parseXP = %#x, %v", v, err)
	}
	for _, bad := range []string{
		"",
		"000000003f200038: 0x00400000\r\n", // another address
		"000000003f200034: 0x00000000 0x00000001\r\n", // two words
		"000000003f200034: zz\r\n",
		"Cannot access memory\r\n",
	} {
		if _, err := parseXP(bad, 0x3f200034); err == nil {
			t.Errorf("parseXP(%q): no error", bad)
		}
	}
}

// A trace as QEMU 7.2 writes it, with the kernel's pull-up of GPIO27 and
// pull-down of GPIO23 (pinctrl-bcm2835's bcm2835_pull_config_set: GPPUD,
// strobe, clear) among other devices' writes.
const sampleTrace = `memory_region_ops_write cpu 0 mr 0x55d0 addr 0x3f980440 value 0x29 size 4 name 'dwc2-io'
memory_region_ops_write cpu 1 mr 0x7fe4 addr 0x3f200008 value 0x40 size 4 name 'bcm2835_gpio'
memory_region_ops_write cpu 1 mr 0x7fe4 addr 0x3f200094 value 0x2 size 4 name 'bcm2835_gpio'
memory_region_ops_write cpu 1 mr 0x7fe4 addr 0x3f200098 value 0x8000000 size 4 name 'bcm2835_gpio'
memory_region_ops_write cpu 1 mr 0x7fe4 addr 0x3f200098 value 0x0 size 4 name 'bcm2835_gpio'
memory_region_ops_write cpu 2 mr 0x55d1 addr 0x3f00b210 value 0x1 size 4 name 'bcm2835-ic'
memory_region_ops_write cpu 3 mr 0x7fe4 addr 0x3f200094 value 0x1 size 4 name 'bcm2835_gpio'
memory_region_ops_write cpu 3 mr 0x7fe4 addr 0x3f200098 value 0x800000 size 4 name 'bcm2835_gpio'
memory_region_ops_write cpu 3 mr 0x7fe4 addr 0x3f200098 value 0x0 size 4 name 'bcm2835_gpio'
`

func TestGPIOWritesAndPulls(t *testing.T) {
	ws, err := gpioWrites(strings.NewReader(sampleTrace))
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 7 || ws[0] != (gpioWrite{off: 0x08, value: 0x40}) || ws[1] != (gpioWrite{off: regGPPUD, value: 2}) {
		t.Fatalf("gpioWrites = %+v", ws)
	}
	got := latchedPulls(ws)
	want := map[int]string{27: "up", 23: "down"}
	if !maps.Equal(got, want) {
		t.Errorf("latchedPulls = %v, want %v", got, want)
	}
	// A later strobe with the pull off replaces the first.
	ws = append(ws, gpioWrite{off: regGPPUD, value: 0}, gpioWrite{off: regGPPUDCLK0, value: 1 << 27})
	if p := latchedPulls(ws)[27]; p != "off" {
		t.Errorf("after a strobe with GPPUD 0, line 27's pull = %q, want off", p)
	}
	if _, err := gpioWrites(strings.NewReader("memory_region_ops_write cpu 1 mr 0x1 addr zz value 0x2 size 4 name 'bcm2835_gpio'\n")); err == nil {
		t.Error("a trace line with a bad address: no error")
	}
}

func TestIRQCount(t *testing.T) {
	const out = `112:          0          0          0          0  pinctrl-bcm2835  27 Edge      gateway@134
113:          3          0         23          1  pinctrl-bcm2835  23 Edge      gateway@134
 27:         27          0          0          0  bcm2836-timer   1 Edge      arch_timer`
	for line, want := range map[int]int{27: 0, 23: 27, 1: 0, 4: 0} {
		if got := irqCount(out, line); got != want {
			t.Errorf("irqCount(line %d) = %d, want %d", line, got, want)
		}
	}
}
