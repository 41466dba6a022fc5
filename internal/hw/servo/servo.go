// Package servo turns a hobby servo's angle into the pulse that commands
// it, and moves it toward a new angle no faster than a rate: the motion
// an agent asks for is bounded in speed as well as in range, so a sweep
// across the range takes the time a person can see and stop.
//
// A servo reads the width of a pulse repeated every frame (20 ms, 50 Hz):
// MinPulse for MinAngle, MaxPulse for MaxAngle, linearly between (as
// gpiozero's AngularServo maps them; its defaults are 1 and 2 ms for −90°
// and 90°). The PWM that makes the pulse (a PCA9685 channel, the Pi's
// hardware PWM) is the caller's.
package servo

import (
	"fmt"
	"math"
	"time"
)

// MaxPulse bounds a configured pulse: no hobby servo reads wider than
// about 2.7 ms, and a frame at 50 Hz is 20.
const MaxPulse = 5 * time.Millisecond

// Config is one servo's calibration and speed limit.
type Config struct {
	MinPulse, MaxPulse time.Duration // the pulses at MinAngle and MaxAngle
	MinAngle, MaxAngle float64       // degrees
	// Rate is the fastest the commanded angle moves, in degrees a
	// second; 0 moves at once, at the servo's own speed.
	Rate float64
}

// Check reports what is wrong with c, naming the field.
func (c Config) Check() error {
	switch {
	case c.MinPulse <= 0 || c.MaxPulse > MaxPulse || c.MinPulse >= c.MaxPulse:
		return fmt.Errorf("servo: pulses %v to %v: want 0 < minPulse < maxPulse <= %v", c.MinPulse, c.MaxPulse, MaxPulse)
	case !(c.MinAngle < c.MaxAngle) || math.IsInf(c.MinAngle, 0) || math.IsInf(c.MaxAngle, 0):
		return fmt.Errorf("servo: angles %g to %g: want minAngle < maxAngle", c.MinAngle, c.MaxAngle)
	case !(c.Rate >= 0) || math.IsInf(c.Rate, 0):
		return fmt.Errorf("servo: rate %g °/s: want 0 (unlimited) or more", c.Rate)
	}
	return nil
}

// Pulse is the pulse width that commands angle, refused outside the
// configured angles.
func (c Config) Pulse(angle float64) (time.Duration, error) {
	if !(angle >= c.MinAngle && angle <= c.MaxAngle) {
		return 0, fmt.Errorf("servo: %g° is outside %g° to %g°", angle, c.MinAngle, c.MaxAngle)
	}
	f := (angle - c.MinAngle) / (c.MaxAngle - c.MinAngle)
	return c.MinPulse + time.Duration(math.Round(f*float64(c.MaxPulse-c.MinPulse))), nil
}

// Mover is the commanded angle of one servo on its way to a target. It
// is not safe for concurrent use: one goroutine drives a servo.
type Mover struct {
	c            Config
	from, target float64
	since        time.Time // when it left from
}

// NewMover starts at angle, at rest, at now.
func NewMover(c Config, angle float64, now time.Time) (*Mover, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	if _, err := c.Pulse(angle); err != nil {
		return nil, err
	}
	return &Mover{c: c, from: angle, target: angle, since: now}, nil
}

// Target sets a new target at now, from wherever the servo is commanded
// to be then: a target changed mid-way turns it without a jump.
func (m *Mover) Target(angle float64, now time.Time) error {
	if _, err := m.c.Pulse(angle); err != nil {
		return err
	}
	m.from, _ = m.At(now)
	m.target, m.since = angle, now
	return nil
}

// At is the angle to command at now, and whether it is the target.
func (m *Mover) At(now time.Time) (angle float64, arrived bool) {
	if m.c.Rate == 0 || m.from == m.target {
		return m.target, true
	}
	moved := m.c.Rate * now.Sub(m.since).Seconds()
	dist := m.target - m.from
	if moved >= math.Abs(dist) {
		return m.target, true
	}
	return m.from + math.Copysign(max(moved, 0), dist), false
}

// Arrival is when the servo reaches its target, moving from its last
// Target call at Rate; the zero time with no rate.
func (m *Mover) Arrival() time.Time {
	if m.c.Rate == 0 {
		return time.Time{}
	}
	return m.since.Add(time.Duration(math.Abs(m.target-m.from) / m.c.Rate * float64(time.Second)))
}

// Set puts the servo at angle at once, at rest, at now: what a stop does,
// which nothing may slow.
func (m *Mover) Set(angle float64, now time.Time) error {
	if _, err := m.c.Pulse(angle); err != nil {
		return err
	}
	m.from, m.target, m.since = angle, angle, now
	return nil
}
