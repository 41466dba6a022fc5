package sensor

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock/clocktest"
)

// wait bounds every wait for an event; nothing sleeps.
const wait = 5 * time.Second

const interval = 10 * time.Second

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// step is one scripted Sense: its result, and, when hold is not nil, a
// hang that ignores ctx (as a stuck I²C transfer does) until hold closes.
type step struct {
	vals map[string]float64
	err  error
	hold chan struct{}
}

// fakeSensor plays a script of steps and counts its calls, and how many
// ran at once.
type fakeSensor struct {
	qs      []Quantity
	started chan int // the number of each call, as it starts

	mu                         sync.Mutex
	script                     []step
	calls, running, maxRunning int
}

func newFake(qs []Quantity, script ...step) *fakeSensor {
	return &fakeSensor{qs: qs, script: script, started: make(chan int, 64)}
}

func (f *fakeSensor) Quantities() []Quantity { return f.qs }

func (f *fakeSensor) Sense(ctx context.Context) (map[string]float64, error) {
	f.mu.Lock()
	f.calls++
	n := f.calls
	f.running++
	f.maxRunning = max(f.maxRunning, f.running)
	st := step{err: errors.New("script exhausted")}
	if len(f.script) > 0 {
		st, f.script = f.script[0], f.script[1:]
	}
	f.mu.Unlock()
	f.started <- n
	if st.hold != nil {
		<-st.hold
	}
	f.mu.Lock()
	f.running--
	f.mu.Unlock()
	return st.vals, st.err
}

func (f *fakeSensor) counts() (calls, maxRunning int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls, f.maxRunning
}

func (f *fakeSensor) waitStarted(t *testing.T, n int) {
	t.Helper()
	select {
	case got := <-f.started:
		if got != n {
			t.Fatalf("Sense call %d started, want %d", got, n)
		}
	case <-time.After(wait):
		t.Fatalf("Sense call %d did not start", n)
	}
}

var (
	temp = Quantity{Name: "temperature", Unit: "Cel"}
	hum  = Quantity{Name: "humidity", Unit: "%RH"}
	pres = Quantity{Name: "pressure", Unit: "Pa"}
)

func vals(t, h float64) map[string]float64 {
	return map[string]float64{"temperature": t, "humidity": h}
}

// report is one call of a Reporter: a value, or a state.
type report struct {
	value any // nil for a state
	ts    time.Time
	state device.State
	fault string
}

func (r report) String() string {
	if r.value != nil {
		return fmt.Sprintf("value %v", r.value)
	}
	return fmt.Sprintf("state %s %q", r.state, r.fault)
}

// recorder records what a device reports, and hands it on to next when
// that is set.
type recorder struct {
	ch   chan report
	next device.Reporter
}

func newRecorder() *recorder { return &recorder{ch: make(chan report, 64)} }

func (r *recorder) Value(v any, ts time.Time) {
	r.ch <- report{value: v, ts: ts}
	if r.next != nil {
		r.next.Value(v, ts)
	}
}

func (r *recorder) State(s device.State, fault string) {
	r.ch <- report{state: s, fault: fault}
	if r.next != nil {
		r.next.State(s, fault)
	}
}

// poll is what one poll reported: its state and the values it published.
type poll struct {
	state  device.State
	fault  string
	values []any
}

// pollDone waits for the end of the next poll: its state (every poll
// reports one), then its timer for the next poll, armed once the poll has
// returned, so that all it published is in. pending is the number of
// timers that makes on clk.
func pollDone(t *testing.T, clk *clocktest.Fake, rec *recorder, pending int) poll {
	t.Helper()
	var p poll
	select {
	case r := <-rec.ch:
		if r.value != nil {
			t.Fatalf("poll reported %v before its state", r)
		}
		p.state, p.fault = r.state, r.fault
	case <-time.After(wait):
		t.Fatal("no poll ended")
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := clk.WaitPending(ctx, pending); err != nil {
		t.Fatalf("next poll not armed: %v", err)
	}
	for {
		select {
		case r := <-rec.ch:
			if r.value == nil {
				t.Fatalf("poll reported a second state, %v", r)
			}
			p.values = append(p.values, r.value)
		default:
			return p
		}
	}
}

// run starts d.Run and returns a function that stops it and waits for it.
func run(t *testing.T, d *Device, r device.Reporter) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Run(ctx, r)
	}()
	stop = func() {
		cancel()
		select {
		case <-done:
		case <-time.After(wait):
			t.Fatal("Run did not return after its ctx ended")
		}
	}
	t.Cleanup(stop)
	return stop
}

