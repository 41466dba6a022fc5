package modbus_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/openhal/gateway/internal/hw/modbus"
	"github.com/openhal/gateway/internal/hw/modbus/modbustest"
)

// A meter's voltage, a float32 in input registers 0-1 with its words
// swapped (CDAB), read over RTU. The in-memory Port stands in for
// modbus.OpenRTU("/dev/serial/by-id/...", &serial.Mode{BaudRate: 19200,
// Parity: serial.EvenParity}, modbus.RTUConfig{}).
func ExampleClient_ReadRegisters() {
	meter := modbustest.NewSlave()
	regs, _ := modbus.Encode(modbus.Float32, modbus.SwapWord, 230.5)
	meter.Unit(1).SetRegisters(modbus.InputRegisters, 0, regs...)
	port, line := modbustest.NewPort()
	go meter.Serve(line)
	defer port.Close()

	c := &modbus.Client{T: modbus.NewRTU(port, modbus.RTUConfig{Baud: 19200})}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	raw, err := c.ReadRegisters(ctx, 1, modbus.InputRegisters, 0, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	v, _ := modbus.Decode(modbus.Float32, modbus.SwapWord, raw)
	fmt.Printf("registers %04x: %.1f V\n", raw, v)
	// Output: registers [8000 4366]: 230.5 V
}

// An exception reply is an *Exception, wrapped with the request.
func ExampleException() {
	plc := modbustest.NewSlave()
	plc.Unit(3) // present, with no registers
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	defer l.Close()
	go plc.ServeTCP(l)

	ctx := context.Background()
	tcp, err := modbus.DialTCP(ctx, l.Addr().String())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tcp.Close()
	c := &modbus.Client{T: tcp}
	_, err = c.ReadRegisters(ctx, 3, modbus.HoldingRegisters, 100, 2)
	var exc *modbus.Exception
	fmt.Println(err)
	fmt.Println(errors.As(err, &exc), exc.Code == modbus.IllegalDataAddress, modbus.IsLinkError(err))
	// Output:
	// read holding 100+2 of unit 3: exception 2: illegal data address
	// true true false
}

// Values go into registers through Encode, which refuses what the type
// cannot hold.
func ExampleEncode() {
	regs, _ := modbus.Encode(modbus.Int32, modbus.SwapNone, -2)
	fmt.Printf("%04x\n", regs)
	regs, _ = modbus.Encode(modbus.Float32, modbus.SwapWordByte, 123.456)
	fmt.Printf("%04x\n", regs)
	_, err := modbus.Encode(modbus.Uint16, modbus.SwapNone, 70000)
	fmt.Println(err)
	// Output:
	// [ffff fffe]
	// [79e9 f642]
	// encode 70000 as uint16: out of range 0 to 65535
}

// How long frames take on the line, and the gap kept between them.
func ExampleFrameTime() {
	// A read of 10 registers at 19,200 baud, 8E1: 8 bytes out, 25 back.
	fmt.Println(modbus.FrameTime(19200, 11, 8+25).Round(time.Microsecond))
	fmt.Println(modbus.RTUConfig{Baud: 19200}.Gap().Round(time.Microsecond))
	fmt.Println(modbus.RTUConfig{Baud: 115200}.Gap())
	// Output:
	// 18.906ms
	// 2.005ms
	// 1.75ms
}
