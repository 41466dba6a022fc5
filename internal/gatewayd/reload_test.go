//go:build unix

package gatewayd

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpiotest"
	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/spi"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/board"
	"github.com/openhal/gateway/internal/board/profile"
	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/internal/hw/gpioevent"
	"github.com/openhal/gateway/openhal"
)

// pinHost is a hardware.Host of periph's fake GPIO pins that behaves as
// the kernel's character device does where it matters to a reload: a
// line is held from its opening to its Close, and another opening of it
// meanwhile fails (EBUSY). It counts each line's Out calls: the times it
// was driven.
type pinHost struct {
	mu   sync.Mutex
	held map[int]bool
	busy map[int]bool // taken by another program
	outs map[int]int
	high map[int]int // Out(gpio.High) calls
}

func newPinHost() *pinHost {
	return &pinHost{held: map[int]bool{}, busy: map[int]bool{}, outs: map[int]int{}, high: map[int]int{}}
}

func (h *pinHost) Line(ref profile.LineRef) (gpio.PinIO, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held[ref.Offset] || h.busy[ref.Offset] {
		return nil, errors.New("device or resource busy")
	}
	h.held[ref.Offset] = true
	return &heldPin{Pin: &gpiotest.Pin{N: ref.String(), Num: ref.Offset, EdgesChan: make(chan gpio.Level)}, h: h, n: ref.Offset, halt: make(chan struct{}, 1)}, nil
}

func (h *pinHost) driven(n int) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.outs[n]
}

func (h *pinHost) drivenHigh(n int) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.high[n]
}

func (h *pinHost) isHeld(n int) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held[n]
}

func (*pinHost) I2CBus(string) (i2c.BusCloser, error)   { return nil, errors.New("no I2C here") }
func (*pinHost) SysRoot() string                        { return "/nonexistent" }
func (*pinHost) SPIPort(string) (spi.PortCloser, error) { return nil, errors.New("no SPI here") }
func (*pinHost) EdgeLine(profile.LineRef, gpioevent.Config) (gpioevent.Source, error) {
	return nil, errors.New("no edges here")
}

type heldPin struct {
	*gpiotest.Pin
	h    *pinHost
	n    int
	halt chan struct{}
}

// WaitForEdge waits for Halt (no edge ever comes), as the character
// device's does: gpiotest's own is not cut short by Halt.
func (p *heldPin) WaitForEdge(timeout time.Duration) bool {
	var after <-chan time.Time
	if timeout >= 0 {
		after = time.After(timeout)
	}
	select {
	case <-p.halt:
	case <-after:
	}
	return false
}

func (p *heldPin) Halt() error {
	select {
	case p.halt <- struct{}{}:
	default:
	}
	return nil
}

func (p *heldPin) Out(l gpio.Level) error {
	p.h.mu.Lock()
	p.h.outs[p.n]++
	if l == gpio.High {
		p.h.high[p.n]++
	}
	p.h.mu.Unlock()
	return p.Pin.Out(l)
}

func (p *heldPin) Close() error {
	p.h.mu.Lock()
	defer p.h.mu.Unlock()
	p.h.held[p.n] = false
	return nil
}

// reloadBench is a reloader over a boardSet of pinHost's lines, a Hub
// without listeners, and the events of its registry.
type reloadBench struct {
	r      *reloader
	host   *pinHost
	reg    *device.Registry
	events []string // "+id", "-id"; written under the registry's lock
}

func newReloadBench(t *testing.T, text string) *reloadBench {
	t.Helper()
	cfg := validConfig(t, text)
	prof, _ := profile.ByName(cfg.Board)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	b := &reloadBench{host: newPinHost(), reg: device.NewRegistry(nil)}
	b.reg.Subscribe(func(e device.Event) {
		switch e.Kind {
		case device.EventAdded:
			b.events = append(b.events, "+"+e.Device) // under the registry's lock
		case device.EventRemoved:
			b.events = append(b.events, "-"+e.Device)
		}
	})
	hub := halhub.New(b.reg, halhub.Options{StateDir: t.TempDir(), Logger: log, Rules: cfg.Rules()})
	t.Cleanup(hub.Close)
	ctx, cancel := context.WithCancel(context.Background())
	set := newBoardSet(ctx, prof, b.host, b.reg, log)
	if err := set.openAll(cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); set.wait() })
	b.r = &reloader{started: cfg, running: cfg, boards: set, hub: hub, log: log}
	return b
}

// apply applies text's devices as a reload does, and returns the
// registry's events meanwhile.
func (b *reloadBench) apply(t *testing.T, text string) ([]string, error) {
	t.Helper()
	next := validConfig(t, text)
	b.reg.Subscribe(func(device.Event) {})() // the events so far are in
	b.events = nil
	err := b.r.applyDevices(board.Compare(b.r.running, next), next)
	if err == nil {
		b.r.running = next
	}
	b.reg.Subscribe(func(device.Event) {})()
	return b.events, err
}

