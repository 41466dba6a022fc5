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
// change is read (Read or ReadInterrupt); the MCP23017's INTA and INTB are
// mirrored, so one Pi GPIO edge on either serves the 16 pins — no
// polling. INT is made open-drain (IOCON.ODR): it only ever pulls low, so
// the Pi's line needs its pull-up, and a chip powered at 5 V cannot drive
// 5 V into the Pi.
//
// A chip that loses power comes back in its power-on state: every pin an
// input, IOCON 0. Configured tells (the ODR bit this driver sets is gone)
// and Restore writes the driver's view of every register again.
package mcp23017

import (
	"fmt"
	"strconv"
	"strings"
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

// PinName is the datasheet's name of pin: GPA0..GPA7, GPB0..GPB7 on the
// MCP23017, GP0..GP7 on the MCP23008.
func (m Model) PinName(pin int) string {
	switch {
	case pin < 0 || pin >= m.Pins():
		return fmt.Sprintf("pin %d", pin)
	case m == MCP23008:
		return fmt.Sprintf("GP%d", pin)
	case pin < 8:
		return fmt.Sprintf("GPA%d", pin)
	}
	return fmt.Sprintf("GPB%d", pin-8)
}

// ParsePin reads a pin as PinName names it (in any case) or by its
// number, 0..15 on the MCP23017 (GPB0 is 8), 0..7 on the MCP23008.
func (m Model) ParsePin(s string) (int, error) {
	want := "GPA0..GPA7, GPB0..GPB7 or 0..15"
	if m == MCP23008 {
		want = "GP0..GP7 or 0..7"
	}
	u := strings.ToUpper(s)
	n, base := -1, 0
	switch {
	case m == MCP23017 && (strings.HasPrefix(u, "GPA") || strings.HasPrefix(u, "GPB")):
		n = digit(u[3:], 7)
		if u[2] == 'B' {
			base = 8
		}
	case m == MCP23008 && strings.HasPrefix(u, "GP"):
		n = digit(u[2:], 7)
	default:
		n = number(u, m.Pins()-1)
	}
	if n < 0 {
		return 0, fmt.Errorf("the %v has no pin %q (%s)", m, s, want)
	}
	return base + n, nil
}

// digit is the one decimal digit s holds, at most hi, else -1.
func digit(s string, hi int) int {
	if len(s) != 1 {
		return -1
	}
	return number(s, hi)
}

// number is the decimal number s holds, 0..hi, else -1.
func number(s string, hi int) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > hi || s[0] == '+' || len(s) > 2 {
		return -1
	}
	return n
}

