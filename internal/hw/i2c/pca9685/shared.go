package pca9685

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"periph.io/x/conn/v3/i2c"
)

// Shared is one PCA9685 that the devices on its channels share. It is set
// up at its first use, not when the gateway starts: a chip that does not
// answer (unplugged, unpowered, strapped to another address) or a bus
// that is not there fails the writes of its devices with what failed,
// and the gateway serves the rest meanwhile.
//
// A failed transfer forgets the set-up, so the next write sets the chip
// up again from the start (a chip that lost its power wakes asleep, its
// channels off) and writes every channel's last duty back before its
// own. Shared is safe for concurrent use: one transfer at a time.
type Shared struct {
	name string // "chips.servos (pca9685 at 0x40 on I2C bus 1)", for errors
	open func() (i2c.BusCloser, error)
	addr uint16
	hz   float64

	mu     sync.Mutex
	bus    i2c.BusCloser
	dev    *Dev
	duty   [Channels]int // each channel's last duty in steps; -1: none yet
	closed bool
}

// NewShared describes the chip at addr on the bus open opens, run at hz
// (checked here, as New checks it); nothing is opened until a channel is
// set. name says which chip in errors.
func NewShared(name string, open func() (i2c.BusCloser, error), addr uint16, hz float64) (*Shared, error) {
	if !(hz >= MinFrequency && hz <= MaxFrequency) {
		return nil, fmt.Errorf("%s: %g Hz: the PCA9685 runs at %.1f to %.1f Hz", name, hz, MinFrequency, MaxFrequency)
	}
	s := &Shared{name: name, open: open, addr: addr, hz: hz}
	for i := range s.duty {
		s.duty[i] = -1
	}
	return s, nil
}

// Frequency is the frequency the chip runs at once set up, the nearest
// its prescaler gives.
func (s *Shared) Frequency() float64 { return ActualFrequency(s.hz) }

// PulseSteps is the duty in steps of a pulse of width every period: the
// nearest step, refused when it does not fit the period.
func (s *Shared) PulseSteps(width time.Duration) (int, error) {
	f := s.Frequency()
	if period := time.Duration(float64(time.Second) / f); width < 0 || width > period {
		return 0, fmt.Errorf("%s: a pulse of %v does not fit a period of %v", s.name, width, period)
	}
	return int(math.Round(width.Seconds() * f * Steps)), nil
}

// SetDuty sets channel ch on for duty steps of Steps, setting the chip up
// first when it is not.
func (s *Shared) SetDuty(ch, duty int) error {
	if ch < 0 || ch >= Channels || duty < 0 || duty > Steps {
		return fmt.Errorf("%s: channel %d, duty %d: want a channel 0 to %d and a duty 0 to %d", s.name, ch, duty, Channels-1, Steps)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("%s: closed", s.name)
	}
	s.duty[ch] = duty
	if s.dev == nil {
		return s.setUp()
	}
	if err := s.dev.SetDuty(ch, duty); err != nil {
		s.dev = nil
		return fmt.Errorf("%s: %w", s.name, err)
	}
	return nil
}

// setUp opens the bus if it is not, sets the chip's frequency, and writes
// every channel's duty that was set.
func (s *Shared) setUp() error {
	if s.bus == nil {
		bus, err := s.open()
		if err != nil {
			return fmt.Errorf("%s: open its bus: %w", s.name, err)
		}
		s.bus = bus
	}
	dev, err := New(s.bus, s.addr, s.hz)
	if err != nil {
		return fmt.Errorf("%s: set up: %w", s.name, err)
	}
	for ch, duty := range s.duty {
		if duty < 0 {
			continue
		}
		if err := dev.SetDuty(ch, duty); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	s.dev = dev
	return nil
}

// Off turns channel ch full off as its device is released, if the chip
// was set up; a chip that never answered is left alone.
func (s *Shared) Off(ch int) error {
	if ch < 0 || ch >= Channels {
		return fmt.Errorf("%s: no channel %d", s.name, ch)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.duty[ch] = -1
	if s.dev == nil || s.closed {
		return nil
	}
	if err := s.dev.SetDuty(ch, 0); err != nil {
		return fmt.Errorf("%s: turn off: %w", s.name, err)
	}
	return nil
}

// Close closes the bus, if it was opened; later writes fail. A second
// Close does nothing.
func (s *Shared) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed, s.dev = true, nil
	if s.bus == nil {
		return nil
	}
	if err := s.bus.Close(); err != nil {
		return fmt.Errorf("%s: close its bus: %w", s.name, err)
	}
	return nil
}

// Channel is one output of a Shared chip, as a servo drives it.
type Channel struct {
	Chip *Shared
	N    int
}

// SetPulse sets the channel to a pulse of width every period (1 to 2 ms
// at 50 Hz for a servo), the nearest step.
func (c Channel) SetPulse(width time.Duration) error {
	steps, err := c.Chip.PulseSteps(width)
	if err != nil {
		return err
	}
	if err := c.Chip.SetDuty(c.N, steps); err != nil {
		return fmt.Errorf("channel %d: %w", c.N, err)
	}
	return nil
}

// Off turns the channel off: no more pulses, and a servo goes limp.
func (c Channel) Off() error { return c.Chip.Off(c.N) }

// errClosed is returned by the writes of a device released.
var errClosed = errors.New("released")
