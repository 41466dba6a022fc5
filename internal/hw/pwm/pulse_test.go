package pwm

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// A servo's pulse goes to duty_cycle in nanoseconds as it is, within the
// period; one that does not fit, or a closed channel, is refused.
func TestSetPulse(t *testing.T) {
	k := newFakeKernel(t, 2)
	h, err := newHardware(pwmDesc(), k.root, "pwmchip0", 0, 50, 7.5, k.sysfs(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	k.resetLog()
	for _, w := range []time.Duration{1500 * time.Microsecond, 1234567, 20 * time.Millisecond} {
		if err := h.SetPulse(w); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"pwm0/duty_cycle=1500000", "pwm0/duty_cycle=1234567", "pwm0/duty_cycle=20000000"}
	if got := k.writes(); !slices.Equal(got, want) {
		t.Errorf("wrote %q, want %q", got, want)
	}
	if err := h.SetPulse(21 * time.Millisecond); err == nil || !strings.Contains(err.Error(), "does not fit the period of 20ms") {
		t.Errorf("21 ms at 50 Hz: %v", err)
	}
	h.Close()
	if err := h.SetPulse(time.Millisecond); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("after Close: %v", err)
	}
}
