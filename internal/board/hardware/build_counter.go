package hardware

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/board"
	"github.com/openhal/gateway/internal/hw/counter"
	"github.com/openhal/gateway/internal/hw/gpioevent"
)

// CounterFile is where a counter's total is kept in the state directory:
// counters/<id>.json, {"total": N} (counter.Save).
func CounterFile(stateDir, id string) string {
	return filepath.Join(stateDir, "counters", id+".json")
}

// counter makes a counter device on its pin's edges, its total kept in
// the state directory; releasing closes its line.
func (b *builder) counter(desc device.Descriptor, dc board.DeviceConfig) (device.Device, error) {
	if b.cfg.StateDir == "" {
		return nil, errors.New("no state directory to keep the count in")
	}
	ref, err := b.prof.ResolvePin(dc.Pin)
	if err != nil {
		return nil, err
	}
	name, line := pinName(dc.Pin, ref), dc.CounterLine(desc.ID)
	open := func() (gpioevent.Source, error) {
		src, err := b.host.EdgeLine(ref, line)
		if err != nil {
			return nil, fmt.Errorf("request %s for its edges: %w", name, err)
		}
		return src, nil
	}
	opts := dc.CounterOpts()
	opts.File = CounterFile(b.cfg.StateDir, desc.ID)
	d, err := counter.NewDevice(desc, open, opts, b.clk, b.log)
	if err != nil {
		return nil, err
	}
	b.closers = append(b.closers, d.Close)
	return d, nil
}
