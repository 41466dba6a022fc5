package mcp23017_test

import (
	"fmt"
	"log"

	"periph.io/x/conn/v3/i2c/i2ctest"

	"github.com/openhal/gateway/internal/hw/i2c/mcp23017"
)

func Example() {
	// On a Pi: bus, err := i2creg.Open("1"). Here, a bus that plays back
	// an MCP23008 at 0x20 with a relay on GP7 and a button on GP0.
	bus := &i2ctest.Playback{Ops: []i2ctest.IO{
		{Addr: 0x20, W: []byte{0x05, 0x00}}, {Addr: 0x20, W: []byte{0x00, 0xff}}, {Addr: 0x20, W: []byte{0x06, 0x00}},
		{Addr: 0x20, W: []byte{0x02, 0x00}}, {Addr: 0x20, W: []byte{0x04, 0x00}}, {Addr: 0x20, W: []byte{0x0A, 0x00}},
		{Addr: 0x20, W: []byte{0x0A, 0x00}}, {Addr: 0x20, W: []byte{0x02, 0x00}}, {Addr: 0x20, W: []byte{0x00, 0x7f}},
		{Addr: 0x20, W: []byte{0x06, 0x01}}, {Addr: 0x20, W: []byte{0x00, 0x7f}},
		{Addr: 0x20, W: []byte{0x02, 0x01}},
		{Addr: 0x20, W: []byte{0x09}, R: []byte{0x00}},
	}}
	io, err := mcp23017.New(bus, 0x20, mcp23017.MCP23008)
	if err != nil {
		log.Fatal(err)
	}
	if err := io.Output(7, false); err != nil { // the relay, off
		log.Fatal(err)
	}
	if err := io.Input(0, true); err != nil { // the button, to ground
		log.Fatal(err)
	}
	if err := io.Watch(0, true); err != nil { // INT falls when it changes
		log.Fatal(err)
	}
	pins, err := io.Read()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("button pressed:", pins&1 == 0)
	// Output: button pressed: true
}
