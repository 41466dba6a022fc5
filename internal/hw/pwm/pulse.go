package pwm

import (
	"strconv"
	"time"
)

// SetPulse sets the channel's high time to width, rounded to the
// nanosecond as the kernel takes it: the pulse a servo reads, which a
// duty cycle in % would round. It is refused when it does not fit the
// period.
func (h *Hardware) SetPulse(width time.Duration) error {
	if width < 0 || width > h.period {
		return h.errorf("a pulse of %v does not fit the period of %v", width, h.period)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return h.errorf("closed")
	}
	return h.set("duty_cycle", strconv.FormatInt(int64(width), 10))
}
