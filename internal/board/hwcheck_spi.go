package board

// The checks of SPI ADC channels (issue 30, point 1; spiadc.go).

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/openhal/gateway/internal/board/profile"
	"github.com/openhal/gateway/internal/hw/sensor"
	"github.com/openhal/gateway/internal/hw/spi/mcp3xxx"
)

// spiADCFields are the sensor fields an SPI ADC channel takes.
var spiADCFields = []string{"driver", "bus", "channel", "differential", "vref", "maxHz", "scale", "offset", "unit", "quantity", "interval", "thresholds"}

// spiOnlyFields are the sensor fields only the SPI ADCs take.
var spiOnlyFields = []string{"channel", "differential", "vref", "maxHz", "scale", "offset", "unit", "quantity"}

// The VREF pin's range in both datasheets' electrical characteristics
// (DS21295, DS21298): 0.25 V to VDD, at most 5.5 V.
const (
	minVref = 0.25
	maxVref = 5.5
)

// spiUsage records what the SPI ADCs checked so far hold.
type spiUsage struct {
	chips map[string]spiChip // by device file: the chip its first device says is there
	reads map[spiRead]string // each measurement, by the device that makes it
	buses map[int]*spiBusUse // by SPI bus number
	order []int              // the buses in the order of the file
}

// spiChip is what the channels of one chip must agree on.
type spiChip struct {
	id, driver string
	vref       float64
	clock      float64
	// vrefOK and clockOK: the values passed their own checks (a wrong
	// one is reported once, on its own field, not again as a mismatch).
	vrefOK, clockOK bool
}

type spiRead struct {
	file         string
	channel      int
	differential bool
}

// spiBusUse is an SPI bus the ADCs use: its first device, and the
// highest chip select used on it.
type spiBusUse struct {
	id    string
	maxCS int
}

func (u *usage) spiUse() *spiUsage {
	if u.spi == nil {
		u.spi = &spiUsage{chips: map[string]spiChip{}, reads: map[spiRead]string{}, buses: map[int]*spiBusUse{}}
	}
	return u.spi
}

// spiADC checks a sensor whose driver is an SPI ADC, and reports whether
// it was one. A sensor of another known driver that sets an SPI ADC's
// field has it refused.
func (v *validator) spiADC(path, id string, dc DeviceConfig, t target, u *usage) bool {
	a, ok := dc.SPIADC()
	if !ok {
		if _, known := drivers[dc.Driver]; known {
			v.notSPIFields(path, dc)
		}
		return false
	}
	for _, f := range dc.setFields() {
		if slices.Contains(kindFields[dc.Kind], f) && !slices.Contains(spiADCFields, f) {
			v.add(path+"."+f, "an %s channel has no %s (its fields: %s)", dc.Driver, f, strings.Join(spiADCFields, ", "))
		}
	}
	bus, cs, busOK := v.spiBus(path+".bus", dc.Bus)
	chOK := v.adcChannel(path, dc, a)
	chip := spiChip{
		id: id, driver: dc.Driver, vref: a.Vref, clock: float64(a.Clock) / 1e6,
		vrefOK: v.vref(path+".vref", dc.Vref), clockOK: v.adcClock(path+".maxHz", dc.MaxHz, a.Model),
	}
	v.adcScale(path, dc)
	if dc.Interval != nil {
		v.duration(path+".interval", *dc.Interval)
	}
	v.thresholds(path+".thresholds", dc, driver{quantities: func(SensorOptions) []sensor.Quantity { return a.Quantities() }})
	if busOK {
		v.claimADC(path, id, dc, a, chip, bus, cs, chOK, u.spiUse())
	}
	return true
}

// notSPIFields refuses an SPI ADC's fields on another sensor.
func (v *validator) notSPIFields(path string, dc DeviceConfig) {
	for _, f := range dc.setFields() {
		if slices.Contains(spiOnlyFields, f) {
			v.add(path+"."+f, "a %s sensor has no %s (%s is for the SPI ADCs: %s)", dc.Driver, f, f, listWords(spiADCNames))
		}
	}
}

