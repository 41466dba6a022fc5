package sim

import (
	"context"
	"fmt"
	"sync"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock"
)

// output is a sim output (LED, heater relay, fan). Its value is whatever
// was last written, which the registry keeps; onWrite lets the bench react
// (the heater warms sim.temperature).
type output struct {
	desc    device.Descriptor
	onWrite func(v any)
}

var _ device.Writer = (*output)(nil)

func (o *output) Descriptor() device.Descriptor { return o.desc }

func (o *output) Write(_ context.Context, req device.WriteRequest) (device.WriteResult, error) {
	if err := o.desc.Schema.Validate(req.Value); err != nil {
		return device.WriteResult{}, fmt.Errorf("write %s: %w", o.desc.ID, err)
	}
	if o.onWrite != nil {
		o.onWrite(req.Value)
	}
	return device.WriteResult{}, nil
}

// input is a sim GPIO input. Its descriptor says access "r", as on real
// hardware, so a Hub treats it as read-only; but on the sim board an admin
// may set it, playing the outside world (pressing sim.button, opening
// sim.door). For that it has a Write, and SimulatedInput tells the Hub
// that this Write is the outside world's and not an output's: the Hub
// lets admins use it when it serves the sim board. A real input has
// neither method, so "inputs are read-only on real boards" needs no rule.
// The value written becomes the input's level and, as with any write
// (Keep is false), its published value: clients and interlocks see it as
// an edge.
type input struct {
	desc device.Descriptor
	clk  clock.Clock

	mu    sync.Mutex
	level bool
}

var (
	_ device.Reader = (*input)(nil)
	_ device.Writer = (*input)(nil)
)

func (in *input) Descriptor() device.Descriptor { return in.desc }

// SimulatedInput reports that Write plays the outside world.
func (in *input) SimulatedInput() bool { return true }

// Read samples the pin.
func (in *input) Read(context.Context) (device.Reading, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	return device.Reading{Value: in.level, TS: in.clk.Now()}, nil
}

// Write sets the pin's level, as the outside world would.
func (in *input) Write(_ context.Context, req device.WriteRequest) (device.WriteResult, error) {
	level, ok := req.Value.(bool)
	if !ok {
		return device.WriteResult{}, fmt.Errorf("simulate %s: want a boolean, got %T", in.desc.ID, req.Value)
	}
	in.mu.Lock()
	in.level = level
	in.mu.Unlock()
	return device.WriteResult{}, nil
}
