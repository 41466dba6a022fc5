package board

import (
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/hw/i2c/pca9685"
	"github.com/openhal/gateway/internal/hw/servo"
)

// KindServo is the configuration's kind of a hobby servo (issue 30,
// point 4); its descriptors are of the gateway's extension kind
// device.KindServo, x.servo, whose value is an angle in degrees.
const KindServo = "servo"

// A servo's defaults and bounds. The pulses are gpiozero's Servo's
// defaults; no hobby servo reads a pulse outside 400..2600 µs, and one
// driven past its end stops stalls and burns.
const (
	DefaultMinPulseUs = 1000
	DefaultMaxPulseUs = 2000
	MinServoPulseUs   = 400
	MaxServoPulseUs   = 2600
	DefaultMinAngle   = 0.0
	DefaultMaxAngle   = 180.0
	// DefaultServoFrequency is a servo's frame rate on the Pi's hardware
	// PWM: a pulse every 20 ms, as analog servos want.
	DefaultServoFrequency = 50.0
	// MinServoFrequency and MaxServoFrequency bound it: digital servos
	// take up to about 330 Hz, none a frame longer than 25 ms.
	MinServoFrequency = 40.0
	MaxServoFrequency = 330.0
)

// degrees is the SenML unit of an angle (RFC 8798 registered "deg";
// RFC 8428 has only "rad").
const degrees = "deg"

func orInt(p *int, d int) int {
	if p == nil {
		return d
	}
	return *p
}

func orFloat(p *float64, d float64) float64 {
	if p == nil {
		return d
	}
	return *p
}

// ServoConfig is a servo's calibration and speed limit as hw/servo
// takes them, with the defaults of the fields the file leaves out.
func (dc DeviceConfig) ServoConfig() servo.Config {
	return servo.Config{
		MinPulse: time.Duration(orInt(dc.MinPulseUs, DefaultMinPulseUs)) * time.Microsecond,
		MaxPulse: time.Duration(orInt(dc.MaxPulseUs, DefaultMaxPulseUs)) * time.Microsecond,
		MinAngle: orFloat(dc.MinAngle, DefaultMinAngle),
		MaxAngle: orFloat(dc.MaxAngle, DefaultMaxAngle),
		Rate:     orFloat(dc.Rate, 0),
	}
}

// ServoFrequency is a servo's frequency on a hardware PWM pin.
func (dc DeviceConfig) ServoFrequency() float64 {
	return orFloat(dc.Frequency, DefaultServoFrequency)
}

// servoDescriptor gives d, a servo's, the kind x.servo, its angle range
// as the value's schema, and its pulses and rate as the descriptor's
// extensions, and its pin and frequency (onChip puts a PCA9685's in
// their place).
func (dc DeviceConfig) servoDescriptor(d device.Descriptor) device.Descriptor {
	c := dc.ServoConfig()
	lo, hi := c.MinAngle, c.MaxAngle
	d.Kind = device.KindServo
	d.Schema = device.Schema{Type: device.TypeNumber, Minimum: &lo, Maximum: &hi, Unit: degrees}
	d.MinPulseUs, d.MaxPulseUs = float64(c.MinPulse.Microseconds()), float64(c.MaxPulse.Microseconds())
	d.Rate = c.Rate
	d.Pin, d.Frequency = dc.Pin, dc.ServoFrequency()
	return d
}

// PCA9685 returns the name and declaration of the PCA9685 a pwm or servo
// device's pwm.chip names, if it names one under chips.
func (c *Config) PCA9685(dc DeviceConfig) (string, ChipConfig, bool) {
	if dc.PWM == nil || dc.PWM.Software || dc.PWM.Chip == "" {
		return "", ChipConfig{}, false
	}
	cc, ok := c.Chips[dc.PWM.Chip]
	if !ok || cc.Type != "pca9685" {
		return "", ChipConfig{}, false
	}
	return dc.PWM.Chip, cc, true
}

// onChip says where a device on a PCA9685 output sits: its bus, address,
// chip and channel, and the frequency the chip's prescaler really gives.
func (c *Config) onChip(d device.Descriptor, dc DeviceConfig) device.Descriptor {
	_, cc, ok := c.PCA9685(dc)
	if !ok || cc.Address == nil || cc.Frequency == nil {
		return d
	}
	d.Bus, d.Address, d.Chip = i2cBusPath(cc.Bus), hexAddr(*cc.Address), cc.Type
	d.Channel = dc.PWM.Channel
	d.Frequency = pca9685.ActualFrequency(*cc.Frequency)
	d.Pin = ""
	return d
}
