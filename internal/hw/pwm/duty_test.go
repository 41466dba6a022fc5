package pwm

import (
	"math"
	"testing"
	"time"
)

func TestPeriodOf(t *testing.T) {
	tests := []struct {
		hz   float64
		want time.Duration
		ok   bool
	}{
		{50, 20 * time.Millisecond, true},
		{1000, time.Millisecond, true},
		{25000, 40 * time.Microsecond, true},
		{3000, 333333, true}, // 333333.33 rounds down
		{1.5e6, 667, true},   // 666.67 rounds up
		{1e9, 1, true},       // the shortest period
		{0.5, 2 * time.Second, true},
		{2e9, 1, true},  // 0.5 ns rounds to 1
		{3e9, 0, false}, // 0.33 ns rounds to 0
		{0, 0, false},
		{-50, 0, false},
		{math.NaN(), 0, false},
		{math.Inf(1), 0, false},
		{1e-9, 0, false}, // a period of 31 years
	}
	for _, tt := range tests {
		got, err := periodOf(tt.hz)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("periodOf(%v) = %v, %v; want %v, ok %v", tt.hz, got, err, tt.want, tt.ok)
		}
	}
}

func TestHighTime(t *testing.T) {
	tests := []struct {
		period time.Duration
		value  float64
		want   time.Duration
	}{
		{20 * time.Millisecond, 0, 0},
		{20 * time.Millisecond, 100, 20 * time.Millisecond},
		{20 * time.Millisecond, 50, 10 * time.Millisecond},
		{20 * time.Millisecond, 7.5, 1500 * time.Microsecond},
		{40 * time.Microsecond, 33.3, 13320},
		{333333, 50, 166667}, // 166666.5 rounds half away from zero
		{1000, 0.04, 0},      // 0.4 ns
		{1000, 0.05, 1},      // 0.5 ns
		{1000, 99.96, 1000},  // 999.6 ns
		{1000, 99.94, 999},   // 999.4 ns
		{maxPeriod, 100, maxPeriod},
		{maxPeriod, 50, maxPeriod / 2},
	}
	for _, tt := range tests {
		if got := highTime(tt.period, tt.value); got != tt.want {
			t.Errorf("highTime(%d, %v) = %d, want %d", tt.period, tt.value, got, tt.want)
		}
	}
}

func TestDutyValue(t *testing.T) {
	tests := []struct {
		v  any
		ok bool
	}{
		{0.0, true}, {100.0, true}, {42.5, true},
		{-0.001, false}, {100.001, false}, {math.NaN(), false}, {math.Inf(1), false},
		{50, false}, // an int: values arrive as encoding/json decodes them
		{"50", false}, {true, false}, {nil, false},
	}
	for _, tt := range tests {
		if _, err := dutyValue(tt.v); (err == nil) != tt.ok {
			t.Errorf("dutyValue(%#v) = %v, want ok %v", tt.v, err, tt.ok)
		}
	}
}

func TestSchema(t *testing.T) {
	s := Schema()
	if s.Type != "number" || *s.Minimum != 0 || *s.Maximum != 100 || s.Unit != "%" {
		t.Errorf("Schema() = %+v", s)
	}
	for v, ok := range map[float64]bool{0: true, 100: true, 50: true, -1: false, 101: false} {
		if err := s.Validate(v); (err == nil) != ok {
			t.Errorf("Schema().Validate(%v) = %v, want ok %v", v, err, ok)
		}
	}
}
