package mcp23017_test

import (
	"fmt"
	"log"

	"periph.io/x/conn/v3/i2c/i2ctest"

	"github.com/openhal/gateway/internal/hw/i2c/mcp23017"
)

func Example() {
	// On a Pi: bus, err := i2creg.Open("1"). Here, a bus that plays back
	// an MCP23008 at 0x20 with a relay on GP7 and a button to ground on
	// GP0, pressed.
	bus := &i2ctest.Playback{Ops: []i2ctest.IO{
		{Addr: 0x20, W: []byte{0x05, 0x04}},                                      // IOCON: INT open-drain
		{Addr: 0x20, W: []byte{0x01, 0x00}}, {Addr: 0x20, W: []byte{0x02, 0x00}}, // IPOL, GPINTEN
		{Addr: 0x20, W: []byte{0x03, 0x00}}, {Addr: 0x20, W: []byte{0x04, 0x00}}, // DEFVAL, INTCON
		{Addr: 0x20, W: []byte{0x0A, 0x00}},                        // OLAT: the relay off
		{Addr: 0x20, W: []byte{0x06, 0x01}},                        // GPPU: the button's pull-up
		{Addr: 0x20, W: []byte{0x00, 0x7f}},                        // IODIR: GP7 an output
		{Addr: 0x20, W: []byte{0x02, 0x01}},                        // GPINTEN: INT falls when the button changes
		{Addr: 0x20, W: []byte{0x07}, R: []byte{0x01, 0x00, 0x00}}, // INTF, INTCAP, GPIO
	}}
	io, err := mcp23017.Open(bus, 0x20, mcp23017.MCP23008, mcp23017.Setup{Outputs: 1 << 7, PullUps: 1, Watch: 1})
	if err != nil {
		log.Fatal(err)
	}
	// INT fell (a Pi GPIO's edge says so): what changed, and clear it.
	c, err := io.ReadInterrupt()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("button changed:", c.Flags&1 != 0, "pressed:", c.Levels&1 == 0)
	// Output: button changed: true pressed: true
}
