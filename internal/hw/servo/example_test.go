package servo_test

import (
	"context"
	"fmt"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock/clocktest"
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

// pulses prints each pulse a servo is sent.
type pulses struct{}

func (pulses) SetPulse(w time.Duration) error { fmt.Println(w); return nil }

func ExampleDevice() {
	// A 0..180° servo on 1..2 ms, moved at 450 °/s: a frame (20 ms) is
	// 9°. Here the clock is a fake that the example steps.
	clk := clocktest.NewFake(time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC))
	c := servo.Config{MinPulse: time.Millisecond, MaxPulse: 2 * time.Millisecond, MaxAngle: 180, Rate: 450}
	d, _ := servo.NewDevice(device.Descriptor{ID: "arm.base"}, c, pulses{}, 0, 20*time.Millisecond, clk)
	d.Write(context.Background(), device.WriteRequest{Value: 27.0}) // returns at once: the move is under way
	clk.Advance(time.Second)
	fmt.Println("moving:", d.Moving())
	// Output:
	// 1ms
	// 1.05ms
	// 1.1ms
	// 1.15ms
	// moving: false
}
