package gpioline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"periph.io/x/conn/v3/gpio"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock"
)

// Bounds of the waits an Input makes; see the package doc.
const (
	// edgeWait is the longest single WaitForEdge: periph's gpioioctl
	// takes -1 ("for ever") as a deadline already passed, so a wait needs
	// a bound. A quiet line wakes the input once per edgeWait, and no
	// more: stopping does not depend on it (Run repeats Halt until done).
	edgeWait   = time.Minute
	retryDelay = time.Second // pause before requesting a failed line again
)

// InputOpts configures an Input; the package doc says what each field does
// to the published values.
type InputOpts struct {
	Pull     gpio.Pull     // bias the line is requested with
	Edge     gpio.Edge     // edges the kernel reports; NoEdge means BothEdges
	Debounce time.Duration // how long a level must hold before it is published
	Invert   bool          // publish true for a low line (active-low buttons)
}

// Input is a gpio.input device: the level of one line.
type Input struct {
	desc device.Descriptor
	pin  gpio.PinIn
	opts InputOpts
	clk  clock.Clock

	edgeWait, retryDelay time.Duration // the constants; tests shorten them
}

var (
	_ device.Reader = (*Input)(nil)
	_ device.Runner = (*Input)(nil)
)

// NewInput requests pin as an input with opts' pull and edges and returns
// an Input on it. clk times the debounce and the retries.
func NewInput(desc device.Descriptor, pin gpio.PinIn, opts InputOpts, clk clock.Clock) (*Input, error) {
	switch {
	case pin == nil:
		return nil, fmt.Errorf("gpio input %s: %w", desc.ID, errNoPin)
	case clk == nil:
		return nil, fmt.Errorf("gpio input %s: no clock", desc.ID)
	case opts.Debounce < 0:
		return nil, fmt.Errorf("gpio input %s: negative debounce %v", desc.ID, opts.Debounce)
	}
	if opts.Edge == gpio.NoEdge {
		opts.Edge = gpio.BothEdges
	}
	in := &Input{desc: desc, pin: pin, opts: opts, clk: clk, edgeWait: edgeWait, retryDelay: retryDelay}
	if err := in.request(); err != nil {
		return nil, err
	}
	return in, nil
}

// Descriptor implements device.Device.
func (in *Input) Descriptor() device.Descriptor { return in.desc }

// Read reads the line afresh. A line read is one ioctl that does not
// block, so ctx is only checked before it.
func (in *Input) Read(ctx context.Context) (device.Reading, error) {
	if err := ctx.Err(); err != nil {
		return device.Reading{}, err
	}
	return device.Reading{Value: in.level(), TS: in.clk.Now()}, nil
}

// Run publishes the line's level, then every change of its settled level,
// until ctx is done; the package doc has the details. It returns once
// nothing it started can report any more.
func (in *Input) Run(ctx context.Context, r device.Reporter) {
	w := NewSettler(in.level, in.opts.Debounce, in.clk, r)
	defer w.Stop()
	defer HaltWaits(ctx, in.pin)()

	w.Settle()
	for ctx.Err() == nil {
		start := time.Now() // WaitForEdge's timeout runs on real time, whatever clk is
		edge := in.pin.WaitForEdge(in.edgeWait)
		switch {
		case ctx.Err() != nil:
			return
		case edge:
			w.SetFault("")
			w.Edge()
		case time.Since(start) >= in.edgeWait/2:
			w.SetFault("") // a quiet line
		default:
			w.SetFault(fmt.Sprintf("wait for edges on %s failed", pinName(in.pin)))
			if !in.rearm(ctx, w) {
				return
			}
		}
	}
}

// rearm requests the line again after a failed wait, retrying every
// retryDelay until that works, and reads it, since edges may have been
// lost meanwhile. It returns false when ctx ends first.
func (in *Input) rearm(ctx context.Context, w *Settler) bool {
	for {
		if clock.Sleep(ctx, in.clk, in.retryDelay) != nil {
			return false
		}
		if err := in.request(); err != nil {
			w.SetFault(err.Error())
			continue
		}
		w.Settle()
		return true
	}
}

func (in *Input) request() error {
	if err := in.pin.In(in.opts.Pull, in.opts.Edge); err != nil {
		return fmt.Errorf("gpio input %s: request %s (pull %s, edge %s): %w",
			in.desc.ID, pinName(in.pin), in.opts.Pull, in.opts.Edge, err)
	}
	return nil
}

func (in *Input) level() bool { return bool(in.pin.Read()) != in.opts.Invert }

// errNoPin is returned by the constructors for a nil pin.
var errNoPin = errors.New("no pin")
