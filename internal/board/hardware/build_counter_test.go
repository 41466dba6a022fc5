package hardware

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/board/profile"
	"github.com/openhal/gateway/internal/clock/clocktest"
	"github.com/openhal/gateway/internal/hw/counter"
	"github.com/openhal/gateway/internal/hw/gpioevent"
	"github.com/openhal/gateway/internal/hw/gpioevent/gpioeventtest"
)

// edgeLine is a counter's fake line and how it was requested.
type edgeLine struct {
	fake *gpioeventtest.Fake
	cfg  gpioevent.Config
}

func (h *fakeHost) EdgeLine(ref profile.LineRef, cfg gpioevent.Config) (gpioevent.Source, error) {
	if h.busy[ref] {
		return nil, errors.New("line busy")
	}
	e, ok := h.edges[ref]
	if !ok {
		return nil, errors.New("no such line")
	}
	e.cfg = cfg
	h.opened = append(h.opened, "edges "+ref.String())
	return e.fake, nil
}

// EdgeLine: the expanders' bench has no counter.
func (*expanderHost) EdgeLine(ref profile.LineRef, _ gpioevent.Config) (gpioevent.Source, error) {
	return nil, errors.New("no counter line here: " + ref.String())
}

const counterYAML = `
board: rpi4b
devices:
  garden.flow:
    kind: counter
    pin: pin11
    pull: up
    edge: falling
    debounce: 5ms
    perPulse: 0.5
    unit: l
`

// values is a device.Reporter that keeps the values.
type values struct {
	mu sync.Mutex
	vs []any
}

func (v *values) Value(x any, _ time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.vs = append(v.vs, x)
}
func (*values) State(device.State, string) {}

// A counter is built on its pin's edges, as the file says; its total is
// kept in the state directory and its line released with the others.
func TestBuildCounter(t *testing.T) {
	cfg, prof := parse(t, counterYAML)
	cfg.StateDir = t.TempDir()
	clk := clocktest.NewFake(time.Unix(0, 0))
	line := &edgeLine{fake: gpioeventtest.New(clk)}
	h := &fakeHost{edges: map[profile.LineRef]*edgeLine{bcm(17): line}}
	devs, release, err := Build(context.Background(), cfg, prof, h, clk, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 1 {
		t.Fatalf("%d devices", len(devs))
	}
	d, ok := devs[0].(*counter.Device)
	if !ok {
		t.Fatalf("garden.flow is a %T", devs[0])
	}
	if desc := d.Descriptor(); desc.Kind != device.KindSensor || desc.Chip != "counter" || desc.Pin != "pin11" ||
		desc.Schema.Properties["count"].Unit != "l" || desc.Schema.Properties["rate"].Unit != "l/s" {
		t.Errorf("descriptor %+v", desc)
	}
	want := gpioevent.Config{Edge: gpioevent.Falling, Bias: gpioevent.PullUp, Debounce: 5 * time.Millisecond,
		Consumer: "garden.flow", Buffer: counter.LineBuffer}
	if line.cfg != want {
		t.Errorf("line requested with %+v, want %+v", line.cfg, want)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	rep := &values{}
	go func() {
		defer close(done)
		d.Run(ctx, rep)
	}()
	for range 6 {
		clk.Advance(100 * time.Millisecond)
		line.fake.Edge()
		if err := line.fake.WaitRead(ctx); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	<-done
	release()
	if !line.fake.Closed() {
		t.Error("the line is still held after release")
	}
	file := CounterFile(cfg.StateDir, "garden.flow")
	if n, err := counter.Load(file); err != nil || n != 6 {
		t.Errorf("kept in %s: %d, %v; want 6", file, n, err)
	}
	if !strings.HasSuffix(file, "/counters/garden.flow.json") {
		t.Errorf("kept in %s", file)
	}
}

func TestBuildCounterErrors(t *testing.T) {
	for _, tt := range []struct {
		name     string
		stateDir bool
		busy     bool
		want     []string
	}{
		{"no state directory", false, false, []string{"devices.garden.flow", "no state directory"}},
		{"busy line", true, true, []string{"devices.garden.flow", "request pin11 (pinctrl-bcm2711:17) for its edges", "line busy"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, prof := parse(t, counterYAML)
			if tt.stateDir {
				cfg.StateDir = t.TempDir()
			}
			clk := clocktest.NewFake(time.Unix(0, 0))
			h := &fakeHost{busy: map[profile.LineRef]bool{bcm(17): tt.busy},
				edges: map[profile.LineRef]*edgeLine{bcm(17): {fake: gpioeventtest.New(clk)}}}
			_, _, err := Build(context.Background(), cfg, prof, h, clk, nil)
			if err == nil {
				t.Fatal("Build succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