// spiBus parses an SPI device, /dev/spidev0.0 or "0.0".
func (v *validator) spiBus(path, s string) (bus, cs int, ok bool) {
	if s == "" {
		v.add(path, "required (the chip's SPI device: /dev/spidev0.0 for bus 0, chip select 0 (CE0), or \"0.0\")")
		return 0, 0, false
	}
	bus, cs, ok = parseSPIBus(s)
	if !ok {
		v.add(path, "want an SPI device, /dev/spidevB.C or \"B.C\" (bus B, chip select C: /dev/spidev0.0, \"0.1\"), got %q", s)
	}
	return bus, cs, ok
}

// adcChannel checks the channel against the model's inputs, or its
// differential configurations (the datasheets' tables 5-2: CH0-CH1 is 0,
// CH1-CH0 is 1...).
func (v *validator) adcChannel(path string, dc DeviceConfig, a ADCConfig) bool {
	n := a.Model.Channels()
	switch ch := dc.Channel; {
	case ch == nil:
		v.add(path+".channel", "required (the %v's input, 0 to %d)", a.Model, n-1)
	case *ch >= 0 && *ch < n:
		return true
	case a.Input.Differential:
		var pairs []string
		for i := range n {
			pairs = append(pairs, fmt.Sprintf("%d (%v)", i, mcp3xxx.Input{Channel: i, Differential: true}))
		}
		v.add(path+".channel", "channel %d: the %v's differential configurations are %s (IN+ first)", *ch, a.Model, listWords(pairs))
	default:
		v.add(path+".channel", "channel %d: the %v has inputs CH0 to CH%d (0 to %d)", *ch, a.Model, n-1, n-1)
	}
	return false
}

func (v *validator) vref(path string, vref *float64) bool {
	switch {
	case vref == nil:
	case math.IsNaN(*vref) || math.IsInf(*vref, 0):
		v.add(path, "want a finite number of volts, got %v", *vref)
	case *vref < minVref || *vref > maxVref:
		v.add(path, "%v V: the VREF pin takes %v V to VDD (at most %v V), the voltage it is wired to (3.3 on a Raspberry Pi's 3.3 V pin)", *vref, minVref, maxVref)
	default:
		return true
	}
	return vref == nil
}

// adcClock checks maxHz against the datasheet's limits: at least 10 kHz
// (the sample capacitor droops), at most the clock at VDD = 5 V.
func (v *validator) adcClock(path string, hz *float64, m mcp3xxx.Model) bool {
	lo, hi := float64(mcp3xxx.MinClock)/1e6, float64(m.MaxClock())/1e6
	low := map[int]string{10: "1.35 MHz", 12: "1 MHz"}[m.Bits()]
	switch {
	case hz == nil:
	case math.IsNaN(*hz) || math.IsInf(*hz, 0):
		v.add(path, "want a finite number of Hz, got %v", *hz)
	case *hz < lo:
		v.add(path, "%v Hz is below the %v's %v Hz: its sample capacitor droops during the conversion", *hz, m, lo)
	case *hz > hi:
		v.add(path, "%v Hz is above the %v's %v MHz (its datasheet's limit at VDD 5 V; %s at 2.7 V)", *hz, m, hi/1e6, low)
	default:
		return true
	}
	return hz == nil
}

var (
	propertyName = regexp.MustCompile(`^[a-z][A-Za-z0-9_]{0,31}$`)
	unitSymbol   = regexp.MustCompile(`^[\pL\pN%/._°-]{1,16}$`)
)

