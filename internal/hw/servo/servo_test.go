package servo

import (
	"math"
	"strings"
	"testing"
	"time"
)

// gpiozero's AngularServo defaults: 1 to 2 ms for −90° to 90°.
var angular = Config{MinPulse: time.Millisecond, MaxPulse: 2 * time.Millisecond, MinAngle: -90, MaxAngle: 90}

func TestPulse(t *testing.T) {
	for angle, want := range map[float64]time.Duration{
		-90: time.Millisecond, 0: 1500 * time.Microsecond, 90: 2 * time.Millisecond, 45: 1750 * time.Microsecond,
	} {
		if got, err := angular.Pulse(angle); err != nil || got != want {
			t.Errorf("Pulse(%g) = %v, %v; want %v", angle, got, err, want)
		}
	}
	for _, angle := range []float64{-90.5, 91, math.NaN(), math.Inf(1)} {
		if _, err := angular.Pulse(angle); err == nil || !strings.Contains(err.Error(), "outside -90° to 90°") {
			t.Errorf("Pulse(%g): %v", angle, err)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		c    Config
		want string
	}{
		{angular, ""},
		{Config{MinPulse: 2 * time.Millisecond, MaxPulse: time.Millisecond, MaxAngle: 180}, "minPulse < maxPulse"},
		{Config{MinPulse: 0, MaxPulse: time.Millisecond, MaxAngle: 180}, "minPulse < maxPulse"},
		{Config{MinPulse: time.Millisecond, MaxPulse: 6 * time.Millisecond, MaxAngle: 180}, "<= 5ms"},
		{Config{MinPulse: time.Millisecond, MaxPulse: 2 * time.Millisecond, MinAngle: 10, MaxAngle: 10}, "minAngle < maxAngle"},
		{Config{MinPulse: time.Millisecond, MaxPulse: 2 * time.Millisecond, MaxAngle: math.NaN()}, "minAngle < maxAngle"},
		{Config{MinPulse: time.Millisecond, MaxPulse: 2 * time.Millisecond, MaxAngle: 180, Rate: -1}, "rate -1"},
		{Config{MinPulse: time.Millisecond, MaxPulse: 2 * time.Millisecond, MaxAngle: 180, Rate: math.NaN()}, "rate NaN"},
	} {
		err := tc.c.Check()
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.c, err, tc.want)
		}
	}
}

var t0 = time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)

// At 60 °/s a sweep from −90° to 90° takes 3 s, through every angle
// between; a new target mid-way turns from where the servo is.
func TestMoverRate(t *testing.T) {
	c := angular
	c.Rate = 60
	m, err := NewMover(c, -90, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Target(90, t0); err != nil {
		t.Fatal(err)
	}
	if got := m.Arrival(); !got.Equal(t0.Add(3 * time.Second)) {
		t.Errorf("arrival %v, want 3 s after", got.Sub(t0))
	}
	for _, step := range []struct {
		after   time.Duration
		angle   float64
		arrived bool
	}{{0, -90, false}, {time.Second, -30, false}, {1500 * time.Millisecond, 0, false}, {3 * time.Second, 90, true}, {time.Hour, 90, true}} {
		a, ok := m.At(t0.Add(step.after))
		if math.Abs(a-step.angle) > 1e-9 || ok != step.arrived {
			t.Errorf("after %v: %g°, arrived %v; want %g°, %v", step.after, a, ok, step.angle, step.arrived)
		}
	}
	m.Target(-90, t0.Add(time.Second)) // at −30° then, back toward −90°
	if a, _ := m.At(t0.Add(1500 * time.Millisecond)); math.Abs(a-(-60)) > 1e-9 {
		t.Errorf("half a second after turning: %g°, want -60°", a)
	}
	if err := m.Target(120, t0); err == nil {
		t.Error("a target outside the angles was taken")
	}
	if a, _ := m.At(t0.Add(1500 * time.Millisecond)); math.Abs(a-(-60)) > 1e-9 {
		t.Errorf("a refused target moved the servo: %g°", a)
	}
}

// With no rate the commanded angle is the target at once.
func TestMoverUnlimited(t *testing.T) {
	m, err := NewMover(angular, 0, t0)
	if err != nil {
		t.Fatal(err)
	}
	m.Target(90, t0)
	if a, ok := m.At(t0); a != 90 || !ok {
		t.Errorf("%g°, %v; want 90° at once", a, ok)
	}
	if _, err := NewMover(angular, 100, t0); err == nil {
		t.Error("a start outside the angles was taken")
	}
}
