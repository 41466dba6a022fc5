package rpi3b_test

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The BCM2835 GPIO block (BCM2835 ARM Peripherals, section 6.1) as the
// BCM2837's ARM cores see it: bus address 0x7e200000 at physical
// 0x3f200000.
const (
	gpioBase     = 0x3f200000
	regGPFSEL0   = 0x00 // function select, 3 bits a line, 10 lines a register
	regGPSET0    = 0x1c // write 1: drive the line high
	regGPCLR0    = 0x28 // write 1: drive the line low
	regGPLEV0    = 0x34 // the lines' levels, lines 0 to 31
	regGPPUD     = 0x94 // the pull to latch: 0 off, 1 down, 2 up
	regGPPUDCLK0 = 0x98 // write 1: latch GPPUD into the line, lines 0 to 31
)

// fselNames are the function select codes: 000 input, 001 output, then
// the alternate functions in the datasheet's odd order.
var fselNames = [8]string{"input", "output", "alt5", "alt4", "alt0", "alt1", "alt2", "alt3"}

// fselAddr is the GPFSELn register that holds line's function.
func fselAddr(line int) uint32 { return gpioBase + regGPFSEL0 + 4*uint32(line/10) }

// fselFunc is line's function in the value of its GPFSELn register.
func fselFunc(reg uint32, line int) string { return fselNames[reg>>(3*(line%10))&7] }

// parseXP reads the word of an HMP "xp /1xw ADDR" answer,
// "000000003f200034: 0x00400000".
func parseXP(out string, addr uint32) (uint32, error) {
	head, val, ok := strings.Cut(strings.TrimSpace(out), ":")
	if !ok {
		return 0, fmt.Errorf("xp answer %q: no address", out)
	}
	a, err := strconv.ParseUint(strings.TrimSpace(head), 16, 64)
	if err != nil || a != uint64(addr) {
		return 0, fmt.Errorf("xp answer %q: not the word at %#x", out, addr)
	}
	fields := strings.Fields(val)
	if len(fields) != 1 {
		return 0, fmt.Errorf("xp answer %q: want one word", out)
	}
	v, err := strconv.ParseUint(fields[0], 0, 32)
	if err != nil {
		return 0, fmt.Errorf("xp answer %q: %w", out, err)
	}
	return uint32(v), nil
}

// gpioWrite is one write the guest made to the GPIO block: the register's
// offset in the block and the value.
type gpioWrite struct{ off, value uint32 }

// gpioWrites picks the GPIO block's writes out of QEMU's log with the
// memory_region_ops_write trace event on:
//
//	memory_region_ops_write cpu 3 mr 0x7fe4... addr 0x3f200094 value 0x2 size 4 name 'bcm2835_gpio'
func gpioWrites(log io.Reader) ([]gpioWrite, error) {
	var ws []gpioWrite
	sc := bufio.NewScanner(log)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "memory_region_ops_write ") || !strings.HasSuffix(line, "name 'bcm2835_gpio'") {
			continue
		}
		f := strings.Fields(line)
		var addr, val uint64
		var errA, errV error = fmt.Errorf("no addr"), fmt.Errorf("no value")
		for i := 0; i+1 < len(f); i++ {
			switch f[i] {
			case "addr":
				addr, errA = strconv.ParseUint(f[i+1], 0, 64)
			case "value":
				val, errV = strconv.ParseUint(f[i+1], 0, 64)
			}
		}
		if errA != nil || errV != nil || addr < gpioBase || addr >= gpioBase+0x1000 {
			return nil, fmt.Errorf("trace line %q: addr %v, value %v", line, errA, errV)
		}
		ws = append(ws, gpioWrite{off: uint32(addr - gpioBase), value: uint32(val)})
	}
	return ws, sc.Err()
}

// pullNames are GPPUD's values.
var pullNames = [4]string{"off", "down", "up", "reserved"}

// latchedPulls replays the BCM2835's pull sequence (write GPPUD, then
// strobe a line's bit in GPPUDCLK0): for each line strobed, the pull that
// was in GPPUD at its last strobe.
func latchedPulls(ws []gpioWrite) map[int]string {
	pulls := map[int]string{}
	pud := uint32(0)
	for _, w := range ws {
		switch w.off {
		case regGPPUD:
			pud = w.value & 3
		case regGPPUDCLK0:
			for line := 0; line < 32; line++ {
				if w.value&(1<<line) != 0 {
					pulls[line] = pullNames[pud]
				}
			}
		}
	}
	return pulls
}
