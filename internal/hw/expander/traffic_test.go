package expander

import (
	"testing"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/i2c/i2ctest"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock"
	"github.com/openhal/gateway/internal/hw/gpioline"
	"github.com/openhal/gateway/internal/hw/i2c/mcp23017"
	"github.com/openhal/gateway/internal/hw/i2c/mcp23017/mcp23017test"
)

func w(b ...byte) i2ctest.IO { return i2ctest.IO{Addr: 0x20, W: b} }

// readINT is one read of INTFA, INTFB, INTCAPA, INTCAPB, GPIOA, GPIOB
// (DS20001952 table 3-1, BANK = 0), from 0x0E on.
func readINT(b ...byte) i2ctest.IO { return i2ctest.IO{Addr: 0x20, W: []byte{0x0E}, R: b} }

// TestTraffic17 plays an MCP23017's register traffic: a lamp on GPA0, a
// limit switch to ground on GPB1 (pull-up, invert: true is pressed), INT
// on a Pi line. The setup; the lamp switched on; the switch pressed,
// released, tapped (pressed and released before the read: INTCAP has it),
// and pressed with its release lost (INT still low after the read: read
// again).
func TestTraffic17(t *testing.T) {
	intr := mcp23017test.NewLine("GPIO17")
	bus := &hooked{Playback: &i2ctest.Playback{DontPanic: true, Ops: []i2ctest.IO{
		w(0x0A, 0x44, 0x44),                      // 1 IOCON: MIRROR, ODR
		w(0x02, 0, 0),                            // 2 IPOL
		w(0x04, 0, 0),                            // 3 GPINTEN: none while the pins change
		w(0x06, 0, 0),                            // 4 DEFVAL
		w(0x08, 0, 0),                            // 5 INTCON: against the previous level
		w(0x14, 0x00, 0x00),                      // 6 OLAT: the lamp off
		w(0x0C, 0x00, 0x02),                      // 7 GPPU: GPB1's pull-up
		w(0x00, 0xfe, 0xff),                      // 8 IODIR: GPA0 an output
		w(0x04, 0x00, 0x02),                      // 9 GPINTEN: GPB1
		readINT(0, 0, 0, 0, 0x00, 0x02),          // 10 the switch released
		w(0x14, 0x01, 0x00),                      // 11 OLAT: the lamp on
		readINT(0x00, 0x02, 0, 0x00, 0x01, 0x00), // 12 pressed
		readINT(0x00, 0x02, 0, 0x02, 0x01, 0x02), // 13 released
		readINT(0x00, 0x02, 0, 0x00, 0x01, 0x02), // 14 tapped: INTCAPB low, GPIOB high
		readINT(0x00, 0x02, 0, 0x00, 0x01, 0x00), // 15 pressed; INT stays low
		readINT(0x00, 0x02, 0, 0x02, 0x01, 0x02), // 16 released, its edge lost
	}}}
	c := newChip(t, mcp23017.MCP23017, bus, intr, clock.Real())
	lamp := output(t, c, "arm.lamp", 0, false)
	limit := input(t, c, "arm.limit", 9, gpioline.InputOpts{Pull: gpio.PullUp, Invert: true})
	start(t, c)
	bus.Lock()
	n := bus.Count
	bus.Unlock()
	if n != 10 {
		t.Fatalf("Start made %d transfers, want the setup's 9 and a read", n)
	}
	if intr.Pull() != gpio.PullUp || intr.Ins() != 1 {
		t.Errorf("INT requested %d times, pull %s; want once, with the pull-up (INT is open-drain)", intr.Ins(), intr.Pull())
	}
	rl, rv := run(t, lamp), run(t, limit)
	rv.wantValue(t, false)

	if err := write(t, lamp, true); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		n    int
		want []bool
	}{{12, []bool{true}}, {13, []bool{false}}, {14, []bool{true, false}}}
	for _, s := range steps {
		done := bus.at(s.n, intr.Rise)
		intr.Fall()
		waitFor(t, done, "read of the chip")
		for _, v := range s.want {
			rv.wantValue(t, v)
		}
	}
	bus.at(15, nil)
	done := bus.at(16, intr.Rise)
	intr.Fall()
	waitFor(t, done, "second read while INT is low")
	rv.wantValue(t, true)
	rv.wantValue(t, false)
	rl.wantNone(t)
	rv.wantNone(t)
	if err := bus.Close(); err != nil {
		t.Error(err)
	}
}

// TestTraffic08 is the MCP23008's: no MIRROR, its registers at half the
// MCP23017's port A addresses (DS21919 table 1-3), INTF, INTCAP and GPIO
// in three bytes from 0x07.
func TestTraffic08(t *testing.T) {
	intr := mcp23017test.NewLine("GPIO27")
	bus := &hooked{Playback: &i2ctest.Playback{DontPanic: true, Ops: []i2ctest.IO{
		w(0x05, 0x04), w(0x01, 0), w(0x02, 0), w(0x03, 0), w(0x04, 0), // IOCON (ODR), IPOL, GPINTEN, DEFVAL, INTCON
		w(0x0A, 0x80), // OLAT: GP7 high (a relay board's input, active low: off)
		w(0x06, 0x00), // GPPU: none (the door contact has its own pull-up)
		w(0x00, 0x7f), // IODIR: GP7 an output
		w(0x02, 0x01), // GPINTEN: GP0
		{Addr: 0x20, W: []byte{0x07}, R: []byte{0x00, 0x00, 0x81}}, // the door closed (high)
		{Addr: 0x20, W: []byte{0x07}, R: []byte{0x01, 0x80, 0x80}}, // opened
	}}}
	c := newChip(t, mcp23017.MCP23008, bus, intr, clock.Real())
	relay, err := c.Output(desc("bench.relay", device.KindGPIOOutput, "ex1:GP7"), 7, false, true)
	if err != nil {
		t.Fatal(err)
	}
	door := input(t, c, "bench.door", 0, gpioline.InputOpts{Invert: true})
	start(t, c)
	run(t, relay)
	rv := run(t, door)
	rv.wantValue(t, false)
	done := bus.at(11, intr.Rise)
	intr.Fall()
	waitFor(t, done, "read of the chip")
	rv.wantValue(t, true)
	if err := bus.Close(); err != nil {
		t.Error(err)
	}
}
