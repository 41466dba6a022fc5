// Package expander makes the pins of an I/O expander devices: gpio.input
// and gpio.output on an MCP23017 or MCP23008 (internal/hw/i2c/mcp23017),
// the chip shared by the devices on its pins.
//
// # The chip
//
// A Chip is opened once for all its pins: Input and Output declare them,
// Start writes the whole setup to the chip (mcp23017.Open: outputs at
// their initial level before they drive) and starts its watcher, Close
// stops it. Every transfer to the chip holds one mutex: a write is one
// transaction (OLAT), a read of the inputs one (INTF, INTCAP, GPIO).
//
// # Inputs
//
// Inputs are read when the chip's INT output falls, on a Pi GPIO line
// requested with its pull-up (INT is open-drain) and falling edges: the
// watcher waits in WaitForEdge, in the kernel, and then reads the chip,
// which clears INT. No polling. A pin that changed and changed back
// before the read shows only in INTCAP: the change is published (the
// captured level, then the present one), so a short press is not lost.
// Each input publishes as a Pi line's does (gpioline's Settler: edge,
// debounce and invert mean what they mean there). After a read, INT still
// low means a change came during the read, or an edge was missed (INT
// fell before the line was requested): the chip is read again, up to
// eight times; INT that stays low after that is a fault of the inputs.
//
// # Faults
//
// A chip that does not answer (unplugged, unpowered, at another address,
// its bus stuck) puts every device on it in fault: reads and writes fail
// with the chip's name and what to check, the gateway serves the other
// devices, and the watcher writes the setup again every second until the
// chip answers, when the faults clear. A chip that was reset (a power
// glitch: every pin an input again, interrupts off, IOCON 0) is found at
// the quiet check (a read of IOCON once a minute without an edge, which
// a reset chip no longer sends) or a failed transfer, and set up again,
// its outputs at their last written level: until then its outputs do not
// drive, though writes to them succeed. A failing INT line is a fault of the inputs
// only; it is requested again every second.
package expander

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/i2c"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock"
	"github.com/openhal/gateway/internal/hw/gpioline"
	"github.com/openhal/gateway/internal/hw/i2c/mcp23017"
	"github.com/openhal/gateway/internal/hw/sensor"
)

const (
	// edgeWait bounds one wait for INT (gpioioctl takes "for ever" as a
	// deadline passed); a quiet chip is checked once per edgeWait.
	edgeWait = time.Minute
	// retryDelay is the pause before setting up a chip that failed
	// again, or requesting a failed INT line again.
	retryDelay = time.Second
	// maxReads is how often the chip is read while INT stays low.
	maxReads = 8
)

// Config says where a chip is and how its inputs are read.
type Config struct {
	Name    string // its name in the configuration ("ex1"), for messages
	Model   mcp23017.Model
	Bus     i2c.Bus
	BusName string // "/dev/i2c-1", for messages
	Addr    uint16
	// INT is the Pi line the chip's INT (INTA) is wired to, not yet
	// requested; nil for a chip with outputs only.
	INT   gpio.PinIn
	Clock clock.Clock
	Log   *slog.Logger
}

// Chip is one expander and the devices on its pins.
type Chip struct {
	cfg  Config
	what string // "ex1 (mcp23017 at 0x20 on /dev/i2c-1)"
	log  *slog.Logger

	refreshMu sync.Mutex // one read of the inputs and its publishing at a time
	reportMu  sync.Mutex // states go out in the order they are decided

	mu       sync.Mutex // guards what follows; held across each transfer
	dev      *mcp23017.Dev
	fault    string // why dev is nil: every device's fault
	down     bool   // the chip stopped answering (not merely not set up yet)
	intFault string // the INT line's fault: the inputs'
	setup    mcp23017.Setup
	levels   uint16 // the pins at the last read (INTCAP, then GPIO)
	inputs   map[int]*Input
	outputs  map[int]*Output
	started  bool

	kick   chan struct{} // a transfer failed: check the chip now
	cancel context.CancelFunc
	done   chan struct{}

	edgeWait, retryDelay time.Duration // the constants; tests shorten them
}

