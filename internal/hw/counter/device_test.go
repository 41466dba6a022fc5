package counter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock/clocktest"
	"github.com/openhal/gateway/internal/hw/gpioevent"
	"github.com/openhal/gateway/internal/hw/gpioevent/gpioeventtest"
)

// recorder is a device.Reporter that keeps what it is told.
type recorder struct {
	mu     sync.Mutex
	values []map[string]any
	states []string
}

func (r *recorder) Value(v any, _ time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.values = append(r.values, v.(map[string]any))
}

func (r *recorder) State(s device.State, fault string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.states = append(r.states, fmt.Sprintf("%s %s", s, fault))
}

func (r *recorder) snapshot() ([]map[string]any, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]map[string]any(nil), r.values...), append([]string(nil), r.states...)
}

func (r *recorder) last(t *testing.T) map[string]any {
	t.Helper()
	vs, _ := r.snapshot()
	if len(vs) == 0 {
		t.Fatal("nothing published")
	}
	return vs[len(vs)-1]
}

// bench is a Device on a fake line and a fake clock, running.
type bench struct {
	t     *testing.T
	ctx   context.Context
	clk   *clocktest.Fake
	line  *gpioeventtest.Fake
	dev   *Device
	rec   *recorder
	logs  *bytes.Buffer
	ended chan struct{}
	stop  context.CancelFunc
}

func newBench(t *testing.T, opts Opts) *bench {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	clk := clocktest.NewFake(time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC))
	b := &bench{t: t, ctx: ctx, clk: clk, line: gpioeventtest.New(clk), rec: &recorder{}, logs: &bytes.Buffer{}}
	log := slog.New(slog.NewTextHandler(&syncWriter{w: b.logs}, nil))
	first := true
	open := func() (gpioevent.Source, error) {
		if !first {
			return nil, errors.New("no second line in this bench")
		}
		first = false
		return b.line, nil
	}
	dev, err := NewDevice(device.Descriptor{ID: "flow"}, open, opts, clk, log)
	if err != nil {
		t.Fatal(err)
	}
	b.dev = dev
	b.start()
	return b
}

// start runs the Device until stopped, and waits until it reads.
func (b *bench) start() {
	runCtx, stop := context.WithCancel(b.ctx)
	b.stop, b.ended = stop, make(chan struct{})
	go func() {
		defer close(b.ended)
		b.dev.Run(runCtx, b.rec)
	}()
	b.settle()
}

// end stops Run (a clean stop) and waits for it.
func (b *bench) end() {
	b.stop()
	select {
	case <-b.ended:
	case <-b.ctx.Done():
		b.t.Fatal("Run did not return")
	}
}

// settle waits until the Device has taken every edge sent.
func (b *bench) settle() {
	b.t.Helper()
	if err := b.line.WaitRead(b.ctx); err != nil {
		b.t.Fatalf("the device did not take the edges: %v", err)
	}
}

// train sends n rising edges, one every period, the first one period
// from now, each read as it comes.
func (b *bench) train(n int, period time.Duration) {
	for range n {
		b.clk.Advance(period)
		b.line.Edge()
		b.settle()
	}
}

func (b *bench) read() map[string]any {
	b.t.Helper()
	r, err := b.dev.Read(b.ctx)
	if err != nil {
		b.t.Fatal(err)
	}
	return r.Value.(map[string]any)
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}

// A 10 Hz pulse train of 30 pulses: the count is 30, the rate 10 Hz; the
// values go out once a second while the pulses come, the rate falls to 0
// a window after the last one, and then nothing is scheduled at all.
func TestDevicePulseTrain(t *testing.T) {
	b := newBench(t, Opts{})
	if got := b.rec.last(t); got["count"] != 0.0 || got["rate"] != 0.0 {
		t.Fatalf("first value %v, want count 0 rate 0", got)
	}
	b.train(30, 100*time.Millisecond)
	b.clk.Advance(50 * time.Millisecond) // between two edges: the window holds ten
	if got := b.read(); got["count"] != 30.0 || got["rate"] != 10.0 {
		t.Errorf("read after 30 pulses at 10 Hz: %v, want count 30 rate 10", got)
	}
	b.clk.Advance(3 * time.Second)
	vs, _ := b.rec.snapshot()
	// Published at start, then at 1.1 s, 2.1 s, 3.1 s (a tick an interval
	// after the first edge), 4.1 s (rate 0): a gate of one second holds
	// 9 or 10 of the edges 100 ms apart.
	if len(vs) != 5 {
		t.Fatalf("published %v, want 5 values", vs)
	}
	for i, v := range vs[1:3] {
		if r := v["rate"].(float64); r < 9 || r > 10 {
			t.Errorf("value %d during the train: rate %v, want 9 to 10 Hz", i+1, r)
		}
	}
	if got := vs[4]; got["count"] != 30.0 || got["rate"] != 0.0 {
		t.Errorf("last value %v, want count 30 rate 0", got)
	}
	if n := b.clk.Pending(); n != 0 {
		t.Errorf("a quiet counter has %d timers pending, want none", n)
	}
	b.end()
}

