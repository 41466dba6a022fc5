package cli

import (
	"testing"
	"time"
)

func TestAgeWords(t *testing.T) {
	tests := []struct {
		age  time.Duration
		want string
	}{
		{0, "just now"},
		{999 * time.Millisecond, "just now"},
		{time.Second, "1s ago"},
		{59*time.Second + 900*time.Millisecond, "59s ago"},
		{time.Minute, "1m ago"},
		{59 * time.Minute, "59m ago"},
		{time.Hour, "1h ago"},
		{47 * time.Hour, "47h ago"},
		{48 * time.Hour, "2d ago"},
		{400 * 24 * time.Hour, "400d ago"},
	}
	for _, tt := range tests {
		if got := ageWords(tt.age); got != tt.want {
			t.Errorf("ageWords(%v) = %q, want %q", tt.age, got, tt.want)
		}
	}
}
