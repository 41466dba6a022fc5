package board

import (
	"math"
	"slices"
	"strings"

	"github.com/openhal/gateway/internal/hw/i2c/pca9685"
)

// softwareServo is why a servo refuses pwm: software.
const softwareServo = "a servo cannot run on software PWM: its edges come up to about 1 ms late " +
	"(hw/pwm measured it), a tenth of a servo's 1 ms range, so it would twitch; use a hardware PWM pin " +
	"(GPIO12, GPIO13, GPIO18 or GPIO19 on a Raspberry Pi) or a PCA9685 channel"

// servoDevice checks a servo: its calibration, speed and safe angle, and
// what makes its pulse — a PCA9685 channel, or a hardware PWM pin
// checked as a pwm device's at the servo's frequency.
func (v *validator) servoDevice(path, id string, dc DeviceConfig, t target, u *usage) {
	v.servoFields(path, dc)
	switch {
	case dc.PWM != nil && dc.PWM.Software:
		v.add(path+".pwm", "%s", softwareServo)
	case v.pwmOnChip(path, id, dc, u):
	default:
		f := dc.ServoFrequency()
		if fs := dc.Frequency; fs != nil && !(*fs >= MinServoFrequency && *fs <= MaxServoFrequency) {
			v.add(path+".frequency", "want %v to %v Hz (a servo reads a pulse every 3 to 25 ms; 50 for analog servos), got %v",
				MinServoFrequency, MaxServoFrequency, *fs)
			f = DefaultServoFrequency
		}
		hw := dc
		hw.Frequency = &f
		v.pwmDevice(path, id, hw, t, u)
	}
}

// servoFields checks a servo's pulses, angles, rate, and that it has a
// safe angle (a servo has no off to default to) or an initial one.
func (v *validator) servoFields(path string, dc DeviceConfig) {
	pulseOK := true
	for _, p := range []struct {
		field string
		us    *int
	}{{"minPulseUs", dc.MinPulseUs}, {"maxPulseUs", dc.MaxPulseUs}} {
		if p.us != nil && (*p.us < MinServoPulseUs || *p.us > MaxServoPulseUs) {
			v.add(path+"."+p.field, "%d µs is outside what a servo reads (%d to %d µs)", *p.us, MinServoPulseUs, MaxServoPulseUs)
			pulseOK = false
		}
	}
	c := dc.ServoConfig()
	if pulseOK && c.MinPulse >= c.MaxPulse {
		v.add(path+".maxPulseUs", "%d µs is not above minPulseUs (%d µs)", c.MaxPulse.Microseconds(), c.MinPulse.Microseconds())
	}
	angleOK := true
	for _, a := range []struct {
		field string
		deg   *float64
	}{{"minAngle", dc.MinAngle}, {"maxAngle", dc.MaxAngle}} {
		if a.deg != nil && (math.IsNaN(*a.deg) || math.IsInf(*a.deg, 0)) {
			v.add(path+"."+a.field, "want a finite number of degrees, got %v", *a.deg)
			angleOK = false
		}
	}
	if angleOK && !(c.MinAngle < c.MaxAngle) {
		v.add(path+".maxAngle", "%v° is not above minAngle (%v°)", c.MaxAngle, c.MinAngle)
	}
	if r := dc.Rate; r != nil && !(*r > 0 && !math.IsInf(*r, 0)) {
		v.add(path+".rate", "want a positive number of degrees a second (leave rate out to move at once), got %v", *r)
	}
	switch {
	case dc.Safe == nil:
		v.add(path+".safe", "required for a servo: the angle an emergency stop, a broken interlock and the shutdown drive it to (a servo has no off), or none with noSafeReason")
	case dc.safeNone() && dc.Initial == nil:
		v.add(path+".initial", "required with safe: none: the angle the servo starts at")
	}
}

// pwmOnChip checks a pwm or servo device whose pwm.chip names a chip
// under chips:, and reports whether it named one (or looked like it):
// the kernel's PWM chips, which pwmDevice checks, are named pwmchipN or
// by their controller (fe20c000.pwm).
func (v *validator) pwmOnChip(path, id string, dc DeviceConfig, u *usage) bool {
	p := dc.PWM
	if p == nil || p.Software || p.Chip == "" {
		return false
	}
	name := p.Chip
	c, ok := u.chipOf(name)
	kernel := isKernelPWMName(name)
	switch {
	case !ok && v.reported("chips."+name):
		return true // declared with faults of its own, reported there
	case !ok && kernel:
		return false
	case !ok && chipName.MatchString(name):
		v.add(path+".pwm.chip", "no chip %q under chips (a kernel PWM chip is named pwmchipN or by its controller, fe20c000.pwm)", name)
		return true
	case !ok:
		return false
	case kernel:
		v.add(path+".pwm.chip", "%q names both chips.%s and a kernel PWM chip: rename the chip", name, name)
		return true
	case c.Type != "pca9685":
		v.add(path+".pwm.chip", "%s: a %s device's chip is a pca9685", describeChip(c), dc.Kind)
		return true
	}
	if dc.Pin != "" {
		v.add(path+".pin", "an output of chips.%s has no pin of the Pi: pwm {chip, channel} says where it is", name)
	}
	switch ch := p.Channel; {
	case ch == nil:
		v.add(path+".pwm.channel", "required: the output of chips.%s, 0 to %d", name, pca9685.Channels-1)
	case *ch < 0 || *ch >= pca9685.Channels:
		v.add(path+".pwm.channel", "chips.%s has outputs 0 to %d, not %d", name, pca9685.Channels-1, *ch)
	default:
		v.claimPWM(path+".pwm.channel", id, "chips."+name, *ch, u)
	}
	v.chipFrequencyOf(path, name, c, dc)
	return true
}

// chipFrequencyOf checks a device's frequency against its PCA9685's, and
// that a servo's chip runs at a servo's frame rate.
func (v *validator) chipFrequencyOf(path, name string, c chipUse, dc DeviceConfig) {
	if c.Frequency == nil {
		return // required, and reported, under chips
	}
	f := *c.Frequency
	if dc.Frequency != nil && *dc.Frequency != f {
		v.add(path+".frequency", "%v Hz, but chips.%s runs its 16 outputs at %v Hz: leave frequency out, or say %v", *dc.Frequency, name, f, f)
	}
	if dc.Kind != KindServo {
		return
	}
	// At most 330 Hz a frame is 3 ms, longer than the longest pulse
	// (MaxServoPulseUs): every pulse fits.
	if f < MinServoFrequency || f > MaxServoFrequency {
		v.add(path+".pwm.chip", "chips.%s runs at %v Hz; a servo wants %v to %v Hz (50 for analog servos)", name, f, MinServoFrequency, MaxServoFrequency)
	}
}

// isKernelPWMName reports a kernel PWM chip's name: pwmchipN, or a
// controller's, which holds a dot (fe20c000.pwm, 1f00098000.pwm).
func isKernelPWMName(s string) bool {
	if strings.Contains(s, ".") {
		return true
	}
	n, ok := strings.CutPrefix(s, "pwmchip")
	return ok && n != "" && strings.Trim(n, "0123456789") == ""
}

// reported reports whether a fault was reported at path or under it.
func (v *validator) reported(path string) bool {
	return slices.ContainsFunc(v.errs, func(e FieldError) bool {
		return e.Path == path || strings.HasPrefix(e.Path, path+".")
	})
}