// adcScale checks the linear scale: scale, and offset, unit and
// quantity, which only make sense with it.
func (v *validator) adcScale(path string, dc DeviceConfig) {
	finite := func(f string, x *float64) {
		if x != nil && (math.IsNaN(*x) || math.IsInf(*x, 0)) {
			v.add(path+"."+f, "want a finite number, got %v", *x)
		}
	}
	finite("scale", dc.Scale)
	finite("offset", dc.Offset)
	if dc.Scale != nil && *dc.Scale == 0 {
		v.add(path+".scale", "must not be 0: the scaled quantity would be the offset whatever the input")
	}
	if dc.Scale == nil {
		for f, set := range map[string]bool{"offset": dc.Offset != nil, "unit": dc.Unit != "", "quantity": dc.Quantity != ""} {
			if set {
				v.add(path+"."+f, "needs scale: the scaled quantity is voltage × scale + offset")
			}
		}
	}
	if u := dc.Unit; u != "" && (!unitSymbol.MatchString(u) || strings.Trim(u, "0123456789") == "") {
		v.add(path+".unit", "want a short unit symbol, SenML's where it has one (%%, %%RH, Cel, lx, m, kPa, V): up to 16 letters, digits or %% / . _ ° -, got %q", u)
	}
	switch q := dc.Quantity; {
	case q == "":
	case q == voltageQuantity:
		v.add(path+".quantity", "%q is the volts' own name: name the scaled quantity for what it measures (moisture, level)", q)
	case !propertyName.MatchString(q):
		v.add(path+".quantity", "want a property name: a lowercase letter, then letters, digits or _, at most 32 (moisture, level), got %q", q)
	}
}

// claimADC records the channel's measurement and its chip: a measurement
// made twice, or channels of one chip that disagree on the chip's
// model, VREF or clock, are refused.
func (v *validator) claimADC(path, id string, dc DeviceConfig, a ADCConfig, chip spiChip, bus, cs int, chOK bool, s *spiUsage) {
	file := a.Bus
	if chOK {
		r := spiRead{file, a.Input.Channel, a.Input.Differential}
		if other, dup := s.reads[r]; dup {
			v.add(path+".channel", "%v of the %s on %s is also read by devices.%s", a.Input, dc.Driver, file, other)
		} else {
			s.reads[r] = id
		}
	}
	if first, seen := s.chips[file]; !seen {
		s.chips[file] = chip
	} else {
		switch {
		case first.driver != chip.driver:
			v.add(path+".driver", "%s is the %s of devices.%s: one chip select, one chip", file, first.driver, first.id)
		case first.vref != chip.vref && first.vrefOK && chip.vrefOK:
			v.add(path+".vref", "%v V, but devices.%s on the same chip (%s) says %v V: its channels share one VREF pin", chip.vref, first.id, file, first.vref)
		case first.clock != chip.clock && first.clockOK && chip.clockOK:
			v.add(path+".maxHz", "%v Hz, but devices.%s on the same chip (%s) says %v Hz: its channels share one SPI connection", chip.clock, first.id, file, first.clock)
		}
	}
	if use, seen := s.buses[bus]; seen {
		use.maxCS = max(use.maxCS, cs)
	} else {
		s.buses[bus] = &spiBusUse{id: id, maxCS: cs}
		s.order = append(s.order, bus)
	}
}

// spiPins reports GPIO devices on the header lines of an SPI controller
// an ADC uses, as busPins does for I2C and UARTs.
func (v *validator) spiPins(t target, u *usage) {
	label := t.prof.GPIOChipLabel
	if label == "" || u.spi == nil {
		return
	}
	for _, bus := range u.spi.order {
		for _, c := range t.prof.SPI {
			if c.Bus != bus {
				continue
			}
			use := u.spi.buses[bus]
			lines := c.Lines(use.maxCS)
			for _, line := range slices.Sorted(maps.Keys(lines)) {
				if pu, used := u.pins[label+":"+strconv.Itoa(line)]; used {
					v.add(pu.field, "%s is %s of %s (/dev/spidev%d.N), which the kernel holds once %s, used by devices.%s",
						pu.shown, lines[line], strings.ToUpper(c.Name), c.Bus, spiEnabledBy(c), use.id)
				}
			}
		}
	}
}

// spiEnabledBy says what gives a controller's lines to the kernel.
func spiEnabledBy(c profile.SPI) string {
	if c.EnableCS > 0 {
		return c.Enable + " enables it"
	}
	return "its overlay enables it (" + c.Enable + ")"
}