// running returns the measurement in flight.
func (d *Device) running(t *testing.T) *measurement {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cur == nil {
		t.Fatal("no measurement running")
	}
	return d.cur
}

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(wait):
		t.Fatalf("%s did not happen", what)
	}
}

func desc() device.Descriptor {
	return device.Descriptor{ID: "bench.climate", Kind: device.KindSensor, Source: "board",
		Access: device.AccessRead, Risk: device.RiskLow}
}

func TestDescriptorSchema(t *testing.T) {
	d := NewDevice(desc(), newFake([]Quantity{temp, hum}), PollOpts{Interval: interval}, clocktest.NewFake(t0))
	want := device.Schema{Type: device.TypeObject, Properties: map[string]device.Schema{
		"temperature": {Type: device.TypeNumber, Unit: "Cel"},
		"humidity":    {Type: device.TypeNumber, Unit: "%RH"},
	}}
	if got := d.Descriptor().Schema; !reflect.DeepEqual(got, want) {
		t.Errorf("schema = %+v, want %+v", got, want)
	}

	own := desc()
	own.Schema = device.Schema{Type: device.TypeObject}
	d = NewDevice(own, newFake([]Quantity{temp}), PollOpts{Interval: interval}, clocktest.NewFake(t0))
	if got := d.Descriptor().Schema; !reflect.DeepEqual(got, own.Schema) {
		t.Errorf("given schema replaced by %+v", got)
	}
}

func TestDefaults(t *testing.T) {
	for _, tc := range []struct {
		opts               PollOpts
		interval, deadline time.Duration
	}{
		{PollOpts{}, DefaultInterval, 5 * time.Second},
		{PollOpts{Interval: time.Second}, time.Second, time.Second},
		{PollOpts{Interval: time.Minute}, time.Minute, 5 * time.Second},
		{PollOpts{Interval: time.Minute, Deadline: 20 * time.Second}, time.Minute, 20 * time.Second},
	} {
		d := NewDevice(desc(), newFake([]Quantity{temp}), tc.opts, clocktest.NewFake(t0))
		if d.interval != tc.interval || d.deadline != tc.deadline {
			t.Errorf("%+v: interval %v, deadline %v; want %v, %v", tc.opts, d.interval, d.deadline, tc.interval, tc.deadline)
		}
	}
}

func TestFirstValuePublished(t *testing.T) {
	clk := clocktest.NewFake(t0)
	f := newFake([]Quantity{temp, hum}, step{vals: vals(21.5, 40)})
	d := NewDevice(desc(), f, PollOpts{Interval: interval, Thresholds: map[string]float64{"temperature": 1e9, "humidity": 1e9}}, clk)
	rec := newRecorder()
	run(t, d, rec)

	select {
	case r := <-rec.ch:
		if r.state != device.StateOK {
			t.Fatalf("first report %v, want state ok", r)
		}
	case <-time.After(wait):
		t.Fatal("no state reported")
	}
	select {
	case r := <-rec.ch:
		want := map[string]any{"temperature": 21.5, "humidity": 40.0}
		if !reflect.DeepEqual(r.value, want) {
			t.Fatalf("published %v, want %v", r, want)
		}
		if !r.ts.Equal(t0) {
			t.Errorf("ts %v, want %v", r.ts, t0)
		}
		if err := d.Descriptor().Schema.Validate(r.value); err != nil {
			t.Errorf("value does not fit the schema: %v", err)
		}
	case <-time.After(wait):
		t.Fatal("first measurement not published")
	}
}

