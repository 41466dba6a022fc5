package expander_test

import (
	"context"
	"fmt"
	"log"

	"periph.io/x/conn/v3/i2c/i2ctest"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock"
	"github.com/openhal/gateway/internal/hw/expander"
	"github.com/openhal/gateway/internal/hw/i2c/mcp23017"
)

func Example() {
	// On a Pi the bus is i2creg.Open("1") and INT a gpioioctl line
	// (inputs need it). Here, an MCP23008 at 0x20 with a lamp on GP0,
	// played back: its setup, a read of its pins, the lamp switched on.
	bus := &i2ctest.Playback{Ops: []i2ctest.IO{
		{Addr: 0x20, W: []byte{0x05, 0x04}}, {Addr: 0x20, W: []byte{0x01, 0}}, {Addr: 0x20, W: []byte{0x02, 0}},
		{Addr: 0x20, W: []byte{0x03, 0}}, {Addr: 0x20, W: []byte{0x04, 0}}, {Addr: 0x20, W: []byte{0x0A, 0}},
		{Addr: 0x20, W: []byte{0x06, 0}}, {Addr: 0x20, W: []byte{0x00, 0xfe}}, {Addr: 0x20, W: []byte{0x02, 0}},
		{Addr: 0x20, W: []byte{0x07}, R: []byte{0, 0, 0}},
		{Addr: 0x20, W: []byte{0x0A, 0x01}},
	}}
	chip, err := expander.NewChip(expander.Config{Name: "ex1", Model: mcp23017.MCP23008, Bus: bus,
		BusName: "/dev/i2c-1", Addr: 0x20, Clock: clock.Real()})
	if err != nil {
		log.Fatal(err)
	}
	lamp, err := chip.Output(device.Descriptor{ID: "bench.lamp", Kind: device.KindGPIOOutput, Pin: "ex1:GP0"}, 0, false, false)
	if err != nil {
		log.Fatal(err)
	}
	if err := chip.Start(); err != nil {
		log.Fatal(err)
	}
	defer chip.Close()
	if _, err := lamp.Write(context.Background(), device.WriteRequest{Value: true}); err != nil {
		log.Fatal(err)
	}
	fmt.Println("lamp on; transfers:", bus.Count)
	// Output: lamp on; transfers: 11
}
