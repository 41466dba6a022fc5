// Package mcp23017 drives Microchip's MCP23017 (16 pins, datasheet
// DS20001952) and MCP23008 (8 pins, DS21919) I/O expanders on I²C: more
// GPIO for a Raspberry Pi, each pin an input (with a 100 kΩ pull-up if
// asked) or an output.
//
// The two chips share one register set; the MCP23017 has it twice (ports
// A and B), interleaved in its power-on BANK = 0 map, so a register of
// the MCP23008 at r is port A's at 2r and port B's at 2r+1 on the
// MCP23017. The driver keeps that map: it never sets BANK, and expects
// the chip as power-on or a previous run of this driver left it.
//
// Inputs can interrupt: a pin enabled with Watch pulls the chip's INT
// line low when it changes (against its previous value), until the
// change is read (Read); the MCP23017's INTA and INTB are mirrored, so
// one Pi GPIO edge on either serves the 16 pins — no polling.
package mcp23017

import (
	"fmt"
	"sync"

	"periph.io/x/conn/v3/i2c"
)

// Model is the chip on the bus.
type Model int

const (
	MCP23017 Model = iota // 16 pins: GPA0..7 are pins 0..7, GPB0..7 pins 8..15
	MCP23008              // 8 pins: GP0..7
)

func (m Model) String() string {
	if m == MCP23008 {
		return "MCP23008"
	}
	return "MCP23017"
}

// Pins is the number of pins.
func (m Model) Pins() int {
	if m == MCP23008 {
		return 8
	}
	return 16
}

// The MCP23008's register addresses (DS21919 table 1-3); the MCP23017's
// are at twice them, port B one further (DS20001952 table 3-1).
const (
	regIODIR   = 0x00 // 1: input (the power-on value)
	regGPINTEN = 0x02 // 1: interrupt on change
	regINTCON  = 0x04 // 0: compare with the previous value
	regIOCON   = 0x05
	regGPPU    = 0x06 // 1: 100 kΩ pull-up
	regGPIO    = 0x09
	regOLAT    = 0x0A

	ioconMirror = 1 << 6 // MCP23017: INTA and INTB both say either port's change
)

// Dev is one expander.
type Dev struct {
	model Model
	c     i2c.Dev
	mu    sync.Mutex // guards the shadows and each read-modify-write
	dir   uint16     // IODIR: 1 is an input
	pull  uint16     // GPPU
	watch uint16     // GPINTEN
	latch uint16     // OLAT: what the outputs drive
}

// New takes the expander at addr (0x20 to 0x27, as A2..A0 strap it) with
// every pin an input without pull-up, the chip's power-on state, which
// drives nothing: outputs are made by Output, after their level is set.
func New(b i2c.Bus, addr uint16, m Model) (*Dev, error) {
	if m != MCP23017 && m != MCP23008 {
		return nil, fmt.Errorf("mcp23017: unknown %v", m)
	}
	if addr < 0x20 || addr > 0x27 {
		return nil, fmt.Errorf("mcp23017: address %#x: the %v answers at 0x20..0x27", addr, m)
	}
	d := &Dev{model: m, c: i2c.Dev{Bus: b, Addr: addr}, dir: d16(m, 0xffff)}
	iocon := byte(0)
	if m == MCP23017 {
		iocon = ioconMirror
	}
	steps := []struct {
		reg  byte
		v    uint16
		what string
	}{
		{regIOCON, uint16(iocon) | uint16(iocon)<<8, "IOCON"},
		{regIODIR, d.dir, "IODIR"},
		{regGPPU, 0, "GPPU"},
		{regGPINTEN, 0, "GPINTEN"},
		{regINTCON, 0, "INTCON"},
		{regOLAT, 0, "OLAT"},
	}
	for _, s := range steps {
		if err := d.write(s.reg, s.v); err != nil {
			return nil, fmt.Errorf("mcp23017: set %s: %w", s.what, err)
		}
	}
	return d, nil
}

// d16 keeps the bits of v the model has pins for.
func d16(m Model, v uint16) uint16 { return v & uint16(1<<m.Pins()-1) }

// write writes a register of every port: one byte on the MCP23008, ports
// A and B in one auto-incremented write on the MCP23017.
func (d *Dev) write(reg byte, v uint16) error {
	if d.model == MCP23008 {
		return d.c.Tx([]byte{reg, byte(v)}, nil)
	}
	return d.c.Tx([]byte{2 * reg, byte(v), byte(v >> 8)}, nil)
}

func (d *Dev) checkPin(pin int) error {
	if pin < 0 || pin >= d.model.Pins() {
		return fmt.Errorf("mcp23017: %v has no pin %d (0 to %d)", d.model, pin, d.model.Pins()-1)
	}
	return nil
}

// set changes bit pin of the shadow *reg and writes it; on a failed
// write the shadow keeps its old value.
func (d *Dev) set(reg byte, shadow *uint16, pin int, on bool, what string) error {
	v := *shadow &^ (1 << pin)
	if on {
		v |= 1 << pin
	}
	if err := d.write(reg, v); err != nil {
		return fmt.Errorf("mcp23017: pin %d: %s: %w", pin, what, err)
	}
	*shadow = v
	return nil
}

// Input makes pin an input, with the 100 kΩ pull-up or without.
func (d *Dev) Input(pin int, pullUp bool) error {
	if err := d.checkPin(pin); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.set(regGPPU, &d.pull, pin, pullUp, "set the pull-up"); err != nil {
		return err
	}
	return d.set(regIODIR, &d.dir, pin, true, "make it an input")
}

// Output makes pin an output driving level: the level is latched first,
// so the pin never drives the other one on its way.
func (d *Dev) Output(pin int, level bool) error {
	if err := d.Set(pin, level); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.set(regGPINTEN, &d.watch, pin, false, "stop watching it"); err != nil {
		return err
	}
	return d.set(regIODIR, &d.dir, pin, false, "make it an output")
}

// Set latches level for pin: driven at once if it is an output.
func (d *Dev) Set(pin int, level bool) error {
	if err := d.checkPin(pin); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.set(regOLAT, &d.latch, pin, level, "set its level")
}

// Watch makes an input pin pull INT low when it changes, or stops.
func (d *Dev) Watch(pin int, on bool) error {
	if err := d.checkPin(pin); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if on && d.dir&(1<<pin) == 0 {
		return fmt.Errorf("mcp23017: pin %d is an output: only inputs are watched", pin)
	}
	return d.set(regGPINTEN, &d.watch, pin, on, "watch it")
}

// Read returns the level of every pin, bit n for pin n (an output reads
// what it drives). Reading clears a change's interrupt.
func (d *Dev) Read() (uint16, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.model == MCP23008 {
		var b [1]byte
		if err := d.c.Tx([]byte{regGPIO}, b[:]); err != nil {
			return 0, fmt.Errorf("mcp23017: read GPIO: %w", err)
		}
		return uint16(b[0]), nil
	}
	var b [2]byte
	if err := d.c.Tx([]byte{2 * regGPIO}, b[:]); err != nil {
		return 0, fmt.Errorf("mcp23017: read GPIO: %w", err)
	}
	return uint16(b[0]) | uint16(b[1])<<8, nil
}

func (d *Dev) String() string { return fmt.Sprintf("%v{%s}", d.model, &d.c) }