func TestThresholds(t *testing.T) {
	qs := []Quantity{temp, hum, pres}
	th := map[string]float64{"temperature": 0.5, "humidity": 2} // pressure: any change
	base := map[string]float64{"temperature": 20, "humidity": 50, "pressure": 1000}
	with := func(name string, v float64, more ...any) map[string]float64 {
		m := map[string]float64{}
		for k, x := range base {
			m[k] = x
		}
		m[name] = v
		for i := 0; i < len(more); i += 2 {
			m[more[i].(string)] = more[i+1].(float64)
		}
		return m
	}
	for _, tc := range []struct {
		name    string
		next    map[string]float64
		publish bool
	}{
		{"unchanged", base, false},
		{"temperature below", with("temperature", 20.4), false},
		{"temperature at", with("temperature", 20.5), false},
		{"temperature above", with("temperature", 20.6), true},
		{"temperature at, falling", with("temperature", 19.5), false},
		{"temperature above, falling", with("temperature", 19.4), true},
		{"humidity below", with("humidity", 51.9), false},
		{"humidity at", with("humidity", 48), false},
		{"humidity above", with("humidity", 52.1), true},
		{"both below", with("temperature", 20.4, "humidity", 51.9), false},
		{"temperature below, humidity above", with("temperature", 20.4, "humidity", 47.9), true},
		{"no threshold, smallest change", with("pressure", 1000.001), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktest.NewFake(t0)
			f := newFake(qs, step{vals: base}, step{vals: tc.next})
			d := NewDevice(desc(), f, PollOpts{Interval: interval, Thresholds: th}, clk)
			rec := newRecorder()
			run(t, d, rec)
			if p := pollDone(t, clk, rec, 1); len(p.values) != 1 {
				t.Fatalf("first poll published %v", p.values)
			}
			clk.Advance(interval)
			p := pollDone(t, clk, rec, 1)
			if p.state != device.StateOK {
				t.Fatalf("state %s %q", p.state, p.fault)
			}
			switch {
			case tc.publish && (len(p.values) != 1 || !reflect.DeepEqual(p.values[0], toValue(tc.next))):
				t.Errorf("published %v, want %v", p.values, tc.next)
			case !tc.publish && len(p.values) != 0:
				t.Errorf("published %v, want nothing", p.values)
			}
		})
	}
}

// TestThresholdAgainstLastPublished checks that a slow drift is published
// once it has moved past the threshold from the value last published, not
// from the last measured.
func TestThresholdAgainstLastPublished(t *testing.T) {
	clk := clocktest.NewFake(t0)
	script := []float64{20, 20.3, 20.6, 20.9, 21.2}
	wantPub := []bool{true, false, true, false, true}
	f := newFake([]Quantity{temp})
	for _, v := range script {
		f.script = append(f.script, step{vals: map[string]float64{"temperature": v}})
	}
	d := NewDevice(desc(), f, PollOpts{Interval: interval, Thresholds: map[string]float64{"temperature": 0.5}}, clk)
	rec := newRecorder()
	run(t, d, rec)
	for i, v := range script {
		if i > 0 {
			clk.Advance(interval)
		}
		p := pollDone(t, clk, rec, 1)
		if got := len(p.values) == 1; got != wantPub[i] {
			t.Errorf("measurement %v: published %v, want %v", v, p.values, wantPub[i])
		}
	}
}

// TestFaultAndRecovery runs the device against a registry, so that the
// states checked are the hal/deviceState changes clients get.
func TestFaultAndRecovery(t *testing.T) {
	clk := clocktest.NewFake(t0)
	nack := errors.New("i2c: no ACK from 0x44")
	f := newFake([]Quantity{temp, hum}, step{vals: vals(20, 50)}, step{err: nack}, step{err: nack}, step{vals: vals(20, 50)})
	d := NewDevice(desc(), f, PollOpts{Interval: interval, Thresholds: map[string]float64{"temperature": 1, "humidity": 1}}, clk)

	reg := device.NewRegistry(clk.Now)
	events := make(chan device.Event, 64)
	defer reg.Subscribe(func(e device.Event) { events <- e })()
	rep, err := reg.Add(d)
	if err != nil {
		t.Fatal(err)
	}
	<-events // added
	rec := newRecorder()
	rec.next = rep
	run(t, d, rec)

	wantPolls := []poll{
		{state: device.StateOK, values: []any{toValue(vals(20, 50))}},
		{state: device.StateFault, fault: nack.Error()},
		{state: device.StateFault, fault: nack.Error()},
		// back to ok, and the same value published again: clients saw the fault
		{state: device.StateOK, values: []any{toValue(vals(20, 50))}},
	}
	for i, want := range wantPolls {
		if i > 0 {
			clk.Advance(interval)
		}
		if got := pollDone(t, clk, rec, 1); !reflect.DeepEqual(got, want) {
			t.Errorf("poll %d: %+v, want %+v", i+1, got, want)
		}
	}

	var got []string
	for len(events) > 0 {
		e := <-events
		switch e.Kind {
		case device.EventValue:
			got = append(got, fmt.Sprintf("value %v", e.Value))
		case device.EventState:
			got = append(got, fmt.Sprintf("state %s %q", e.State, e.Fault))
		}
	}
	want := []string{
		"value map[humidity:50 temperature:20]",
		`state fault "i2c: no ACK from 0x44"`,
		`state ok ""`,
		"value map[humidity:50 temperature:20]",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("registry events:\n%q\nwant\n%q", got, want)
	}
	if desc, _ := reg.Describe(d.Descriptor().ID); desc.State != device.StateOK {
		t.Errorf("device left in state %s %q", desc.State, desc.Fault)
	}
}

