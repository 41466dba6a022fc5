package pwm

import (
	"fmt"
	"math"
	"time"

	"github.com/openhal/gateway/device"
)

// Schema is the value schema of every PWM output (openhal-0.1 §6): the
// duty cycle, a number from 0 to 100 in %. The frequency is configuration,
// not part of the value.
func Schema() device.Schema {
	lo, hi := 0.0, 100.0
	return device.Schema{Type: device.TypeNumber, Minimum: &lo, Maximum: &hi, Unit: "%"}
}

// describe gives desc the kind and schema that the spec fixes for a PWM
// output; the rest (id, access, risk, safe value) is the caller's.
func describe(desc device.Descriptor) device.Descriptor {
	desc.Kind = device.KindPWM
	desc.Schema = Schema()
	return desc
}

// maxPeriod bounds a period so that period·100 stays exact in a float64
// and far from overflowing an int64 of nanoseconds: about 52 days.
const maxPeriod = 1 << 52

// periodOf returns the period, in whole nanoseconds, of a frequency in Hz.
// The kernel's sysfs interface and time.Duration both count nanoseconds,
// so the period is rounded to the nearest one: 1 kHz is exactly 1000000
// ns, 3 kHz is 333333 ns (3000.003 Hz).
func periodOf(freqHz float64) (time.Duration, error) {
	if math.IsNaN(freqHz) || math.IsInf(freqHz, 0) || freqHz <= 0 {
		return 0, fmt.Errorf("frequency %v Hz: want a positive number", freqHz)
	}
	p := math.Round(1e9 / freqHz)
	if p < 1 {
		return 0, fmt.Errorf("frequency %v Hz: period below 1 ns", freqHz)
	}
	if p > maxPeriod {
		return 0, fmt.Errorf("frequency %v Hz: period above %v", freqHz, time.Duration(maxPeriod))
	}
	return time.Duration(p), nil
}

// dutyValue checks a written value: a number (float64, as encoding/json
// decodes it) from 0 to 100. The Hub has already checked it against
// Schema; a device that is handed something else refuses it rather than
// clamping it, since a clamped duty cycle is not what was asked for.
func dutyValue(v any) (float64, error) {
	f, ok := v.(float64)
	if !ok {
		return 0, fmt.Errorf("value %v (%T) is not a number", v, v)
	}
	if math.IsNaN(f) || f < 0 || f > 100 {
		return 0, fmt.Errorf("duty cycle %v%% is outside 0..100", f)
	}
	return f, nil
}

// highTime is the part of period that the output spends high at a duty
// cycle of value %, rounded to the nearest nanosecond. It is 0 at 0 %,
// period at 100 %, and never outside 0..period.
func highTime(period time.Duration, value float64) time.Duration {
	h := time.Duration(math.Round(float64(period) * value / 100))
	return min(max(h, 0), period)
}
