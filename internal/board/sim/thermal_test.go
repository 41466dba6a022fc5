package sim

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock/clocktest"
)

var epoch = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// values is a device.Reporter that keeps what it is told. The thermometer
// reports from the goroutine that advances the fake clock, so after
// Advance returns every value it caused is here.
type values struct {
	published chan struct{} // signalled at each value

	mu   sync.Mutex
	list []device.Reading
}

func (v *values) Value(x any, ts time.Time) {
	v.mu.Lock()
	v.list = append(v.list, device.Reading{Value: x, TS: ts})
	v.mu.Unlock()
	select {
	case v.published <- struct{}{}:
	default:
	}
}
func (v *values) State(device.State, string) {}

func (v *values) take() []device.Reading {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := v.list
	v.list = nil
	return out
}

func degrees(r device.Reading) float64 { return r.Value.(map[string]any)["temperature"].(float64) }

// past is the publication rule, restated: rounded to millidegrees, more
// than thr away.
func past(v, last, thr float64) bool {
	d := math.Round(v*1000) - math.Round(last*1000)
	return math.Abs(d) > math.Round(thr*1000)
}

// model is the expected curve, independent of the code under test.
func model(from, target float64, dt time.Duration) float64 {
	return target + (from-target)*math.Exp(-dt.Seconds()/120)
}

