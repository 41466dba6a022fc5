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

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock"
	"github.com/openhal/gateway/internal/hw/serialline"
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

// The GPIO lines the sim board's pin devices stand for (the descriptor's
// `pin`): the Raspberry Pi header's BCM numbers of a bench wired like
// docs/examples/pi-bench.yaml, so that a script that addresses pins
// (gpiozero through the Python client's pin factory, docs/python.md) runs
// unchanged on the sim board and on that Pi. GPIO18 carries the Pi's
// hardware PWM0, as a fan's PWM would.
const (
	LEDPin    = "GPIO17"
	ButtonPin = "GPIO27"
	DoorPin   = "GPIO22"
	HeaterPin = "GPIO23"
	FanPin    = "GPIO18"
)

// FanFrequency is sim.fan's PWM frequency in Hz: gpiozero's default for a
// PWMOutputDevice, which the sim board has no reason to differ from.
const FanFrequency = 100.0

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

// New returns the sim board. cfg and overrides are expected to be valid
// (board.Parse checks them); zero values still work: no periodic meter
// lines, publication at the exact threshold crossing, the smallest
// threshold (0.001 °C). overrides, by device id, change what the devices
// declare (risk, safe value); an output with a safe value starts at it.
func New(cfg Config, clk clock.Clock, overrides map[string]Override) *Board {
	b := &Board{clk: clk, initial: map[string]any{}}
	desc := map[string]device.Descriptor{}
	for _, d := range Descriptors(cfg) {
		desc[d.ID] = overrides[d.ID].Apply(d)
	}
	b.thermo = newThermometer(desc[Temperature], clk, cfg.TemperatureThreshold, cfg.PollInterval)
	devEnd, instEnd := net.Pipe()
	b.meter = &meter{port: instEnd, clk: clk, interval: cfg.MeterInterval, temp: b.thermo.Temperature}
	b.devices = []device.Device{
		b.output(desc[LED], false, nil),
		b.input(desc[Button]),
		b.input(desc[Door]),
		b.output(desc[Heater], false, func(v any) { b.thermo.setHeater(v.(bool)) }),
		b.thermo,
		b.output(desc[Fan], 0.0, nil),
		serialline.NewLineDevice(desc[Meter], devEnd, '\n', clk),
	}
	return b
}

// Descriptors returns the descriptors of the sim board's devices, in the
// order Start adds them, before any Override: what New(cfg, clk, nil)
// makes, without making anything. cfg is taken for the settings that
// shape a device (none yet; the timing settings do not).
func Descriptors(cfg Config) []device.Descriptor {
	maxLen := serialline.MaxLine
	zero, hundred := 0.0, 100.0
	boolean := device.Schema{Type: device.TypeBoolean}
	rw, r := device.AccessReadWrite, device.AccessRead
	low, high := device.RiskLow, device.RiskHigh
	fan := wired(describe(Fan, device.KindPWM, "Fan", rw, low,
		device.Schema{Type: device.TypeNumber, Minimum: &zero, Maximum: &hundred, Unit: "%"}, 0.0), FanPin)
	fan.Frequency = FanFrequency
	return []device.Descriptor{
		wired(describe(LED, device.KindGPIOOutput, "LED", rw, low, boolean, false), LEDPin),
		wired(describe(Button, device.KindGPIOInput, "Button (true = pressed)", r, low, boolean, nil), ButtonPin),
		wired(describe(Door, device.KindGPIOInput, "Door contact (true = open)", r, low, boolean, nil), DoorPin),
		wired(describe(Heater, device.KindGPIOOutput, "Heater relay", rw, high, boolean, false), HeaterPin),
		describe(Temperature, device.KindSensor, "Temperature", r, low,
			device.Schema{Type: device.TypeObject, Properties: map[string]device.Schema{
				"temperature": {Type: device.TypeNumber, Unit: "Cel"},
			}}, nil),
		fan,
		meterDescriptor(describe(Meter, device.KindSerial, "Meter", rw, low,
			device.Schema{Type: device.TypeString, MaxLength: &maxLen}, nil)),
	}
}

// MeterNoSafe is why sim.meter has no safe value unless the file gives it
// a line to send.
const MeterNoSafe = "a line instrument: the stop sends it no line; its safe may name one"

func meterDescriptor(d device.Descriptor) device.Descriptor {
	d.NoSafeReason = MeterNoSafe
	return d
}

// wired returns d with the pin it stands for.
func wired(d device.Descriptor, pin string) device.Descriptor {
	d.Pin = pin
	return d
}

func describe(id, kind, label string, access device.Access, risk device.Risk, schema device.Schema, safe any) device.Descriptor {
	return device.Descriptor{
		ID: id, Kind: kind, Label: label, Source: "sim", Access: access, Risk: risk,
		Schema: schema, Safe: safe, State: device.StateOK, Tags: []string{"sim"},
	}
}

// output makes an output that starts at its safe value, or at fallback
// when it has none; onWrite sees the initial value too, so that the bench
// starts in step with it.
func (b *Board) output(desc device.Descriptor, fallback any, onWrite func(any)) *output {
	initial := fallback
	if desc.Safe != nil {
		initial = desc.Safe
	}
	b.initial[desc.ID] = initial
	if onWrite != nil {
		onWrite(initial)
	}
	return &output{desc: desc, onWrite: onWrite}
}

func (b *Board) input(desc device.Descriptor) *input {
	b.initial[desc.ID] = false
	return &input{desc: desc, clk: b.clk}
}

// DefaultRules returns the sim board's own safety rules, by device id:
// sim.heater may be on only while sim.door is closed, and for at most
// HeaterMaxOn. The configuration file adds to them and overrides them
// (board.Config.Rules).
func DefaultRules() map[string]device.Rules {
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
