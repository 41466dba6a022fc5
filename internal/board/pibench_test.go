package board

import (
	"testing"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/board/sim"
)

// TestPiBenchKeepsSimPins: docs/examples/pi-bench.yaml is the sim board's
// bench on a real Pi, so that a gpiozero script that addresses pins runs
// on both (docs/python.md). It must validate, and each of the sim board's
// pin devices must have a device of the same kind on the same pin there
// (a pwm at the same frequency), with the pin in its descriptor.
func TestPiBenchKeepsSimPins(t *testing.T) {
	c := loadExample(t, "pi-bench.yaml")
	byPin := map[string]device.Descriptor{}
	for _, d := range c.Descriptors() {
		if d.Pin != "" {
			byPin[d.Pin] = d
		}
	}
	for _, s := range sim.Descriptors(sim.Config{}) {
		if s.Pin == "" {
			continue
		}
		d, ok := byPin[s.Pin]
		switch {
		case !ok:
			t.Errorf("%s is on %s; pi-bench.yaml has nothing there", s.ID, s.Pin)
		case d.Kind != s.Kind:
			t.Errorf("%s: %s is a %s, sim's %s a %s", s.Pin, d.ID, d.Kind, s.ID, s.Kind)
		case d.Frequency != s.Frequency:
			t.Errorf("%s: %s runs at %g Hz, sim's %s at %g", s.Pin, d.ID, d.Frequency, s.ID, s.Frequency)
		}
	}
	// gpiozero's Button(27) pulls up and takes a low line as pressed; the
	// pin factory reads the device's value as "pressed", which invert
	// makes true for a button to ground.
	if b := c.Devices["bench.button"]; b.Pull != "up" || b.Invert == nil || !*b.Invert {
		t.Errorf("bench.button: pull %q invert %v, want up and true", b.Pull, b.Invert)
	}
}