// runThermometer starts a thermometer's Run and waits for its first value.
func runThermometer(t *testing.T, threshold float64, poll time.Duration) (*thermometer, *clocktest.Fake, *values) {
	t.Helper()
	clk := clocktest.NewFake(epoch)
	m := newThermometer(device.Descriptor{ID: Temperature}, clk, threshold, poll)
	rep := &values{published: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		m.Run(ctx, rep)
		close(done)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	select {
	case <-rep.published:
	case <-time.After(10 * time.Second):
		t.Fatal("Run published nothing")
	}
	first := rep.take()
	if len(first) != 1 || degrees(first[0]) != Ambient || !first[0].TS.Equal(epoch) {
		t.Fatalf("first values %+v, want one of %v at %v", first, Ambient, epoch)
	}
	return m, clk, rep
}

func TestThermalCurve(t *testing.T) {
	m, clk, _ := runThermometer(t, 0.1, time.Second)
	m.setHeater(true)
	clk.Advance(120 * time.Second)
	r, _ := m.Read(context.Background())
	want := 20 + 60*(1-1/math.E)
	if got := degrees(r); math.Abs(got-want) > 0.01 {
		t.Errorf("after 120 s of heating: %.4f °C, want %.4f", got, want)
	}
	if !r.TS.Equal(epoch.Add(120 * time.Second)) {
		t.Errorf("read ts %v, want the clock's", r.TS)
	}

	m.setHeater(false)
	hot := degrees(r)
	clk.Advance(120 * time.Second)
	r, _ = m.Read(context.Background())
	want = model(hot, Ambient, 120*time.Second)
	if got := degrees(r); math.Abs(got-want) > 0.01 {
		t.Errorf("after 120 s of cooling: %.4f °C, want %.4f", got, want)
	}
	clk.Advance(time.Hour)
	if r, _ = m.Read(context.Background()); math.Abs(degrees(r)-Ambient) > 0.001 {
		t.Errorf("after an hour of cooling: %v °C, want %v", degrees(r), Ambient)
	}
}

// TestPublishedAtFirstSamplePastThreshold checks each published value
// against the curve: it is the curve at its ts, its ts is a sample instant
// (the poll grid), it differs from the previous one by more than the
// threshold, and the sample before it did not.
func TestPublishedAtFirstSamplePastThreshold(t *testing.T) {
	const thr = 0.1
	m, clk, rep := runThermometer(t, thr, time.Second)
	clk.Advance(10 * time.Second) // idle first: the grid stays anchored at the start
	m.setHeater(true)
	heatAt := clk.Now()
	clk.Advance(300 * time.Second)
	m.setHeater(false)
	coolAt := clk.Now()
	top := model(Ambient, Hot, coolAt.Sub(heatAt))
	clk.Advance(300 * time.Second)

	curve := func(ts time.Time) float64 {
		if ts.Before(coolAt) {
			return model(Ambient, Hot, ts.Sub(heatAt))
		}
		return model(top, Ambient, ts.Sub(coolAt))
	}
	got := rep.take()
	if len(got) < 100 {
		t.Fatalf("%d values published over 600 s of heating and cooling, want many", len(got))
	}
	last := Ambient
	prevTS := epoch
	for i, r := range got {
		v := degrees(r)
		if off := r.TS.Sub(epoch) % time.Second; off != 0 {
			t.Fatalf("value %d at %v: not a sample instant (off by %v)", i, r.TS, off)
		}
		if !r.TS.After(prevTS) {
			t.Fatalf("value %d at %v: not after the previous one (%v)", i, r.TS, prevTS)
		}
		if want := math.Round(curve(r.TS)*1000) / 1000; math.Abs(v-want) > 1e-9 {
			t.Fatalf("value %d = %v at %v, want the curve's %v", i, v, r.TS, want)
		}
		if !past(v, last, thr) {
			t.Fatalf("value %d = %v moved only %v from %v", i, v, math.Abs(v-last), last)
		}
		if before := curve(r.TS.Add(-time.Second)); r.TS.Add(-time.Second).After(prevTS) && past(before, last, thr) {
			t.Fatalf("value %d at %v: the sample a second earlier (%v) was already past the threshold from %v", i, r.TS, before, last)
		}
		last, prevTS = v, r.TS
	}
	if end := curve(clk.Now()); last > 30 || past(end, last, thr) {
		t.Errorf("last value %v, want it within the threshold of the curve's end, %v", last, end)
	}
}

func TestExactCrossingsWithoutPolling(t *testing.T) {
	m, clk, rep := runThermometer(t, 0.5, 0)
	m.setHeater(true)
	clk.Advance(60 * time.Second)
	got := rep.take()
	if len(got) < 10 {
		t.Fatalf("%d values in 60 s of heating, want at least 10", len(got))
	}
	last := Ambient
	for i, r := range got {
		v := degrees(r)
		if d := v - last; d < 0.501-1e-9 || d > 0.501+1e-9 {
			t.Errorf("value %d moved %v, want 0.501, the first step past the threshold 0.5", i, d)
		}
		last = v
	}
}

// TestIdleMeansIdle: at rest, no timer is pending; a change schedules one.
func TestIdleMeansIdle(t *testing.T) {
	m, clk, rep := runThermometer(t, 0.1, time.Second)
	if n := clk.Pending(); n != 0 {
		t.Fatalf("%d timers pending at rest", n)
	}
	clk.Advance(time.Hour)
	if got := rep.take(); len(got) != 0 {
		t.Errorf("published %d values at rest", len(got))
	}

	m.setHeater(true)
	if n := clk.Pending(); n != 1 {
		t.Fatalf("%d timers pending while heating, want 1", n)
	}
	clk.Advance(3 * time.Hour) // at 80 °C by then, to the last threshold
	rep.take()
	if n := clk.Pending(); n != 0 {
		t.Errorf("%d timers pending at the heater's end temperature", n)
	}
	clk.Advance(time.Hour)
	if got := rep.take(); len(got) != 0 {
		t.Errorf("published %d values at the end temperature", len(got))
	}
}

func TestHeaterSwitchedTwiceIsOneChange(t *testing.T) {
	m, clk, rep := runThermometer(t, 0.1, time.Second)
	m.setHeater(true)
	m.setHeater(true) // no new start of the curve
	clk.Advance(120 * time.Second)
	r, _ := m.Read(context.Background())
	if got, want := degrees(r), model(Ambient, Hot, 120*time.Second); math.Abs(got-want) > 0.001 {
		t.Errorf("%v °C, want %v", got, want)
	}
	rep.take()
}
