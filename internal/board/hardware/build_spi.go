package hardware

// SPI ADCs (issue 30, point 1): each channel of an MCP3xxx is a sensor
// device; the channels on one device file share one adcChip, which owns
// the file's one spi.Conn.

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"periph.io/x/conn/v3/physic"
	"periph.io/x/conn/v3/spi"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/board"
	"github.com/openhal/gateway/internal/hw/sensor"
	"github.com/openhal/gateway/internal/hw/spi/mcp3xxx"
)

// spiADC makes the sensor device of one ADC channel. Nothing is opened
// here: the chip is set up at the first reading of any of its channels,
// so a /dev/spidev that is missing (SPI not enabled yet, the overlay not
// loaded) is a device in fault that clears once it is there, as an I2C
// sensor that does not answer is.
func (b *builder) spiADC(desc device.Descriptor, dc board.DeviceConfig, adc board.ADCConfig) (device.Device, error) {
	chip, err := b.adcChip(adc)
	if err != nil {
		return nil, err
	}
	s := sensor.Defer(adc.Quantities(), func() (sensor.Sensor, error) {
		if err := chip.setUp(); err != nil {
			return nil, err
		}
		return &adcChannel{chip: chip, cfg: adc}, nil
	})
	opts := sensor.PollOpts{Interval: dc.SensorInterval(), Thresholds: dc.Thresholds}
	return sensor.NewDevice(desc, s, opts, b.clk), nil
}

// adcChip returns the chip on adc's device file, made by its first
// channel; its other channels must agree on what it is (the validator
// has checked they do).
func (b *builder) adcChip(adc board.ADCConfig) (*adcChip, error) {
	if c, ok := b.adcs[adc.Bus]; ok {
		if c.model != adc.Model || c.clock != adc.Clock {
			return nil, fmt.Errorf("%v at %v on %s: its other channels say %v at %v", adc.Model, adc.Clock, adc.Bus, c.model, c.clock)
		}
		return c, nil
	}
	if b.adcs == nil {
		b.adcs = map[string]*adcChip{}
	}
	c := &adcChip{bus: adc.Bus, model: adc.Model, clock: adc.Clock, open: b.host.SPIPort}
	b.adcs[adc.Bus] = c
	b.closers = append(b.closers, c.close)
	return c, nil
}

// adcChip is one MCP3xxx on one SPI device file. Its channels' devices
// poll on their own goroutines; mu makes their conversions take turns on
// the one connection (the kernel's spidev would serialise the transfers
// anyway: here it is said, and the setup and the reset after a failure
// are covered too).
type adcChip struct {
	bus   string
	model mcp3xxx.Model
	clock physic.Frequency
	open  func(dev string) (spi.PortCloser, error)

	mu   sync.Mutex
	port spi.PortCloser // nil until set up, and after a failure
	dev  *mcp3xxx.Dev
}

// setUp opens the device file and connects to the chip, if not done.
func (c *adcChip) setUp() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.setUpLocked()
}

func (c *adcChip) setUpLocked() error {
	if c.dev != nil {
		return nil
	}
	p, err := c.open(c.bus)
	if err != nil {
		return fmt.Errorf("%s on %s: %w", c.what(), c.bus, err)
	}
	d, err := mcp3xxx.New(p, c.model, c.clock)
	if err != nil {
		p.Close()
		return fmt.Errorf("%s on %s: %w", c.what(), c.bus, err)
	}
	c.port, c.dev = p, d
	return nil
}

// read converts in. A failed conversion closes the device file, so that
// the next reading of any channel opens it afresh (a device file that
// went away and came back is a new one).
func (c *adcChip) read(ctx context.Context, in mcp3xxx.Input, vref float64) (float64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.setUpLocked(); err != nil {
		return 0, err
	}
	count, err := c.dev.Read(ctx, in)
	if err != nil {
		c.closeLocked()
		return 0, fmt.Errorf("%s on %s: %w", c.what(), c.bus, err)
	}
	return c.dev.Volts(count, vref), nil
}

func (c *adcChip) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeLocked()
}

func (c *adcChip) closeLocked() error {
	if c.port == nil {
		return nil
	}
	err := c.port.Close()
	c.port, c.dev = nil, nil
	return err
}

// what names the chip as the file does: "mcp3008".
func (c *adcChip) what() string {
	return strings.ToLower(c.model.String())
}

// adcChannel is one channel's sensor: the volts, and the scaled
// quantity.
type adcChannel struct {
	chip *adcChip
	cfg  board.ADCConfig
}

func (a *adcChannel) Quantities() []sensor.Quantity { return a.cfg.Quantities() }

func (a *adcChannel) Sense(ctx context.Context) (map[string]float64, error) {
	v, err := a.chip.read(ctx, a.cfg.Input, a.cfg.Vref)
	if err != nil {
		return nil, err
	}
	return a.cfg.Values(v), nil
}