// The MCP23008's register addresses (DS21919 table 1-3); the MCP23017's
// are at twice them, port B one further (DS20001952 table 3-1).
const (
	regIODIR   = 0x00 // 1: input (the power-on value)
	regIPOL    = 0x01 // 1: GPIO reads the pin inverted
	regGPINTEN = 0x02 // 1: interrupt on change
	regDEFVAL  = 0x03 // the level INTCON 1 compares with
	regINTCON  = 0x04 // 0: compare with the previous value
	regIOCON   = 0x05
	regGPPU    = 0x06 // 1: 100 kΩ pull-up
	regINTF    = 0x07 // 1: this pin's change raised the interrupt
	regINTCAP  = 0x08 // the pins when the interrupt was raised
	regGPIO    = 0x09
	regOLAT    = 0x0A

	ioconMirror = 1 << 6 // MCP23017: INTA and INTB both say either port's change
	ioconODR    = 1 << 2 // INT open-drain (overrides INTPOL: active low)
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

// Setup says what each pin is, bit n for pin n.
type Setup struct {
	Outputs uint16 // outputs (IODIR 0); every other pin is an input
	Levels  uint16 // what the outputs drive (OLAT)
	PullUps uint16 // inputs with the 100 kΩ pull-up (GPPU)
	Watch   uint16 // inputs that pull INT low when they change (GPINTEN)
}

// New takes the expander at addr (0x20 to 0x27, as A2..A0 strap it) with
// every pin an input without pull-up, the chip's power-on state, which
// drives nothing: outputs are made by Output, after their level is set.
func New(b i2c.Bus, addr uint16, m Model) (*Dev, error) { return Open(b, addr, m, Setup{}) }

// Open takes the expander at addr with its pins as s says, written as
// Restore does: an output drives its own level from the moment it is
// one, whatever a previous run left the chip driving.
func Open(b i2c.Bus, addr uint16, m Model, s Setup) (*Dev, error) {
	if m != MCP23017 && m != MCP23008 {
		return nil, fmt.Errorf("mcp23017: unknown %v", m)
	}
	if addr < 0x20 || addr > 0x27 {
		return nil, fmt.Errorf("mcp23017: address %#x: the %v answers at 0x20..0x27", addr, m)
	}
	if s.Watch&s.Outputs != 0 {
		return nil, fmt.Errorf("mcp23017: pins %#04x are outputs: only inputs are watched", s.Watch&s.Outputs)
	}
	d := &Dev{model: m, c: i2c.Dev{Bus: b, Addr: addr},
		dir: d16(m, ^s.Outputs), latch: d16(m, s.Levels), pull: d16(m, s.PullUps), watch: d16(m, s.Watch)}
	if err := d.Restore(); err != nil {
		return nil, err
	}
	return d, nil
}

// iocon is the IOCON this driver keeps: open-drain INT, and on the
// MCP23017 INTA and INTB mirrored. BANK stays 0.
func (d *Dev) iocon() byte {
	if d.model == MCP23017 {
		return ioconMirror | ioconODR
	}
	return ioconODR
}

// Restore writes every register from the driver's view of the chip:
// IOCON, no inverted inputs (IPOL), no interrupts while the pins change
// (GPINTEN), compare with the previous value (DEFVAL, INTCON), then the
// outputs' levels (OLAT) before their direction (GPPU, IODIR), so that no
// output ever drives another level than its own, and last the watched
// inputs. It is what a chip that was reset (Configured false) needs, and
// harmless on one that was not.
func (d *Dev) Restore() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	ic := uint16(d.iocon())
	steps := []struct {
		reg  byte
		v    uint16
		what string
	}{
		{regIOCON, ic | ic<<8, "IOCON"},
		{regIPOL, 0, "IPOL"},
		{regGPINTEN, 0, "GPINTEN"},
		{regDEFVAL, 0, "DEFVAL"},
		{regINTCON, 0, "INTCON"},
		{regOLAT, d.latch, "OLAT"},
		{regGPPU, d.pull, "GPPU"},
		{regIODIR, d.dir, "IODIR"},
		{regGPINTEN, d.watch, "GPINTEN"},
	}
	for _, s := range steps {
		if err := d.write(s.reg, s.v); err != nil {
			return fmt.Errorf("mcp23017: set %s: %w", s.what, err)
		}
	}
	return nil
}

// Configured reports whether the chip still holds the IOCON the driver
// wrote; false after a reset (power-on IOCON is 0, and the driver's has
// ODR set), when every pin is an input again.
func (d *Dev) Configured() (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	reg := byte(regIOCON)
	if d.model == MCP23017 {
		reg = 2 * regIOCON
	}
	var b [1]byte
	if err := d.c.Tx([]byte{reg}, b[:]); err != nil {
		return false, fmt.Errorf("mcp23017: read IOCON: %w", err)
	}
	return b[0] == d.iocon(), nil
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

// Capture is one read of the interrupt registers, bit n for pin n.
type Capture struct {
	Flags    uint16 // INTF: the pins whose change raised the interrupt
	Captured uint16 // INTCAP: every pin's level when it was raised
	Levels   uint16 // GPIO: every pin's level now
}

// ReadInterrupt reads INTF, INTCAP and GPIO in one transaction (they
// follow each other in both chips' maps), which clears the interrupt. A
// pin that changed and changed back before the read shows in Captured
// only; Levels is what the pins are now. With no interrupt pending,
// Flags is 0.
func (d *Dev) ReadInterrupt() (Capture, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.model == MCP23008 {
		var b [3]byte
		if err := d.c.Tx([]byte{regINTF}, b[:]); err != nil {
			return Capture{}, fmt.Errorf("mcp23017: read INTF, INTCAP, GPIO: %w", err)
		}
		return Capture{Flags: uint16(b[0]), Captured: uint16(b[1]), Levels: uint16(b[2])}, nil
	}
	var b [6]byte
	if err := d.c.Tx([]byte{2 * regINTF}, b[:]); err != nil {
		return Capture{}, fmt.Errorf("mcp23017: read INTF, INTCAP, GPIO: %w", err)
	}
	w := func(i int) uint16 { return uint16(b[i]) | uint16(b[i+1])<<8 }
	return Capture{Flags: w(0), Captured: w(2), Levels: w(4)}, nil
}

func (d *Dev) String() string { return fmt.Sprintf("%v{%s}", d.model, &d.c) }
