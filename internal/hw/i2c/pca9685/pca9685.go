// Package pca9685 drives NXP's PCA9685 (datasheet rev. 4), the 16-channel
// 12-bit PWM controller on I²C behind most servo and LED boards for the
// Raspberry Pi.
//
// One frequency serves all 16 channels: the internal 25 MHz oscillator
// divided by 4096 steps and a prescaler of 3 to 255, so 24 Hz to 1526 Hz
// (50 Hz for servos). Each channel turns on at a step and off at another;
// this driver turns every channel on at step 0, so a duty is the step it
// turns off at, with the datasheet's full-on and full-off bits for 100 %
// and 0 %.
package pca9685

import (
	"fmt"
	"math"
	"sync"
	"time"

	"periph.io/x/conn/v3/i2c"
)

// Registers and bits (datasheet §7.3).
const (
	regMode1    = 0x00
	regMode2    = 0x01
	regLED0     = 0x06 // LED0_ON_L; channel n's four registers start at regLED0 + 4n
	regPrescale = 0xFE

	mode1Restart = 1 << 7
	mode1AI      = 1 << 5 // register auto-increment, for a channel's four bytes in one write
	mode1Sleep   = 1 << 4 // the oscillator off: the prescaler can only be written asleep
	mode2OutDrv  = 1 << 2 // totem-pole outputs, as the boards wire them

	fullBit = 1 << 4 // in LEDn_ON_H: always on; in LEDn_OFF_H: always off
)

const (
	// Oscillator is the internal clock.
	Oscillator = 25e6
	// Steps is the counter's resolution: a duty of Steps is always on.
	Steps = 4096
	// MinFrequency and MaxFrequency are the prescaler's bounds (255 and 3).
	MinFrequency = Oscillator / (Steps * 256)
	MaxFrequency = Oscillator / (Steps * 4)
	// Channels is the number of outputs.
	Channels = 16
	// AllCall is the LED All Call address every PCA9685 answers at by
	// default: a board strapped to it would be driven with all the others.
	AllCall = 0x70
)

// Dev is one PCA9685.
type Dev struct {
	mu   sync.Mutex // one register write at a time
	c    i2c.Dev
	freq float64
}

// New sets the chip at addr (0x40 to 0x7F, as its six address pins
// strap it) to PWM at hz, the nearest the prescaler gives (Frequency
// says which), with totem-pole outputs and register auto-increment. It
// leaves the channels' registers as they were: the caller sets each
// channel before it relies on it.
func New(b i2c.Bus, addr uint16, hz float64) (*Dev, error) {
	if addr < 0x40 || addr > 0x7F {
		return nil, fmt.Errorf("pca9685: address %#x: the PCA9685 answers at 0x40..0x7f", addr)
	}
	if addr == AllCall {
		return nil, fmt.Errorf("pca9685: address %#x is the LED All Call address every PCA9685 answers at", addr)
	}
	if !(hz >= MinFrequency && hz <= MaxFrequency) {
		return nil, fmt.Errorf("pca9685: %g Hz: the PCA9685 runs at %.1f to %.1f Hz", hz, MinFrequency, MaxFrequency)
	}
	d := &Dev{c: i2c.Dev{Bus: b, Addr: addr}}
	prescale := prescaleOf(hz)
	if err := d.start(byte(prescale)); err != nil {
		return nil, err
	}
	d.freq = ActualFrequency(hz)
	return d, nil
}

// prescaleOf is the prescaler's value for hz (datasheet §7.3.5).
func prescaleOf(hz float64) float64 { return math.Round(Oscillator/(Steps*hz)) - 1 }

// ActualFrequency is the frequency a chip set to hz runs at, the nearest
// its prescaler gives (50 Hz: 50.03 Hz), known without the chip: what a
// configuration's descriptors say before the chip answers.
func ActualFrequency(hz float64) float64 { return Oscillator / (Steps * (prescaleOf(hz) + 1)) }

// start writes the prescaler asleep and wakes the oscillator (datasheet
// §7.3.1.1, §7.3.5).
func (d *Dev) start(prescale byte) error {
	var m [1]byte
	if err := d.c.Tx([]byte{regMode1}, m[:]); err != nil {
		return fmt.Errorf("pca9685: read MODE1: %w", err)
	}
	steps := []struct {
		what string
		w    []byte
	}{
		{"sleep", []byte{regMode1, m[0]&^mode1Restart | mode1Sleep}},
		{"write the prescaler", []byte{regPrescale, prescale}},
		{"set totem-pole outputs", []byte{regMode2, mode2OutDrv}},
		{"wake", []byte{regMode1, m[0]&^(mode1Restart|mode1Sleep) | mode1AI}},
	}
	for _, s := range steps {
		if err := d.c.Tx(s.w, nil); err != nil {
			return fmt.Errorf("pca9685: %s: %w", s.what, err)
		}
	}
	time.Sleep(500 * time.Microsecond) // the oscillator's start-up (§7.3.1.1)
	return nil
}

// Frequency is the PWM frequency the prescaler gives, in Hz.
func (d *Dev) Frequency() float64 { return d.freq }

// SetDuty sets channel ch (0 to 15) on for duty steps of Steps: 0 is
// always off, Steps always on.
func (d *Dev) SetDuty(ch int, duty int) error {
	if ch < 0 || ch >= Channels {
		return fmt.Errorf("pca9685: no channel %d (0 to %d)", ch, Channels-1)
	}
	if duty < 0 || duty > Steps {
		return fmt.Errorf("pca9685: channel %d: duty %d is not 0 to %d", ch, duty, Steps)
	}
	var on, off int
	switch duty {
	case 0:
		off = fullBit << 8
	case Steps:
		on = fullBit << 8
	default:
		off = duty
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	w := []byte{byte(regLED0 + 4*ch), byte(on), byte(on >> 8), byte(off), byte(off >> 8)}
	if err := d.c.Tx(w, nil); err != nil {
		return fmt.Errorf("pca9685: set channel %d: %w", ch, err)
	}
	return nil
}

// SetPulse sets channel ch to a pulse of width every period, the nearest
// step: what a servo reads (1 to 2 ms at 50 Hz, typically).
func (d *Dev) SetPulse(ch int, width time.Duration) error {
	period := time.Duration(float64(time.Second) / d.freq)
	if width < 0 || width > period {
		return fmt.Errorf("pca9685: channel %d: a pulse of %v does not fit a period of %v", ch, width, period)
	}
	return d.SetDuty(ch, int(math.Round(width.Seconds()*d.freq*Steps)))
}

func (d *Dev) String() string { return fmt.Sprintf("PCA9685{%s}", &d.c) }