func validConfig(t *testing.T, text string) *board.Config {
	t.Helper()
	cfg, err := board.Parse([]byte(text))
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return cfg
}

const pinsBefore = `board: rpi4b
devices:
  led: {kind: gpio.output, pin: GPIO22, risk: low}
  lamp: {kind: gpio.output, pin: GPIO17, risk: low}
  door: {kind: gpio.input, pin: GPIO27}
`

// The pin of lamp, removed, goes to fan, added; door moves to another
// line; led does not change.
const pinsAfter = `board: rpi4b
devices:
  led: {kind: gpio.output, pin: GPIO22, risk: low}
  fan: {kind: gpio.output, pin: GPIO17, risk: low, initial: true}
  door: {kind: gpio.input, pin: GPIO23}
`

// TestReloadDevicesOnPins: a reload closes what it removes and changes
// before it opens what it adds and changes, so that a pin can go from one
// device to another; a device whose entry did not change keeps its driver
// and is never driven again; when the hardware refuses a device, the
// devices closed are opened again as they were.
func TestReloadDevicesOnPins(t *testing.T) {
	b := newReloadBench(t, pinsBefore)
	led, _ := b.reg.Device("led")
	ledOuts := b.host.driven(22)

	events, err := b.apply(t, pinsAfter)
	if err != nil {
		t.Fatalf("reload: %v", err)
	}
	slices.Sort(events)
	if want := []string{"+door", "+fan", "-door", "-lamp"}; !slices.Equal(events, want) {
		t.Errorf("registry events %v, want %v", events, want)
	}
	if now, _ := b.reg.Device("led"); now != led {
		t.Error("led has another driver after a reload that did not change it")
	}
	if n := b.host.driven(22); n != ledOuts {
		t.Errorf("led's line driven %d times during the reload", n-ledOuts)
	}
	if b.host.isHeld(27) || !b.host.isHeld(23) || !b.host.isHeld(17) {
		t.Errorf("lines held: 27 %v (want free), 23 %v, 17 %v (want held)", b.host.isHeld(27), b.host.isHeld(23), b.host.isHeld(17))
	}
	if v, ok := b.reg.Value("fan"); !ok || v.Value != true {
		t.Errorf("fan on lamp's old pin: %+v, %v; want its initial true", v, ok)
	}

	// GPIO5 is another program's: the reload fails, and door (changed in
	// the same reload) is back on its line.
	b.host.busy[5] = true
	bad := strings.Replace(pinsAfter, "GPIO23", "GPIO24", 1) + "  heater: {kind: gpio.output, pin: GPIO5, risk: low}\n"
	events, err = b.apply(t, bad)
	if err == nil || !strings.Contains(err.Error(), "devices.heater") {
		t.Fatalf("reload onto a busy line: %v; want an error naming devices.heater", err)
	}
	if ids := deviceIDsOf(b.reg); !slices.Equal(ids, []string{"door", "fan", "led"}) {
		t.Errorf("devices after the failed reload: %v (events %v)", ids, events)
	}
	if !b.host.isHeld(23) || b.host.isHeld(24) {
		t.Errorf("door after the failed reload: GPIO23 held %v, GPIO24 held %v; want it back on GPIO23", b.host.isHeld(23), b.host.isHeld(24))
	}
	if n := b.host.driven(22); n != ledOuts {
		t.Errorf("led's line driven %d times by the failed reload", n-ledOuts)
	}
}

func deviceIDsOf(reg *device.Registry) []string {
	var ids []string
	for _, d := range reg.List() {
		ids = append(ids, d.ID)
	}
	return ids
}

// A device a reload opens while the emergency stop is engaged starts at
// its safe value, never at its initial one, and the stop stays.
func TestReloadUnderStop(t *testing.T) {
	b := newReloadBench(t, pinsBefore)
	if _, err := b.r.hub.Stop(openhal.Principal{Kind: openhal.KindOperator, Name: "test"}, "drill"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.apply(t, pinsAfter); err != nil { // fan: initial true
		t.Fatal(err)
	}
	if n := b.host.drivenHigh(17); n != 0 {
		t.Errorf("fan, opened under the stop, was driven on %d times", n)
	}
	if v, ok := b.reg.Value("fan"); !ok || v.Value != false {
		t.Errorf("fan after a reload under the stop: %+v, %v; want its safe false", v, ok)
	}
	if !b.r.hub.Stopped() {
		t.Error("the reload lifted the stop")
	}
}