// TestDeadline hangs the sensor in its second measurement: the poll
// reports a timeout at the deadline, later polls and Reads get the same
// fault without a second Sense, and once the hung Sense returns (its
// result discarded) the next poll measures again.
func TestDeadline(t *testing.T) {
	clk := clocktest.NewFake(t0)
	hold := make(chan struct{})
	f := newFake([]Quantity{temp, hum},
		step{vals: vals(20, 50)},
		step{vals: vals(99, 99), hold: hold},
		step{vals: vals(20, 50)})
	d := NewDevice(desc(), f, PollOpts{Interval: interval, Deadline: 2 * time.Second}, clk)
	rec := newRecorder()
	run(t, d, rec)
	f.waitStarted(t, 1)
	pollDone(t, clk, rec, 1)

	clk.Advance(interval)
	f.waitStarted(t, 2) // hangs; its deadline is armed before it starts
	clk.Advance(2 * time.Second)
	timedOut := poll{state: device.StateFault, fault: timeoutWords(2 * time.Second)}
	if got := pollDone(t, clk, rec, 1); !reflect.DeepEqual(got, timedOut) {
		t.Fatalf("poll at the deadline: %+v, want %+v", got, timedOut)
	}

	for range 3 { // polls while it hangs
		clk.Advance(interval)
		if got := pollDone(t, clk, rec, 1); !reflect.DeepEqual(got, timedOut) {
			t.Fatalf("poll while hung: %+v, want %+v", got, timedOut)
		}
	}
	_, err := d.Read(context.Background())
	if !errors.Is(err, context.DeadlineExceeded) || err.Error() != timedOut.fault {
		t.Errorf("Read while hung: %v, want the timeout", err)
	}
	if calls, _ := f.counts(); calls != 2 {
		t.Fatalf("%d Sense calls while hung, want 2", calls)
	}

	m := d.running(t)
	close(hold)
	waitClosed(t, m.done, "hung Sense returning")
	clk.Advance(interval)
	f.waitStarted(t, 3)
	want := poll{state: device.StateOK, values: []any{toValue(vals(20, 50))}}
	if got := pollDone(t, clk, rec, 1); !reflect.DeepEqual(got, want) {
		t.Errorf("poll after the hang: %+v, want %+v (the late result discarded)", got, want)
	}
	if calls, most := f.counts(); calls != 3 || most != 1 {
		t.Errorf("%d Sense calls, %d at once; want 3, 1", calls, most)
	}
}

func TestRunStopsWhileHung(t *testing.T) {
	clk := clocktest.NewFake(t0)
	hold := make(chan struct{})
	f := newFake([]Quantity{temp}, step{vals: map[string]float64{"temperature": 20}, hold: hold})
	d := NewDevice(desc(), f, PollOpts{Interval: interval}, clk)
	rec := newRecorder()
	stop := run(t, d, rec)
	f.waitStarted(t, 1)
	m := d.running(t)
	stop() // fails the test unless Run returns; the deadline has not passed

	close(hold)
	waitClosed(t, m.done, "hung Sense returning")
	if len(rec.ch) != 0 {
		t.Errorf("reported %v after Run returned", <-rec.ch)
	}
}

// TestHungDeviceDoesNotStall shares a clock between a hung device and a
// working one: the working one goes on polling.
func TestHungDeviceDoesNotStall(t *testing.T) {
	clk := clocktest.NewFake(t0)
	hold := make(chan struct{})
	defer close(hold)
	hung := newFake([]Quantity{temp}, step{hold: hold})
	good := newFake([]Quantity{temp},
		step{vals: map[string]float64{"temperature": 20}},
		step{vals: map[string]float64{"temperature": 21}})
	dh := NewDevice(desc(), hung, PollOpts{Interval: interval, Deadline: time.Hour}, clk)
	dg := NewDevice(desc(), good, PollOpts{Interval: interval}, clk)
	run(t, dh, newRecorder())
	hung.waitStarted(t, 1)
	rec := newRecorder()
	run(t, dg, rec)
	// pending: the hung device's deadline and the good one's next poll
	pollDone(t, clk, rec, 2)
	clk.Advance(interval)
	want := poll{state: device.StateOK, values: []any{map[string]any{"temperature": 21.0}}}
	if got := pollDone(t, clk, rec, 2); !reflect.DeepEqual(got, want) {
		t.Errorf("good device's second poll: %+v, want %+v", got, want)
	}
}

