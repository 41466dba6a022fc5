package board

// SPI ADCs (issue 30, point 1): each channel of an MCP3004, MCP3008,
// MCP3204 or MCP3208 is a sensor device of its own. Several channels of
// one chip are several devices on one device file (/dev/spidev0.0),
// sharing the chip's VREF pin and its SPI clock; the builder gives them
// one SPI connection. hwcheck_spi.go checks these fields.

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"periph.io/x/conn/v3/physic"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/hw/sensor"
	"github.com/openhal/gateway/internal/hw/spi/mcp3xxx"
)

// spiADCs are the SPI ADC drivers by the name the file gives them.
var spiADCs = map[string]mcp3xxx.Model{
	"mcp3004": mcp3xxx.MCP3004, "mcp3008": mcp3xxx.MCP3008,
	"mcp3204": mcp3xxx.MCP3204, "mcp3208": mcp3xxx.MCP3208,
}

// spiADCNames lists them in the order messages name them.
var spiADCNames = []string{"mcp3004", "mcp3008", "mcp3204", "mcp3208"}

// Defaults of an SPI ADC's fields.
const (
	// DefaultVref is the VREF of a chip wired to the Raspberry Pi's
	// 3.3 V, as gpiozero's max_voltage assumes.
	DefaultVref = 3.3
	// DefaultADCQuantity names the scaled quantity without quantity:.
	DefaultADCQuantity = "value"
	// voltageQuantity is the volts at the input, always measured.
	voltageQuantity = "voltage"
)

// ADCConfig is an SPI ADC channel as the builder takes it, with the
// defaults of the fields the file leaves out.
type ADCConfig struct {
	Model mcp3xxx.Model
	// Bus is the chip's device file, "/dev/spidev0.0" however the file
	// wrote it ("0.0").
	Bus   string
	Input mcp3xxx.Input
	Vref  float64          // volts
	Clock physic.Frequency // the SPI clock (mcp3xxx.DefaultClock)
	// Scaled is the quantity the volts are scaled to; nil without
	// scale:.
	Scaled *ADCScale
}

// ADCScale is a linear scale of an ADC's volts: Scale × volts + Offset,
// published as Quantity.
type ADCScale struct {
	Quantity      sensor.Quantity
	Scale, Offset float64
}

// SPIADC is dc as an SPI ADC channel, and whether its driver is one. A
// channel the file leaves out is -1.
func (dc DeviceConfig) SPIADC() (ADCConfig, bool) {
	m, ok := spiADCs[dc.Driver]
	if !ok {
		return ADCConfig{}, false
	}
	a := ADCConfig{Model: m, Bus: spiBusPath(dc.Bus), Input: mcp3xxx.Input{Channel: -1}, Vref: DefaultVref, Clock: mcp3xxx.DefaultClock}
	if dc.Channel != nil {
		a.Input.Channel = *dc.Channel
	}
	a.Input.Differential = dc.Differential != nil && *dc.Differential
	if dc.Vref != nil {
		a.Vref = *dc.Vref
	}
	if dc.MaxHz != nil && !math.IsNaN(*dc.MaxHz) && *dc.MaxHz > 0 && *dc.MaxHz < 1e9 {
		a.Clock = physic.Frequency(math.Round(*dc.MaxHz * float64(physic.Hertz)))
	}
	if dc.Scale != nil {
		s := &ADCScale{Quantity: sensor.Quantity{Name: DefaultADCQuantity, Unit: dc.Unit}, Scale: *dc.Scale}
		if dc.Quantity != "" {
			s.Quantity.Name = dc.Quantity
		}
		if dc.Offset != nil {
			s.Offset = *dc.Offset
		}
		a.Scaled = s
	}
	return a, true
}

// Quantities are what the channel's device publishes: voltage in V, and
// the scaled quantity.
func (a ADCConfig) Quantities() []sensor.Quantity {
	q := []sensor.Quantity{{Name: voltageQuantity, Unit: "V"}}
	if a.Scaled != nil {
		q = append(q, a.Scaled.Quantity)
	}
	return q
}

// Values are the device's value for a reading of volts.
func (a ADCConfig) Values(volts float64) map[string]float64 {
	v := map[string]float64{voltageQuantity: volts}
	if s := a.Scaled; s != nil {
		v[s.Quantity.Name] = volts*s.Scale + s.Offset
	}
	return v
}

// describeADC fills d, a sensor's descriptor, for the channel a: the
// volts from 0 to VREF (a chip reads no more: its top count is
// VREF × (2^bits − 1) / 2^bits), so that a client that thinks in counts
// (gpiozero's MCP3008) can compute them, and the scaled quantity over
// the same range; where the channel sits, and whether it is a pair.
func (dc DeviceConfig) describeADC(d device.Descriptor, a ADCConfig) device.Descriptor {
	zero, vref := 0.0, a.Vref
	props := map[string]device.Schema{
		voltageQuantity: {Type: device.TypeNumber, Unit: "V", Minimum: &zero, Maximum: &vref},
	}
	if s := a.Scaled; s != nil {
		lo, hi := s.Offset, vref*s.Scale+s.Offset
		if lo > hi {
			lo, hi = hi, lo
		}
		props[s.Quantity.Name] = device.Schema{Type: device.TypeNumber, Unit: s.Quantity.Unit, Minimum: &lo, Maximum: &hi}
	}
	d.Schema = device.Schema{Type: device.TypeObject, Properties: props}
	d.Access, d.Risk = device.AccessRead, device.RiskLow
	d.Bus, d.Chip = a.Bus, dc.Driver
	if dc.Channel != nil {
		ch := *dc.Channel
		d.Channel = &ch
	}
	d.Differential = a.Input.Differential
	return d
}

// parseSPIBus reads an SPI device, "/dev/spidev0.1" or "0.1", as its bus
// and chip select.
func parseSPIBus(s string) (bus, cs int, ok bool) {
	b, c, found := strings.Cut(strings.TrimPrefix(s, "/dev/spidev"), ".")
	bus, err1 := strconv.Atoi(b)
	cs, err2 := strconv.Atoi(c)
	digits := func(x string) bool { return x != "" && strings.Trim(x, "0123456789") == "" }
	if !found || err1 != nil || err2 != nil || !digits(b) || !digits(c) || bus > 32767 || cs > 255 {
		return 0, 0, false
	}
	return bus, cs, true
}

// spiBusPath is an SPI device as its device file: "0.0" is
// "/dev/spidev0.0"; what is not an SPI device stays as written.
func spiBusPath(s string) string {
	bus, cs, ok := parseSPIBus(s)
	if !ok {
		return s
	}
	return fmt.Sprintf("/dev/spidev%d.%d", bus, cs)
}
