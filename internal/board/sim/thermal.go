package sim

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock"
)

// The thermal model of sim.temperature: first order, toward Hot while the
// heater is on and toward Ambient while it is off.
const (
	Ambient      = 20.0 // °C, where the bench starts and cools to
	Hot          = 80.0 // °C, where the heater would take it in the end
	TimeConstant = 120 * time.Second
)

// Published temperatures are rounded to a thousandth of a degree, and
// compared in those steps (millidegrees), so that "moved by more than the
// threshold" is exact and the same for the test that checks it.
const perDegree = 1000

// thermometer is sim.temperature. The temperature is computed from the
// time since the heater last changed, T(t) = target + (T0-target)·e^(-t/τ),
// so that any instant can be evaluated without stepping.
//
// As a Runner it behaves like a sensor sampled every poll interval that
// publishes a sample when it differs from the last published value by more
// than the threshold (both rounded to 0.001 °C); but instead of sampling,
// it computes when the curve crosses that threshold and sets one timer for
// the first sample past it.
// At rest (at the target, or too close to it to move a threshold's worth)
// it sets no timer at all. A change of the heater reschedules.
type thermometer struct {
	desc      device.Descriptor
	clk       clock.Clock
	threshold int64         // millidegrees, at least 1
	poll      time.Duration // 0: publish at the crossing itself

	mu     sync.Mutex
	from   float64   // temperature at since
	since  time.Time // last change of the heater
	heater bool

	rep    device.Reporter // set while Run runs
	last   int64           // last published temperature, millidegrees
	anchor time.Time       // origin of the sampling grid
	timer  clock.Timer
	gen    uint64 // invalidates the callbacks of replaced timers
}

func newThermometer(desc device.Descriptor, clk clock.Clock, threshold float64, poll time.Duration) *thermometer {
	return &thermometer{
		desc: desc, clk: clk, threshold: max(milli(threshold), 1), poll: max(poll, 0),
		from: Ambient, since: clk.Now(),
	}
}

func (m *thermometer) Descriptor() device.Descriptor { return m.desc }

// Read returns the temperature now.
func (m *thermometer) Read(context.Context) (device.Reading, error) {
	now := m.clk.Now()
	m.mu.Lock()
	t := milli(m.at(now))
	m.mu.Unlock()
	return device.Reading{Value: celsius(t), TS: now}, nil
}

// Temperature returns the temperature now, for the meter.
func (m *thermometer) Temperature() float64 {
	now := m.clk.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.at(now)
}

// Run publishes the current temperature and then each threshold crossing,
// until ctx is done.
func (m *thermometer) Run(ctx context.Context, r device.Reporter) {
	m.mu.Lock()
	now := m.clk.Now()
	m.rep, m.anchor = r, now
	m.publish(now)
	m.schedule(now)
	m.mu.Unlock()

	<-ctx.Done()

	m.mu.Lock()
	if m.timer != nil {
		m.timer.Stop()
	}
	m.gen++
	m.rep, m.timer = nil, nil
	m.mu.Unlock()
}

// setHeater switches the heater and, if Run runs, reschedules.
func (m *thermometer) setHeater(on bool) {
	now := m.clk.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if on == m.heater {
		return
	}
	m.from, m.since, m.heater = m.at(now), now, on
	if m.rep != nil {
		m.schedule(now)
	}
}

func (m *thermometer) target() float64 {
	if m.heater {
		return Hot
	}
	return Ambient
}

// at evaluates the model at t. Called with mu held.
func (m *thermometer) at(t time.Time) float64 {
	dt := max(t.Sub(m.since).Seconds(), 0)
	tgt := m.target()
	return tgt + (m.from-tgt)*math.Exp(-dt/TimeConstant.Seconds())
}

// publish reports the temperature at now. Called with mu held, so that
// values go out in time order; the Reporter never blocks.
func (m *thermometer) publish(now time.Time) {
	m.last = milli(m.at(now))
	m.rep.Value(celsius(m.last), now)
}

// schedule replaces the pending timer with one for the next publication,
// if there will be one. Called with mu held.
func (m *thermometer) schedule(now time.Time) {
	if m.timer != nil {
		m.timer.Stop()
		m.timer = nil
	}
	m.gen++
	when, ok := m.next(now)
	if !ok {
		return
	}
	gen := m.gen
	m.timer = m.clk.AfterFunc(when.Sub(now), func() { m.fire(gen) })
}

func (m *thermometer) fire(gen uint64) {
	now := m.clk.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if gen != m.gen || m.rep == nil {
		return // replaced or stopped after it was due
	}
	if m.moved(m.at(now)) {
		m.publish(now)
	}
	m.schedule(now)
}

// moved reports whether t, rounded, is more than the threshold away from
// the last published value.
func (m *thermometer) moved(t float64) bool {
	d := milli(t) - m.last
	return d > m.threshold || -d > m.threshold
}

// margin puts a timer just past the instant the curve meets the threshold,
// where its rounded value is past it (the rule is strict).
const margin = time.Microsecond

// next returns when the temperature will first be sampled more than the
// threshold away from the last published value, or false if never.
func (m *thermometer) next(now time.Time) (time.Time, bool) {
	t, tgt := m.at(now), m.target()
	// The levels where the rounded value first moves more than the
	// threshold: math.Round(x) > n exactly when x >= n+0.5.
	up := (float64(m.last+m.threshold) + 0.5) / perDegree
	down := (float64(m.last-m.threshold) - 0.5) / perDegree
	var dt float64 // seconds from now to the crossing
	switch {
	case m.moved(t):
		dt = 0 // already past: the next sample publishes
	case t < tgt:
		dt = crossing(t, tgt, up)
	case t > tgt:
		dt = crossing(t, tgt, down)
	default:
		return time.Time{}, false
	}
	if dt < 0 || dt > (24*time.Hour).Seconds() {
		return time.Time{}, false // never, or too near the target to matter
	}
	when := now.Add(time.Duration(math.Ceil(dt*1e9)) + margin)
	if m.poll > 0 {
		k := (when.Sub(m.anchor) + m.poll - 1) / m.poll
		when = m.anchor.Add(k * m.poll)
	}
	return when, true
}

// crossing returns the seconds after which a curve at t heading for tgt
// reaches level, or -1 if level is not strictly before tgt.
func crossing(t, tgt, level float64) float64 {
	if (level-tgt)*(t-tgt) <= 0 {
		return -1
	}
	return max(TimeConstant.Seconds()*math.Log((t-tgt)/(level-tgt)), 0)
}

// milli rounds degrees to millidegrees.
func milli(t float64) int64 { return int64(math.Round(t * perDegree)) }

// celsius is the value of sim.temperature for a temperature in
// millidegrees.
func celsius(m int64) map[string]any {
	return map[string]any{"temperature": float64(m) / perDegree}
}
