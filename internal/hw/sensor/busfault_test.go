package sensor_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/physic"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock"
	"github.com/openhal/gateway/internal/hw/i2c/mcp9808"
	"github.com/openhal/gateway/internal/hw/i2c/sht3x"
	"github.com/openhal/gateway/internal/hw/sensor"
)

// Faults at the edge of the hardware (issue 20): real drivers on a bus
// that stops acknowledging, damages a reading or is held, under a polled
// Device on the real clock.

// chipBus is an I²C bus with one healthy chip on it (answer fills a
// read), into which a fault is put and taken away.
type chipBus struct {
	answer func(w, r []byte)

	mu    sync.Mutex
	fault string        // "", "nak", "corrupt" or "hold"
	held  chan struct{} // closed to let a held transfer go
}

func (b *chipBus) String() string                    { return "fake-i2c" }
func (b *chipBus) SetSpeed(f physic.Frequency) error { return nil }

// Tx fails as the fault says. A NAK reads as periph's sysfs bus reports
// it on Linux; a hold ignores every deadline, as a transfer stuck in the
// kernel does.
func (b *chipBus) Tx(addr uint16, w, r []byte) error {
	b.mu.Lock()
	fault, held := b.fault, b.held
	b.mu.Unlock()
	switch fault {
	case "nak":
		return errors.New("sysfs-i2c: remote I/O error") // EREMOTEIO, as periph words it
	case "hold":
		<-held
	}
	b.answer(w, r)
	if fault == "corrupt" && len(r) > 0 {
		r[len(r)-1] ^= 0x5A
	}
	return nil
}

func (b *chipBus) set(fault string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fault == "hold" {
		close(b.held)
	}
	b.fault = fault
	if fault == "hold" {
		b.held = make(chan struct{})
	}
}

var _ i2c.Bus = (*chipBus)(nil)

// sht3xChip answers every read with 25 °C and 50 %RH (their CRCs right).
func sht3xChip(w, r []byte) {
	copy(r, []byte{0x66, 0x66, 0x93, 0x80, 0x00, 0xA2})
}

// mcp9808Chip is an MCP9808 at 25 °C.
func mcp9808Chip(w, r []byte) {
	if len(w) == 0 || len(r) < 2 {
		return
	}
	switch w[0] {
	case 0x06: // manufacturer id
		r[0], r[1] = 0x00, 0x54
	case 0x07: // device id and revision
		r[0], r[1] = 0x04, 0x00
	case 0x05: // ambient: 25 °C
		r[0], r[1] = 0x01, 0x90
	}
}

// states is a Reporter that hands on every state a poll reports.
type states chan string

func (s states) Value(any, time.Time) {}
func (s states) State(st device.State, fault string) {
	select {
	case s <- string(st) + " " + fault:
	default: // a slow test drops polls, never blocks one
	}
}

// next waits for the next poll's state that matches pred.
func (s states) next(t *testing.T, what string, pred func(string) bool) string {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case st := <-s:
			if pred(st) {
				return st
			}
		case <-deadline:
			t.Fatalf("no poll %s within 5 s", what)
		}
	}
}

func poll(t *testing.T, s sensor.Sensor) states {
	t.Helper()
	d := sensor.NewDevice(device.Descriptor{ID: "bench.x", Kind: device.KindSensor}, s,
		sensor.PollOpts{Interval: 20 * time.Millisecond, Deadline: 200 * time.Millisecond}, clock.Real())
	ch := make(states, 64)
	ctx := t.Context()
	go d.Run(ctx, ch)
	return ch
}

// TestBusFaults: each fault gives a fault state in words that say what
// to check, recovers by itself once the fault is gone, and never stops
// another sensor's polls meanwhile.
func TestBusFaults(t *testing.T) {
	type driver struct {
		name string
		chip func(w, r []byte)
		open func(i2c.Bus) (sensor.Sensor, error)
	}
	sht := driver{"sht3x", sht3xChip, func(b i2c.Bus) (sensor.Sensor, error) { return sht3x.New(b, 0x44, nil) }}
	mcp := driver{"mcp9808", mcp9808Chip, func(b i2c.Bus) (sensor.Sensor, error) { return mcp9808.New(b, 0x18, nil) }}
	for _, tc := range []struct {
		drv   driver
		fault string
		words []string
	}{
		{sht, "nak", []string{"did not answer on the bus", "check its wiring, power and address", "remote I/O error"}},
		{mcp, "nak", []string{"did not answer on the bus", "remote I/O error"}},
		{sht, "corrupt", []string{"arrived damaged", "pull-up resistors", "crc mismatch"}},
		{sht, "hold", []string{"no measurement within 200ms", "bus is stuck", "holding the bus"}},
		{mcp, "hold", []string{"no measurement within 200ms", "holding the bus"}},
	} {
		t.Run(tc.drv.name+" "+tc.fault, func(t *testing.T) {
			bus := &chipBus{answer: tc.drv.chip}
			s, err := tc.drv.open(bus)
			if err != nil {
				t.Fatal(err)
			}
			other, err := sht.open(&chipBus{answer: sht3xChip})
			if err != nil {
				t.Fatal(err)
			}
			ok := func(st string) bool { return st == "ok " }
			dev, neighbour := poll(t, s), poll(t, other)
			dev.next(t, "ok before the fault", ok)

			bus.set(tc.fault)
			fault := dev.next(t, "with a fault", func(st string) bool { return strings.HasPrefix(st, "fault ") })
			for _, w := range tc.words {
				if !strings.Contains(fault, w) {
					t.Errorf("fault %q does not say %q", fault, w)
				}
			}
			for len(neighbour) > 0 { // polls from before the fault
				<-neighbour
			}
			for i := 0; i < 3; i++ {
				neighbour.next(t, "of the other sensor during the fault", ok)
			}

			bus.set("")
			dev.next(t, "ok after the fault", ok)
		})
	}
}