// perPulse scales count and rate into the unit, without float noise.
func TestDevicePerPulse(t *testing.T) {
	for _, tt := range []struct {
		perPulse        float64
		pulses          int
		count, rateHalf float64 // after the pulses, and the rate of 20 ms pulses
	}{
		{0, 7, 7, 50},
		{0.1, 3, 0.3, 5},
		{1.0 / 450, 450, 1, 50.0 / 450}, // a YF-S201-like 450 pulses a litre
		{2.5, 4, 10, 125},
	} {
		b := newBench(t, Opts{PerPulse: tt.perPulse})
		b.train(tt.pulses, 20*time.Millisecond)
		got := b.read()
		if got["count"] != tt.count {
			t.Errorf("perPulse %v, %d pulses: count %v, want %v", tt.perPulse, tt.pulses, got["count"], tt.count)
		}
		if tt.pulses >= 50 {
			if r := got["rate"].(float64); r != roundTo12(tt.rateHalf) {
				t.Errorf("perPulse %v: rate %v, want %v", tt.perPulse, r, tt.rateHalf)
			}
		}
		b.end()
	}
}

func roundTo12(x float64) float64 {
	d := &Device{}
	return d.scale(x)
}

// Edges the kernel dropped (a gap in the line's sequence numbers) are
// counted, logged, and missing from the rate.
func TestDeviceDroppedEdges(t *testing.T) {
	b := newBench(t, Opts{})
	b.train(5, 10*time.Millisecond)
	b.line.Drop(250)
	b.train(5, 10*time.Millisecond)
	got := b.read()
	if got["count"] != 260.0 {
		t.Errorf("count %v, want 260 (10 read, 250 dropped)", got["count"])
	}
	if got["rate"] != 10.0 {
		t.Errorf("rate %v, want 10 (the 10 edges with a time, in a 1 s window)", got["rate"])
	}
	logs := b.logs.String()
	if !strings.Contains(logs, "dropped=250") || !strings.Contains(logs, "dropped_since_start=250") {
		t.Errorf("the drop is not logged with its size:\n%s", logs)
	}
	b.end()
}

// The total survives a restart: written at the clean stop, loaded by the
// next Device, and counted on from.
func TestDeviceKeptAcrossRestart(t *testing.T) {
	file := filepath.Join(t.TempDir(), "counters", "flow.json")
	b := newBench(t, Opts{File: file})
	b.train(25, 10*time.Millisecond)
	b.end()
	if n, err := Load(file); err != nil || n != 25 {
		t.Fatalf("kept at the stop: %d, %v; want 25", n, err)
	}
	if !b.line.Closed() {
		t.Error("the line is still held after Run ended")
	}
	b2 := newBench(t, Opts{File: file, PerPulse: 0.5})
	if got := b2.rec.last(t); got["count"] != 12.5 {
		t.Errorf("after the restart: %v, want count 12.5 (25 pulses of 0.5)", got)
	}
	b2.train(5, 10*time.Millisecond)
	b2.end()
	if n, _ := Load(file); n != 30 {
		t.Errorf("kept after the second run: %d, want 30", n)
	}
}

// While pulses keep coming the total is written every SaveEvery, not at
// every pulse; once they stop it is written when the rate is back at 0.
// What a kill -9 would lose is what came since the last write.
func TestDeviceSavesOnAnInterval(t *testing.T) {
	file := filepath.Join(t.TempDir(), "flow.json")
	b := newBench(t, Opts{File: file, SaveEvery: 5 * time.Second})
	b.train(40, 100*time.Millisecond) // 4 s: no write yet
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("written after 4 s of pulses (every pulse?): %v", err)
	}
	b.train(20, 100*time.Millisecond) // past 5 s: the tick at 5.1 s writes
	n, err := Load(file)
	if err != nil || n < 40 || n > 60 {
		t.Fatalf("kept while pulses come: %d, %v; want the count at 5.1 s (50)", n, err)
	}
	b.clk.Advance(3 * time.Second) // quiet: the rate reaches 0, the total is written
	if n, _ := Load(file); n != 60 {
		t.Errorf("kept once quiet: %d, want 60", n)
	}
	b.end()
}

