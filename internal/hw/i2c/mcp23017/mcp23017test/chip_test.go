package mcp23017test

import (
	"errors"
	"testing"

	"periph.io/x/conn/v3/gpio"

	"github.com/openhal/gateway/internal/hw/i2c/mcp23017"
)

func open(t *testing.T, c *Chip, m mcp23017.Model, s mcp23017.Setup) *mcp23017.Dev {
	t.Helper()
	if err := c.INT().In(gpio.PullUp, gpio.FallingEdge); err != nil {
		t.Fatal(err)
	}
	d, err := mcp23017.Open(c, 0x20, m, s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func edge(t *testing.T, c *Chip) {
	t.Helper()
	select {
	case <-c.INT().EdgesChan:
	default:
		t.Fatal("INT did not fall")
	}
}

func noEdge(t *testing.T, c *Chip) {
	t.Helper()
	select {
	case <-c.INT().EdgesChan:
		t.Fatal("INT fell")
	default:
	}
}

// The driver's setup as the chip takes it: an output drives its latch,
// an input with its pull-up reads high, INT open-drain rests high on the
// line's pull-up.
func TestSetup(t *testing.T) {
	c := New(mcp23017.MCP23017, 0x20)
	open(t, c, mcp23017.MCP23017, mcp23017.Setup{Outputs: 1, Levels: 1, PullUps: 1 << 9, Watch: 1 << 9})
	if !c.IsOutput(0) || c.Level(0) != gpio.High || c.IsOutput(9) || c.Level(9) != gpio.High {
		t.Errorf("GPA0 output %v at %v, GPB1 output %v at %v", c.IsOutput(0), c.Level(0), c.IsOutput(9), c.Level(9))
	}
	if c.Register(0x0A) != 0x44 || c.Register(0x0B) != 0x44 {
		t.Errorf("IOCON %#x/%#x, want MIRROR|ODR at both addresses", c.Register(0x0A), c.Register(0x0B))
	}
	if c.INT().Read() != gpio.High {
		t.Error("INT low with nothing pending")
	}
	noEdge(t, c)
}

// A watched input's change pulls INT low (MIRROR: port B's on INTA);
// INTF and INTCAP say what happened, a second change before the read is
// not captured, and the read clears INT.
func TestInterrupt(t *testing.T) {
	c := New(mcp23017.MCP23017, 0x20)
	d := open(t, c, mcp23017.MCP23017, mcp23017.Setup{PullUps: 1 << 9, Watch: 1 << 9})
	c.Drive(9, gpio.Low)
	edge(t, c)
	c.Drive(9, gpio.High) // let go before the read
	noEdge(t, c)
	got, err := d.ReadInterrupt()
	if want := (mcp23017.Capture{Flags: 1 << 9, Captured: 0, Levels: 1 << 9}); err != nil || got != want {
		t.Errorf("ReadInterrupt = %+v, %v; want %+v", got, err, want)
	}
	if c.INT().Read() != gpio.High {
		t.Error("INT still low after the read")
	}
	// INTCAPB holds port B with GPB1 low; INTCAPA was never written.
	// Unwatched: no interrupt.
	c.Drive(1, gpio.High)
	noEdge(t, c)
}

// Without MIRROR, INTA says port A only: the chip after a reset.
func TestResetLosesMirror(t *testing.T) {
	c := New(mcp23017.MCP23017, 0x20)
	d := open(t, c, mcp23017.MCP23017, mcp23017.Setup{Outputs: 1, Levels: 1})
	c.PowerCycle()
	if ok, err := d.Configured(); ok || err != nil {
		t.Fatalf("Configured after a reset = %v, %v", ok, err)
	}
	if c.IsOutput(0) {
		t.Error("GPA0 still an output after a reset")
	}
	if err := d.Restore(); err != nil {
		t.Fatal(err)
	}
	if ok, err := d.Configured(); !ok || err != nil || !c.IsOutput(0) || c.Level(0) != gpio.High {
		t.Errorf("after Restore: configured %v (%v), GPA0 output %v at %v", ok, err, c.IsOutput(0), c.Level(0))
	}
}

// An open-drain INT without the line's pull-up reads low: the driver's
// user must ask for it.
func TestOpenDrainNeedsPullUp(t *testing.T) {
	c := New(mcp23017.MCP23008, 0x21)
	if err := c.INT().In(gpio.Float, gpio.FallingEdge); err != nil {
		t.Fatal(err)
	}
	if _, err := mcp23017.Open(c, 0x21, mcp23017.MCP23008, mcp23017.Setup{}); err != nil {
		t.Fatal(err)
	}
	if c.INT().Read() != gpio.Low {
		t.Error("open-drain INT without a pull-up reads high")
	}
}

// An absent chip, or one at another address, does not acknowledge.
func TestAbsent(t *testing.T) {
	c := New(mcp23017.MCP23008, 0x20)
	if _, err := mcp23017.Open(c, 0x21, mcp23017.MCP23008, mcp23017.Setup{}); !errors.Is(err, ErrNAK) {
		t.Errorf("another address: %v", err)
	}
	c.SetPresent(false)
	if _, err := mcp23017.New(c, 0x20, mcp23017.MCP23008); !errors.Is(err, ErrNAK) {
		t.Errorf("absent: %v", err)
	}
	if c.Txs() != 0 {
		t.Errorf("%d transfers answered", c.Txs())
	}
}
