package mcp3xxx_test

import (
	"context"
	"fmt"
	"log"

	"periph.io/x/conn/v3/conntest"
	"periph.io/x/conn/v3/spi/spitest"

	"github.com/openhal/gateway/internal/hw/spi/mcp3xxx"
)

func Example() {
	// On a Pi: p, err := spireg.Open("/dev/spidev0.0"). Here, a bus that
	// plays back what an MCP3008 answers for channel 0 at 1.65 V.
	p := &spitest.Playback{Playback: conntest.Playback{Ops: []conntest.IO{
		{W: []byte{0x01, 0x80, 0x00}, R: []byte{0x00, 0x02, 0x00}},
	}}}
	adc, err := mcp3xxx.New(p, mcp3xxx.MCP3008, 0)
	if err != nil {
		log.Fatal(err)
	}
	count, err := adc.Read(context.Background(), mcp3xxx.Input{Channel: 0})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d = %.2f V\n", count, adc.Volts(count, 3.3))
	// Output: 512 = 1.65 V
}