// A kept file that is not a kept total is moved aside, and the count
// starts from 0 rather than the gateway refusing to start.
func TestDeviceBadKeptFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "flow.json")
	os.WriteFile(file, []byte("{\"total\": 12"), 0o600)
	b := newBench(t, Opts{File: file})
	if got := b.rec.last(t); got["count"] != 0.0 {
		t.Errorf("count %v, want 0", got["count"])
	}
	if b, err := os.ReadFile(file + ".bad"); err != nil || string(b) != "{\"total\": 12" {
		t.Errorf("the bad file is not kept aside: %q %v", b, err)
	}
	if !strings.Contains(b.logs.String(), "unreadable") {
		t.Errorf("not logged:\n%s", b.logs)
	}
	b.end()
}

// A total that cannot be written is a fault, cleared by the next write
// that works; counting goes on meanwhile.
func TestDeviceSaveFault(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "counters")
	file := filepath.Join(dir, "flow.json")
	b := newBench(t, Opts{File: file})
	os.RemoveAll(dir)
	os.WriteFile(dir, nil, 0o600) // a file where the folder was
	b.train(3, 100*time.Millisecond)
	b.clk.Advance(3 * time.Second)
	if _, states := b.rec.snapshot(); len(states) != 1 || !strings.HasPrefix(states[0], "fault the count cannot be kept") {
		t.Fatalf("states %q, want one fault", states)
	}
	os.Remove(dir)
	os.Mkdir(dir, 0o700)
	b.train(2, 100*time.Millisecond)
	b.clk.Advance(3 * time.Second)
	if _, states := b.rec.snapshot(); len(states) != 2 || states[1] != "ok " {
		t.Errorf("states %q, want the fault cleared", states)
	}
	if n, _ := Load(file); n != 5 {
		t.Errorf("kept %d, want 5", n)
	}
	b.end()
}

// A line whose reads fail is a fault; it is requested again every
// second until that works, and counting goes on from the new line's
// numbers.
func TestDeviceLineFails(t *testing.T) {
	clk := clocktest.NewFake(time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC))
	lines := []*gpioeventtest.Fake{gpioeventtest.New(clk), gpioeventtest.New(clk)}
	opened := 0
	var openErr error = errors.New("line busy")
	open := func() (gpioevent.Source, error) {
		switch {
		case opened == 0:
		case openErr != nil:
			err := openErr
			openErr = nil
			return nil, err
		}
		opened++
		return lines[opened-1], nil
	}
	dev, err := NewDevice(device.Descriptor{ID: "flow"}, open, Opts{}, clk, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &bench{t: t, clk: clk, line: lines[0], dev: dev, rec: &recorder{}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b.ctx = ctx
	b.start()
	b.train(3, 10*time.Millisecond)
	lines[0].Fail(errors.New("no such device"))
	waitPending(t, ctx, clk, 2) // the tick and the retry
	clk.Advance(time.Second)    // the retry: busy; the tick, armed again
	waitPending(t, ctx, clk, 2) // the tick and the next retry
	clk.Advance(time.Second)    // the retry: requested
	b.line = lines[1]
	b.settle()
	b.train(4, 10*time.Millisecond)
	if got := b.read(); got["count"] != 7.0 {
		t.Errorf("count %v, want 7 (3 on the first line, 4 on the second; its numbers start again)", got["count"])
	}
	_, states := b.rec.snapshot()
	want := []string{
		"fault the GPIO line stopped reporting edges: no such device (requested again every 1s)",
		"fault the GPIO line cannot be requested: line busy (tried again every 1s)",
		"ok ",
	}
	if fmt.Sprint(states) != fmt.Sprint(want) {
		t.Errorf("states %q, want %q", states, want)
	}
	if !lines[0].Closed() {
		t.Error("the failed line was not released")
	}
	b.end()
	if !lines[1].Closed() {
		t.Error("the second line is still held after Run ended")
	}
}

func waitPending(t *testing.T, ctx context.Context, clk *clocktest.Fake, n int) {
	t.Helper()
	if err := clk.WaitPending(ctx, n); err != nil {
		t.Fatalf("%d timers never pending: %v", n, err)
	}
}

func TestNewDeviceRefuses(t *testing.T) {
	clk := clocktest.NewFake(time.Now())
	ok := func() (gpioevent.Source, error) { return gpioeventtest.New(clk), nil }
	for _, tt := range []struct {
		name string
		opts Opts
		open func() (gpioevent.Source, error)
	}{
		{"negative perPulse", Opts{PerPulse: -1}, ok},
		{"negative window", Opts{Window: -time.Second}, ok},
		{"a line that cannot be requested", Opts{}, func() (gpioevent.Source, error) { return nil, errors.New("busy") }},
	} {
		if _, err := NewDevice(device.Descriptor{ID: "x"}, tt.open, tt.opts, clk, nil); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
}
