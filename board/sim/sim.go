// Package sim is the sim board: a small virtual bench (DESIGN.md, "Sim
// board") that behaves like hardware, so that the whole gateway runs and
// can be tried on any machine. Its devices go through the same Device
// interfaces, registry and rules as real hardware, and run on an
// injectable clock so that tests can step them.
package sim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"gateway/board"
	"gateway/clock"
	"gateway/device"
	"gateway/hw/serial"
)

// Device ids of the sim board.
const (
	LED         = "sim.led"
	Button      = "sim.button"
	Door        = "sim.door"
	Heater      = "sim.heater"
	Temperature = "sim.temperature"
	Fan         = "sim.fan"
	Meter       = "sim.meter"
)

// HeaterMaxOn is how long sim.heater may stay on (its maxOnMs rule).
const HeaterMaxOn = 10 * time.Minute

// Board is the sim board's devices. New makes them; Start registers them
// and starts the ones with work of their own.
type Board struct {
	clk     clock.Clock
	devices []device.Device
	initial map[string]any // published at Start
	thermo  *thermometer
	meter   *meter

	mu      sync.Mutex
	started bool
	wg      sync.WaitGroup
}

// New returns the sim board. cfg is expected to be valid (board.Parse
// checks it); zero values still work: no periodic meter lines, publication
// at the exact threshold crossing, the smallest threshold (0.001 °C).
func New(cfg board.SimConfig, clk clock.Clock) *Board {
	b := &Board{clk: clk, initial: map[string]any{}}
	b.thermo = newThermometer(describe(Temperature, device.KindSensor, "Temperature", device.AccessRead, device.RiskLow,
		device.Schema{Type: device.TypeObject, Properties: map[string]device.Schema{
			"temperature": {Type: device.TypeNumber, Unit: "Cel"},
		}}, nil), clk, cfg.TemperatureThreshold, cfg.PollInterval)

	devEnd, instEnd := net.Pipe()
	maxLen := serial.MaxLine
	b.meter = &meter{port: instEnd, clk: clk, interval: cfg.MeterInterval, temp: b.thermo.Temperature}
	line := serial.NewLineDevice(describe(Meter, device.KindSerial, "Meter", device.AccessReadWrite, device.RiskLow,
		device.Schema{Type: device.TypeString, MaxLength: &maxLen}, nil), devEnd, '\n', clk)

	zero, hundred := 0.0, 100.0
	b.devices = []device.Device{
		b.output(LED, device.KindGPIOOutput, "LED", device.RiskLow, device.Schema{Type: device.TypeBoolean}, nil, false, nil),
		b.input(Button, "Button (true = pressed)"),
		b.input(Door, "Door contact (true = open)"),
		b.output(Heater, device.KindGPIOOutput, "Heater relay", device.RiskHigh, device.Schema{Type: device.TypeBoolean}, false, false,
			func(v any) { b.thermo.setHeater(v.(bool)) }),
		b.thermo,
		b.output(Fan, device.KindPWM, "Fan", device.RiskLow,
			device.Schema{Type: device.TypeNumber, Minimum: &zero, Maximum: &hundred, Unit: "%"}, nil, 0.0, nil),
		line,
	}
	return b
}

func describe(id, kind, label string, access device.Access, risk device.Risk, schema device.Schema, safe any) device.Descriptor {
	return device.Descriptor{
		ID: id, Kind: kind, Label: label, Source: "sim", Access: access, Risk: risk,
		Schema: schema, Safe: safe, State: device.StateOK, Tags: []string{"sim"},
	}
}

func (b *Board) output(id, kind, label string, risk device.Risk, schema device.Schema, safe, initial any, onWrite func(any)) *output {
	b.initial[id] = initial
	return &output{desc: describe(id, kind, label, device.AccessReadWrite, risk, schema, safe), onWrite: onWrite}
}

func (b *Board) input(id, label string) *input {
	b.initial[id] = false
	return &input{desc: describe(id, device.KindGPIOInput, label, device.AccessRead, device.RiskLow,
		device.Schema{Type: device.TypeBoolean}, nil), clk: b.clk}
}

// Rules returns the safety rules of the sim board's devices, for the Hub
// to enforce: sim.heater may be on only while sim.door is closed, and for
// at most HeaterMaxOn.
func (b *Board) Rules() map[string]device.Rules {
	return map[string]device.Rules{
		Heater: {
			Interlock: []device.Condition{{Device: Door, Op: device.OpEq, Value: false}},
			MaxOn:     HeaterMaxOn,
		},
	}
}

// Start adds every device to reg, publishes the initial values of the
// outputs and inputs, and starts the devices' Runners and the meter
// instrument, which stop when ctx is done (Wait waits for them). If a
// device cannot be added, the ones added are removed again and nothing
// runs. A Board starts once.
func (b *Board) Start(ctx context.Context, reg *device.Registry) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.started {
		return errors.New("start sim board: already started")
	}
	reps := make([]device.Reporter, len(b.devices))
	for i, d := range b.devices {
		rep, err := reg.Add(d)
		if err != nil {
			for _, added := range b.devices[:i] {
				reg.Remove(added.Descriptor().ID, "sim board failed to start")
			}
			return fmt.Errorf("start sim board: %w", err)
		}
		reps[i] = rep
	}
	b.started = true
	now := b.clk.Now()
	for i, d := range b.devices {
		if v, ok := b.initial[d.Descriptor().ID]; ok {
			reps[i].Value(v, now)
		}
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		b.meter.run(ctx)
	}()
	for i, d := range b.devices {
		if r, ok := d.(device.Runner); ok {
			b.wg.Add(1)
			go func(rep device.Reporter) {
				defer b.wg.Done()
				r.Run(ctx, rep)
			}(reps[i])
		}
	}
	return nil
}

// Wait returns when everything Start started has stopped, after its ctx
// is done.
func (b *Board) Wait() { b.wg.Wait() }
