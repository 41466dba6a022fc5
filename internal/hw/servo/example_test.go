package servo_test

import (
	"fmt"
	"time"

	"github.com/openhal/gateway/internal/hw/servo"
)

func Example() {
	// A servo from 0° to 180° on 0.5 to 2.5 ms, moved at 90 °/s at most.
	c := servo.Config{MinPulse: 500 * time.Microsecond, MaxPulse: 2500 * time.Microsecond, MinAngle: 0, MaxAngle: 180, Rate: 90}
	start := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	m, _ := servo.NewMover(c, 0, start)
	m.Target(180, start)
	for _, after := range []time.Duration{0, 500 * time.Millisecond, time.Second, 2 * time.Second} {
		angle, arrived := m.At(start.Add(after))
		pulse, _ := c.Pulse(angle)
		fmt.Printf("%v: %g° (%v) arrived=%v\n", after, angle, pulse, arrived)
	}
	// Output:
	// 0s: 0° (500µs) arrived=false
	// 500ms: 45° (1ms) arrived=false
	// 1s: 90° (1.5ms) arrived=false
	// 2s: 180° (2.5ms) arrived=true
}