func TestReadDuringPoll(t *testing.T) {
	clk := clocktest.NewFake(t0)
	hold := make(chan struct{})
	f := newFake([]Quantity{temp, hum}, step{vals: vals(20, 50), hold: hold})
	d := NewDevice(desc(), f, PollOpts{Interval: interval}, clk)
	joined := make(chan struct{}, 1)
	d.testHookJoin = func() { joined <- struct{}{} }
	rec := newRecorder()
	run(t, d, rec)
	f.waitStarted(t, 1)

	type result struct {
		rd  device.Reading
		err error
	}
	read := make(chan result, 1)
	go func() {
		rd, err := d.Read(context.Background())
		read <- result{rd, err}
	}()
	waitClosed(t, joined, "Read joining the poll's measurement")
	close(hold)

	select {
	case r := <-read:
		want := device.Reading{Value: toValue(vals(20, 50)), TS: t0}
		if r.err != nil || !reflect.DeepEqual(r.rd, want) {
			t.Errorf("Read = %+v, %v; want %+v", r.rd, r.err, want)
		}
	case <-time.After(wait):
		t.Fatal("Read did not return")
	}
	p := pollDone(t, clk, rec, 1)
	if p.state != device.StateOK || len(p.values) > 1 {
		t.Errorf("poll: %+v", p)
	}
	if calls, _ := f.counts(); calls != 1 {
		t.Errorf("%d Sense calls, want 1", calls)
	}
}

func TestReadCancelledWhileHung(t *testing.T) {
	clk := clocktest.NewFake(t0)
	hold := make(chan struct{})
	f := newFake([]Quantity{temp}, step{vals: map[string]float64{"temperature": 20}, hold: hold})
	d := NewDevice(desc(), f, PollOpts{Interval: interval}, clk)
	ctx, cancel := context.WithCancel(context.Background())
	read := make(chan error, 1)
	go func() {
		_, err := d.Read(ctx)
		read <- err
	}()
	f.waitStarted(t, 1)
	m := d.running(t)
	cancel()
	select {
	case err := <-read:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Read = %v, want context.Canceled", err)
		}
	case <-time.After(wait):
		t.Fatal("Read did not return when its ctx ended")
	}
	close(hold)
	waitClosed(t, m.done, "hung Sense returning")
}

// TestReadMovesBaseline checks that a Read's value, which the Hub
// publishes, is what later polls compare against.
func TestReadMovesBaseline(t *testing.T) {
	clk := clocktest.NewFake(t0)
	one := func(v float64) step { return step{vals: map[string]float64{"temperature": v}} }
	f := newFake([]Quantity{temp}, one(20), one(20.4), one(20.6))
	d := NewDevice(desc(), f, PollOpts{Interval: interval, Thresholds: map[string]float64{"temperature": 0.5}}, clk)
	rec := newRecorder()
	run(t, d, rec)
	pollDone(t, clk, rec, 1)
	if _, err := d.Read(context.Background()); err != nil {
		t.Fatal(err)
	}
	clk.Advance(interval)
	if p := pollDone(t, clk, rec, 1); len(p.values) != 0 {
		t.Errorf("20.6 published %v; it is within 0.5 of the 20.4 read", p.values)
	}
}

func TestReadChecksValues(t *testing.T) {
	broken := errors.New("i2c: bus error")
	for _, tc := range []struct {
		name string
		step step
		want string // "" for success
	}{
		{"good", step{vals: vals(20, 50)}, ""},
		{"sensor error", step{err: broken}, broken.Error()},
		{"NaN", step{vals: vals(math.NaN(), 50)}, "sensor returned NaN for temperature"},
		{"infinite", step{vals: vals(20, math.Inf(1))}, "sensor returned +Inf for humidity"},
		{"missing", step{vals: map[string]float64{"temperature": 20}}, "sensor returned 1 quantities, want 2"},
		{"renamed", step{vals: map[string]float64{"temperature": 20, "rh": 50}}, "sensor returned no humidity"},
		{"extra", step{vals: map[string]float64{"temperature": 20, "humidity": 50, "dew": 9}}, "sensor returned 3 quantities, want 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktest.NewFake(t0)
			d := NewDevice(desc(), newFake([]Quantity{temp, hum}, tc.step), PollOpts{Interval: interval}, clk)
			rd, err := d.Read(context.Background())
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Read: %v", err)
			case tc.want == "" && !reflect.DeepEqual(rd, device.Reading{Value: toValue(vals(20, 50)), TS: t0}):
				t.Errorf("Read = %+v", rd)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Errorf("Read error %v, want %q", err, tc.want)
			}
		})
	}
}
