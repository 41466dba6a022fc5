package counter

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)

// A reed switch at 10 Hz for 3 s, each closing ringing 0.3 and 0.8 ms
// after it: 30 pulses, 10 Hz, and no bounce counted.
func TestPulseTrain(t *testing.T) {
	c, err := New(0, 5*time.Millisecond, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		at := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		if !c.Edge(at) {
			t.Fatalf("pulse %d not counted", i)
		}
		if c.Edge(at.Add(300*time.Microsecond)) || c.Edge(at.Add(800*time.Microsecond)) {
			t.Fatalf("bounce of pulse %d counted", i)
		}
	}
	end := t0.Add(2950 * time.Millisecond)
	if c.Total() != 30 {
		t.Errorf("total %d, want 30", c.Total())
	}
	if r := c.Rate(end); r != 10 {
		t.Errorf("rate %v Hz, want 10", r)
	}
	if r := c.Rate(end.Add(500 * time.Millisecond)); r != 5 {
		t.Errorf("half a window after the last pulse: %v Hz, want 5", r)
	}
	if r := c.Rate(end.Add(time.Second)); r != 0 {
		t.Errorf("a window after the last pulse: %v Hz, want 0", r)
	}
	if c.Edge(t0) {
		t.Error("an edge before the last counted one was counted")
	}
}

// Past MaxKept pulses in a window the rate is taken over the span of
// those kept: 100 kHz reads 100 kHz.
func TestFastPulses(t *testing.T) {
	c, _ := New(0, 0, time.Second)
	period := 10 * time.Microsecond
	const n = 200_000
	for i := range n {
		c.Edge(t0.Add(time.Duration(i) * period))
	}
	now := t0.Add(n * period)
	if r := c.Rate(now); math.Abs(r-100_000)/100_000 > 1e-3 {
		t.Errorf("rate %v Hz, want 100 kHz", r)
	}
	if c.Total() != n {
		t.Errorf("total %d, want %d", c.Total(), n)
	}
	if len(c.kept) > 2*MaxKept {
		t.Errorf("%d edges kept, want at most %d", len(c.kept), 2*MaxKept)
	}
}

// A total kept across a restart; a missing file is 0, a torn one an
// error naming it.
func TestKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flow.count")
	if n, err := Load(path); err != nil || n != 0 {
		t.Fatalf("no file: %d, %v", n, err)
	}
	if err := Save(path, 12345); err != nil {
		t.Fatal(err)
	}
	n, err := Load(path)
	if err != nil || n != 12345 {
		t.Fatalf("Load = %d, %v", n, err)
	}
	c, _ := New(n, 0, time.Second)
	c.Edge(t0)
	if c.Total() != 12346 {
		t.Errorf("after a restart and a pulse: %d", c.Total())
	}
	os.WriteFile(path, []byte(`{"total":`), 0o600)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("torn file: %v", err)
	}
}

func TestNewRefuses(t *testing.T) {
	if _, err := New(0, -time.Millisecond, time.Second); err == nil {
		t.Error("a negative debounce")
	}
	if _, err := New(0, 0, 0); err == nil {
		t.Error("a zero window")
	}
}