// NewChip is the chip cfg describes, not yet touched: declare its pins,
// then Start it.
func NewChip(cfg Config) (*Chip, error) {
	if cfg.Bus == nil || cfg.Clock == nil {
		return nil, fmt.Errorf("expander %s: no bus or no clock", cfg.Name)
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	what := fmt.Sprintf("%s (%s at %#02x on %s)", cfg.Name, strings.ToLower(cfg.Model.String()), cfg.Addr, cfg.BusName)
	return &Chip{
		cfg: cfg, what: what, fault: what + " is not set up yet",
		log:    cfg.Log.With("chip", cfg.Name, "type", strings.ToLower(cfg.Model.String()), "bus", cfg.BusName, "address", fmt.Sprintf("%#02x", cfg.Addr)),
		inputs: map[int]*Input{}, outputs: map[int]*Output{},
		kick: make(chan struct{}, 1), done: make(chan struct{}),
		edgeWait: edgeWait, retryDelay: retryDelay,
	}, nil
}

// Start requests the INT line, sets the chip up (a chip that does not
// answer leaves its devices in fault, and is set up when it does) and
// starts the watcher. Only a line that cannot be requested is an error.
func (c *Chip) Start() error {
	c.mu.Lock()
	started := c.started
	c.started = true
	c.mu.Unlock()
	if started {
		return fmt.Errorf("expander %s: started twice", c.cfg.Name)
	}
	if c.cfg.INT != nil {
		if err := c.cfg.INT.In(gpio.PullUp, gpio.FallingEdge); err != nil {
			return fmt.Errorf("%s: request its INT line %s (pull-up, falling edge): %w", c.what, lineName(c.cfg.INT), err)
		}
	}
	c.reopen()
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	go c.run(ctx)
	return nil
}

// Close stops the watcher; the INT line and the bus are the caller's.
func (c *Chip) Close() error {
	if c.cancel != nil {
		c.cancel()
		<-c.done
	}
	return nil
}

// run is the watcher: it sets up a chip that is not, and serves INT's
// edges, failed transfers and quiet checks, until ctx ends.
func (c *Chip) run(ctx context.Context) {
	defer close(c.done)
	var wg sync.WaitGroup
	defer wg.Wait()
	waits := make(chan waitResult)
	if c.cfg.INT != nil {
		wg.Go(func() { c.pump(ctx, waits) })
	}
	quiet := make(chan struct{}, 1) // a chip without INT is checked on the clock
	for ctx.Err() == nil {
		if !c.ready() && !c.recover(ctx) {
			return
		}
		var t clock.Timer
		if c.cfg.INT == nil {
			t = c.cfg.Clock.AfterFunc(c.edgeWait, func() {
				select {
				case quiet <- struct{}{}:
				default:
				}
			})
		}
		select {
		case <-ctx.Done():
		case w := <-waits:
			c.handle(w)
		case <-c.kick:
			c.check()
		case <-quiet:
			c.check()
		}
		if t != nil {
			t.Stop()
		}
	}
}

// waitResult is what one wait on INT came to.
type waitResult int

const (
	waitEdge    waitResult = iota // INT fell
	waitQuiet                     // nothing for edgeWait
	waitFailed                    // the wait failed at once: the line is not right
	waitRearmed                   // the line was requested again after a failure
)

// pump waits on INT in the kernel and hands each outcome to the
// watcher; after a failed wait it requests the line again every
// retryDelay until that works.
func (c *Chip) pump(ctx context.Context, out chan<- waitResult) {
	defer gpioline.HaltWaits(ctx, c.cfg.INT)()
	send := func(w waitResult) bool {
		select {
		case out <- w:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for ctx.Err() == nil {
		start := time.Now() // WaitForEdge's timeout runs on real time
		edge := c.cfg.INT.WaitForEdge(c.edgeWait)
		switch {
		case ctx.Err() != nil:
			return
		case edge:
			send(waitEdge)
		case time.Since(start) >= c.edgeWait/2:
			send(waitQuiet)
		default: // it failed at once
			if send(waitFailed) && c.rearm(ctx) {
				send(waitRearmed)
			}
		}
	}
}

func (c *Chip) rearm(ctx context.Context) bool {
	for clock.Sleep(ctx, c.cfg.Clock, c.retryDelay) == nil {
		err := c.cfg.INT.In(gpio.PullUp, gpio.FallingEdge)
		if err == nil {
			return true
		}
		c.log.Warn("request the INT line again", "line", lineName(c.cfg.INT), "err", err)
	}
	return false
}

func (c *Chip) handle(w waitResult) {
	switch w {
	case waitEdge, waitRearmed:
		c.setIntFault("")
		c.service()
	case waitQuiet:
		c.setIntFault("")
		c.check()
	case waitFailed:
		c.setIntFault(fmt.Sprintf("wait for edges on %s, the INT line of %s, failed", lineName(c.cfg.INT), c.what))
	}
}

// service reads the inputs after INT fell, again while INT stays low.
func (c *Chip) service() {
	for range maxReads {
		if err := c.refresh(false); err != nil {
			c.lost(err)
			return
		}
		if c.cfg.INT.Read() == gpio.High {
			c.setIntFault("")
			return
		}
	}
	c.setIntFault(fmt.Sprintf("INT of %s stays low on %s after %d reads of the chip: is INTA wired to %s alone, and is the chip an MCP23x?",
		c.what, lineName(c.cfg.INT), maxReads, lineName(c.cfg.INT)))
}

// check asks a chip that should be set up whether it still is: after a
// failed transfer, or when nothing happened for a while.
func (c *Chip) check() {
	c.mu.Lock()
	dev := c.dev
	c.mu.Unlock()
	if dev == nil {
		return
	}
	ok, err := dev.Configured()
	switch {
	case err != nil:
		c.lost(err)
	case !ok:
		c.log.Warn("expander was reset (a power glitch?): setting it up again, its outputs at their last values")
		c.reopen()
	case c.cfg.INT != nil && c.cfg.INT.Read() == gpio.Low:
		c.service()
	}
}

func (c *Chip) ready() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dev != nil
}

// recover sets the chip up, again every retryDelay, until it answers or
// ctx ends.
func (c *Chip) recover(ctx context.Context) bool {
	for !c.reopen() {
		if clock.Sleep(ctx, c.cfg.Clock, c.retryDelay) != nil {
			return false
		}
	}
	return true
}

// reopen writes the chip's whole setup and reads its pins: at start,
// after a failure, after a reset. The inputs then publish their levels.
func (c *Chip) reopen() bool {
	c.mu.Lock()
	dev, err := mcp23017.Open(c.cfg.Bus, c.cfg.Addr, c.cfg.Model, c.setup)
	wasDown := c.down
	if err == nil {
		c.dev, c.fault, c.down = dev, "", false
	}
	c.mu.Unlock()
	if err == nil {
		err = c.refresh(true)
	}
	if err != nil {
		c.lost(err)
		return false
	}
	if wasDown {
		c.log.Info("expander answers again")
	}
	c.reportStates()
	for _, a := range c.attachedInputs() {
		a.s.Settle()
	}
	return true
}

// lost marks the chip not set up, and its devices in fault.
func (c *Chip) lost(err error) {
	words := c.explain(err)
	c.mu.Lock()
	changed := !c.down || c.fault != words
	c.dev, c.fault, c.down = nil, words, true
	c.mu.Unlock()
	if changed {
		c.log.Warn("expander does not answer: its devices are in fault", "err", err)
	}
	c.reportStates()
}

// explain says a failed transfer in words a person acts on.
func (c *Chip) explain(err error) string {
	if sensor.IsNAK(err) {
		return fmt.Sprintf("%s did not answer: check its wiring, power and address (%v)", c.what, err)
	}
	return fmt.Sprintf("%s: %v", c.what, err)
}

// poke has the watcher check the chip after a failed transfer.
func (c *Chip) poke() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *Chip) setIntFault(reason string) {
	c.mu.Lock()
	changed := c.intFault != reason
	c.intFault = reason
	c.mu.Unlock()
	if changed {
		if reason != "" {
			c.log.Warn("expander's inputs in fault", "reason", reason)
		}
		c.reportStates()
	}
}

// refresh reads INTF, INTCAP and GPIO and has each input whose level
// changed, in a direction its edge takes, settle: first to the level
// INTCAP caught for the pins that raised the interrupt, then to the
// present one. With all, the levels are only taken (after a setup).
func (c *Chip) refresh(all bool) error {
	c.refreshMu.Lock()
	defer c.refreshMu.Unlock()
	c.mu.Lock()
	if c.dev == nil {
		err := errors.New(c.fault)
		c.mu.Unlock()
		return err
	}
	capt, err := c.dev.ReadInterrupt()
	prev := c.levels
	if err == nil && all {
		c.levels = capt.Levels
	}
	c.mu.Unlock()
	if err != nil || all {
		return err
	}
	ins := c.attachedInputs()
	mid := prev&^capt.Flags | capt.Captured&capt.Flags
	c.step(prev, mid, ins)
	c.step(mid, capt.Levels, ins)
	return nil
}

func (c *Chip) step(from, to uint16, ins []attachedInput) {
	c.mu.Lock()
	c.levels = to
	c.mu.Unlock()
	for _, a := range ins {
		if a.in.wakes(from, to) {
			a.s.Edge()
		}
	}
}

// level is pin's level at the last read.
func (c *Chip) level(pin int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.levels&(1<<pin) != 0
}

// set latches level for an output pin: one OLAT write.
func (c *Chip) set(pin int, level bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dev == nil {
		return errors.New(c.fault)
	}
	if err := c.dev.Set(pin, level); err != nil {
		c.poke()
		return errors.New(c.explain(err))
	}
	c.setup.Levels = c.setup.Levels&^(1<<pin) | b16(level)<<pin
	return nil
}

type attachedInput struct {
	in *Input
	s  *gpioline.Settler
}

type attachedOutput struct {
	out *Output
	r   device.Reporter
}

func (c *Chip) attachedInputs() []attachedInput {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []attachedInput
	for _, in := range c.inputs {
		if in.settler != nil {
			out = append(out, attachedInput{in, in.settler})
		}
	}
	return out
}

// reportStates tells each running device its state: the chip's fault,
// else for inputs the INT line's, else ok.
func (c *Chip) reportStates() {
	c.reportMu.Lock()
	defer c.reportMu.Unlock()
	c.mu.Lock()
	chipFault, intFault := c.fault, c.intFault
	var outs []attachedOutput
	for _, o := range c.outputs {
		if o.r != nil {
			outs = append(outs, attachedOutput{o, o.r})
		}
	}
	c.mu.Unlock()
	inFault := chipFault
	if inFault == "" {
		inFault = intFault
	}
	for _, a := range c.attachedInputs() {
		a.s.SetFault(inFault)
	}
	for _, a := range outs {
		a.out.report(a.r, chipFault)
	}
}

// lineName names a Pi line in messages. Not String: on a gpioioctl
// line that is a JSON document.
func lineName(p gpio.PinIn) string {
	if n := p.Name(); n != "" {
		return n
	}
	return fmt.Sprintf("line %d", p.Number())
}

func b16(v bool) uint16 {
	if v {
		return 1
	}
	return 0
}
