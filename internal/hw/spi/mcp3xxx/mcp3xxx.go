// Package mcp3xxx drives Microchip's MCP3004/MCP3008 (10-bit, datasheet
// DS21295) and MCP3204/MCP3208 (12-bit, DS21298) successive-approximation
// ADCs over SPI: the usual way to give a Raspberry Pi analog inputs.
//
// A conversion is one SPI transaction of three bytes, the start bit and
// the channel's configuration going out while the result comes back; the
// chip holds no state between transactions, so there is nothing to set up
// and nothing to restore. Several channels of one chip share a Dev, whose
// transactions are serialised; chips on other chip-selects are other
// Devs, serialised by the kernel's SPI core.
//
// SPI has no acknowledge: a chip that is not there reads as whatever the
// MISO line floats to. The one bit the chips always drive low, the null
// bit just before the result, tells a line pulled high with nothing
// driving it (ErrNoAnswer); a line pulled low (the Raspberry Pi's GPIO9
// at its power-on pull-down) reads 0 V, which no check can tell from a
// real 0 V.
package mcp3xxx

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"periph.io/x/conn/v3/physic"
	"periph.io/x/conn/v3/spi"
)

// Model is the chip on the bus.
type Model int

const (
	MCP3004 Model = iota // 4 channels, 10 bits
	MCP3008              // 8 channels, 10 bits
	MCP3204              // 4 channels, 12 bits
	MCP3208              // 8 channels, 12 bits
)

func (m Model) String() string {
	switch m {
	case MCP3004:
		return "MCP3004"
	case MCP3008:
		return "MCP3008"
	case MCP3204:
		return "MCP3204"
	case MCP3208:
		return "MCP3208"
	}
	return fmt.Sprintf("Model(%d)", int(m))
}

// Channels is the number of single-ended inputs (and of differential
// configurations: each pair in both polarities).
func (m Model) Channels() int {
	if m == MCP3004 || m == MCP3204 {
		return 4
	}
	return 8
}

// Bits is the converter's resolution.
func (m Model) Bits() int {
	if m == MCP3204 || m == MCP3208 {
		return 12
	}
	return 10
}

// MaxClock is the fastest clock the datasheet allows at VDD = 5 V; at
// 2.7 V it is 1.35 MHz (MCP300x) or 1 MHz (MCP320x), which DefaultClock
// stays under, so the default is right at any supply voltage.
func (m Model) MaxClock() physic.Frequency {
	if m.Bits() == 12 {
		return 2 * physic.MegaHertz
	}
	return 3600 * physic.KiloHertz
}

const (
	// DefaultClock works at every supply voltage the chips take.
	DefaultClock = physic.MegaHertz
	// MinClock: below it the sample capacitor droops during the
	// conversion (the datasheets' 10 kHz minimum at 85 °C).
	MinClock = 10 * physic.KiloHertz
)

// Input selects what a conversion measures.
type Input struct {
	// Channel is the input, 0 to Channels()-1. Differential, it is the
	// datasheets' configuration: 0 is CH0 (IN+) against CH1 (IN−), 1 is
	// CH1 against CH0, 2 is CH2 against CH3, and so on.
	Channel int
	// Differential measures a pair instead of one input against ground.
	Differential bool
}

func (in Input) String() string {
	if !in.Differential {
		return fmt.Sprintf("CH%d", in.Channel)
	}
	plus, minus := in.Channel&^1, in.Channel|1
	if in.Channel&1 == 1 {
		plus, minus = minus, plus
	}
	return fmt.Sprintf("CH%d-CH%d", plus, minus)
}

// ErrNoAnswer is matched (errors.Is) by a Read whose null bit came back
// high: nothing drove the MISO line (see the package's doc).
var ErrNoAnswer = errors.New("the null bit before the result was 1: the chip did not drive MISO (check its power, its DOUT to MISO wire and its chip select)")

// Dev is one chip on one chip-select.
type Dev struct {
	model Model
	mu    sync.Mutex // one transaction at a time; guards c and buffers
	c     spi.Conn
	w, r  [3]byte
}

// New connects to the chip on p at clock hz (0 means DefaultClock), in
// SPI mode 0 with 8-bit words, as both datasheets' 8-bit-segment
// figures show.
func New(p spi.Port, m Model, hz physic.Frequency) (*Dev, error) {
	if m < MCP3004 || m > MCP3208 {
		return nil, fmt.Errorf("mcp3xxx: unknown %v", m)
	}
	if hz == 0 {
		hz = DefaultClock
	}
	if hz < MinClock || hz > m.MaxClock() {
		return nil, fmt.Errorf("mcp3xxx: clock %v: the %v takes %v to %v", hz, m, MinClock, m.MaxClock())
	}
	c, err := p.Connect(hz, spi.Mode0, 8)
	if err != nil {
		return nil, fmt.Errorf("mcp3xxx: connect at %v: %w", hz, err)
	}
	return &Dev{model: m, c: c}, nil
}

// Model returns the chip's model.
func (d *Dev) Model() Model { return d.model }

// Read converts in and returns the count, 0 to 2^Bits()-1. The
// transaction is too short for ctx to interrupt; ctx is checked before
// it.
func (d *Dev) Read(ctx context.Context, in Input) (int, error) {
	if in.Channel < 0 || in.Channel >= d.model.Channels() {
		return 0, fmt.Errorf("mcp3xxx: %v has no channel %d (0 to %d)", d.model, in.Channel, d.model.Channels()-1)
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("mcp3xxx: read %v: %w", in, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.w = d.command(in)
	if err := d.c.Tx(d.w[:], d.r[:]); err != nil {
		return 0, fmt.Errorf("mcp3xxx: read %v: %w", in, err)
	}
	// The null bit sits just above the result's top bits in the second
	// byte (figure 6-1 of both datasheets).
	top, null := byte(0x03), byte(0x04)
	if d.model.Bits() == 12 {
		top, null = 0x0f, 0x10
	}
	if d.r[1]&null != 0 {
		return 0, fmt.Errorf("mcp3xxx: read %v: %w", in, ErrNoAnswer)
	}
	return int(d.r[1]&top)<<8 | int(d.r[2]), nil
}

// command is the three bytes that start a conversion of in. MCP300x
// (DS21295, figure 6-1): seven zeros and the start bit, then SGL/DIFF and
// D2 D1 D0 in the top of the second byte; the result's B9..B8 end the
// second byte read, B7..B0 are the third. MCP320x (DS21298, figure 6-1):
// five zeros, the start bit, SGL/DIFF and D2 in the first byte, D1 D0 at
// the top of the second; B11..B8 end the second byte read. The 4-channel
// parts ignore D2, sent as 0.
func (d *Dev) command(in Input) [3]byte {
	sgl := 1
	if in.Differential {
		sgl = 0
	}
	ch := in.Channel
	if d.model.Bits() == 12 {
		return [3]byte{byte(0x04 | sgl<<1 | ch>>2), byte(ch&3) << 6, 0}
	}
	return [3]byte{0x01, byte(sgl<<7 | ch<<4), 0}
}

// Volts converts a count to volts: the chips' transfer function is
// count = 2^bits × VIN / VREF.
func (d *Dev) Volts(count int, vref float64) float64 {
	return float64(count) * vref / float64(int(1)<<d.model.Bits())
}

func (d *Dev) String() string {
	return fmt.Sprintf("%v{%v}", d.model, d.c)
}
