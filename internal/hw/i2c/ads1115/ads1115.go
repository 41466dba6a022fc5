// Package ads1115 drives the TI ADS1115 16-bit ADC (datasheet SBAS444) over
// I²C, measuring its inputs AIN0..AIN3 single-ended against GND.
//
// Every Sense makes one single-shot conversion per configured input: the
// chip powers down between them, and each result belongs to the moment it
// was asked for rather than to a free-running conversion of unknown age.
package ads1115

import (
	"context"
	"errors"
	"fmt"
	"github.com/openhal/gateway/internal/clock"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/openhal/gateway/internal/hw/sensor"

	"periph.io/x/conn/v3/i2c"
)

// ErrNotADS1115 is wrapped by New when the configuration register does not
// read back what was written to it: another kind of chip (a TMP102 shares
// the addresses) or a bus that loses bits.
var ErrNotADS1115 = errors.New("not an ADS1115")

// FullScale is a setting of the programmable gain amplifier, named by its
// full-scale range in millivolts (SBAS444 Table 3). The range is not a
// licence: the inputs must stay within GND−0.3 V..VDD+0.3 V whatever it is,
// so ±6.144 V and ±4.096 V only spare the upper codes on a 5 V or 3.3 V
// supply.
type FullScale int

// The six ranges; one LSB is the range divided by 32768.
const (
	FS6144mV FullScale = 6144 // 187.5 µV/LSB
	FS4096mV FullScale = 4096 // 125 µV/LSB
	FS2048mV FullScale = 2048 // 62.5 µV/LSB, the power-up default
	FS1024mV FullScale = 1024 // 31.25 µV/LSB
	FS512mV  FullScale = 512  // 15.625 µV/LSB
	FS256mV  FullScale = 256  // 7.8125 µV/LSB
)

// Opts configures the device. The zero value measures all four inputs at
// ±2.048 V and 128 samples per second.
type Opts struct {
	// Channels lists the inputs to measure, 0..3 for AIN0..AIN3; empty
	// means all four.
	Channels []int
	// FullScale applies to every channel; zero means FS2048mV.
	FullScale FullScale
	// DataRate is in samples per second: 8, 16, 32, 64, 128, 250, 475 or
	// 860; zero means 128. A conversion takes 1/DataRate, and a slower
	// rate averages away more noise (SBAS444, Noise Performance).
	DataRate int
}

const (
	regConversion = 0x00
	regConfig     = 0x01

	cfgOS         = 1 << 15 // write 1: start a conversion; reads 1 when idle
	cfgMuxSingle  = 0b100   // MUX[2:0] = 1xx: AIN(xx) against GND
	cfgModeSingle = 1 << 8  // power down after each conversion
	cfgCompOff    = 0b11    // COMP_QUE: comparator off, ALERT/RDY high-Z

	// The internal oscillator runs within ±10 % (SBAS444, data rate
	// variation), so a conversion can take 1.1/DataRate. The status is
	// then polled every tenth of a conversion time, at most maxPolls
	// times, which bounds a Sense at about twice the conversion time per
	// channel even if the chip never reports done.
	pollsPerConversion = 10
	maxPolls           = 10
)

// Dev is one ADS1115.
type Dev struct {
	c        i2c.Dev
	channels []int
	fsVolts  float64
	base     uint16 // configuration without OS and MUX
	conv     time.Duration
	sleep    func(context.Context, time.Duration) error

	mu      sync.Mutex // one Sense at a time: the chip has one converter
	pending bool       // a conversion was started and not seen to finish
}

var _ sensor.Sensor = (*Dev)(nil)

// New configures the ADS1115 at addr (0x48..0x4B) for single-shot
// conversions and reads the configuration back to check that an ADS1115
// took it. nil opts means the zero Opts.
func New(b i2c.Bus, addr uint16, opts *Opts) (*Dev, error) {
	o := Opts{}
	if opts != nil {
		o = *opts
	}
	if addr < 0x48 || addr > 0x4B {
		return nil, fmt.Errorf("ads1115: address %#x: an ADS1115 answers at 0x48..0x4b", addr)
	}
	d := &Dev{c: i2c.Dev{Bus: b, Addr: addr}, sleep: clock.SleepReal}
	if err := d.setOpts(o); err != nil {
		return nil, err
	}
	want := d.config(d.channels[0])
	if err := d.write(want); err != nil {
		return nil, fmt.Errorf("ads1115: write configuration: %w", err)
	}
	got, err := d.readConfig()
	if err != nil {
		return nil, fmt.Errorf("ads1115: read configuration back: %w", err)
	}
	if got&^cfgOS != want {
		return nil, fmt.Errorf("ads1115: configuration reads back %#04x after writing %#04x: %w", got, want, ErrNotADS1115)
	}
	return d, nil
}

// channels are the inputs o converts: its own, sorted, or all four.
func channels(o Opts) []int {
	if len(o.Channels) > 0 {
		return slices.Sorted(slices.Values(o.Channels))
	}
	return []int{0, 1, 2, 3}
}

// Quantities are what a Dev made with opts measures, known without the
// chip: the gateway describes a sensor that does not answer yet.
func Quantities(opts *Opts) []sensor.Quantity {
	var o Opts
	if opts != nil {
		o = *opts
	}
	return quantities(channels(o))
}

func quantities(chans []int) []sensor.Quantity {
	q := make([]sensor.Quantity, len(chans))
	for i, ch := range chans {
		q[i] = sensor.Quantity{Name: "ain" + strconv.Itoa(ch), Unit: "V"}
	}
	return q
}

func (d *Dev) setOpts(o Opts) error {
	d.channels = channels(o)
	for i, ch := range d.channels {
		if ch < 0 || ch > 3 {
			return fmt.Errorf("ads1115: channel %d: the inputs are 0..3", ch)
		}
		if i > 0 && d.channels[i-1] == ch {
			return fmt.Errorf("ads1115: channel %d listed twice", ch)
		}
	}
	if o.FullScale == 0 {
		o.FullScale = FS2048mV
	}
	pga := slices.Index([]FullScale{FS6144mV, FS4096mV, FS2048mV, FS1024mV, FS512mV, FS256mV}, o.FullScale)
	if pga < 0 {
		return fmt.Errorf("ads1115: full scale %d mV: not a PGA setting", o.FullScale)
	}
	if o.DataRate == 0 {
		o.DataRate = 128
	}
	dr := slices.Index([]int{8, 16, 32, 64, 128, 250, 475, 860}, o.DataRate)
	if dr < 0 {
		return fmt.Errorf("ads1115: data rate %d SPS: not a DR setting", o.DataRate)
	}
	d.fsVolts = float64(o.FullScale) / 1000
	d.base = uint16(pga)<<9 | cfgModeSingle | uint16(dr)<<5 | cfgCompOff
	d.conv = time.Second / time.Duration(o.DataRate)
	return nil
}

// config is the configuration register that selects channel ch, without
// starting a conversion.
func (d *Dev) config(ch int) uint16 {
	return d.base | uint16(cfgMuxSingle|ch)<<12
}

// Quantities implements sensor.Sensor: ain0..ain3 in volts, for the
// configured channels.
func (d *Dev) Quantities() []sensor.Quantity { return quantities(d.channels) }

// Sense converts each configured channel in turn. It gives up when ctx
// ends, between bus transfers.
func (d *Dev) Sense(ctx context.Context) (map[string]float64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]float64, len(d.channels))
	for _, ch := range d.channels {
		v, err := d.convert(ctx, ch)
		if err != nil {
			return nil, err
		}
		out["ain"+strconv.Itoa(ch)] = v
	}
	return out, nil
}

// convert makes one single-shot conversion of channel ch. The chip ignores
// a start while it converts, so a conversion abandoned by an earlier call
// is waited out first: otherwise its result would pass for this channel's.
func (d *Dev) convert(ctx context.Context, ch int) (float64, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("ads1115: convert AIN%d: %w", ch, err)
	}
	if d.pending {
		if err := d.awaitIdle(ctx); err != nil {
			return 0, fmt.Errorf("ads1115: wait out earlier conversion: %w", err)
		}
	}
	if err := d.write(d.config(ch) | cfgOS); err != nil {
		return 0, fmt.Errorf("ads1115: start AIN%d conversion: %w", ch, err)
	}
	d.pending = true
	err := d.sleep(ctx, d.conv+d.conv/10)
	if err == nil {
		err = d.awaitIdle(ctx)
	}
	if err != nil {
		return 0, fmt.Errorf("ads1115: wait for AIN%d conversion: %w", ch, err)
	}
	var b [2]byte
	if err := d.c.Tx([]byte{regConversion}, b[:]); err != nil {
		return 0, fmt.Errorf("ads1115: read AIN%d conversion: %w", ch, err)
	}
	return d.volts(b), nil
}

// awaitIdle polls the OS bit until the chip reports no conversion running.
func (d *Dev) awaitIdle(ctx context.Context) error {
	for i := 0; ; i++ {
		c, err := d.readConfig()
		if err != nil {
			return fmt.Errorf("read status: %w", err)
		}
		if c&cfgOS != 0 {
			d.pending = false
			return nil
		}
		if i == maxPolls {
			return fmt.Errorf("still converting %v after the start", d.conv+d.conv/10+maxPolls*d.conv/pollsPerConversion)
		}
		if err := d.sleep(ctx, d.conv/pollsPerConversion); err != nil {
			return err
		}
	}
}

// volts decodes the conversion register, a big-endian two's complement
// count of FSR/32768 (SBAS444, Data Format): 0x7FFF is +FSR·(2¹⁵−1)/2¹⁵ and
// 0x8000 is −FSR.
func (d *Dev) volts(b [2]byte) float64 {
	return float64(int16(uint16(b[0])<<8|uint16(b[1]))) * d.fsVolts / 32768
}

func (d *Dev) write(cfg uint16) error {
	return d.c.Tx([]byte{regConfig, byte(cfg >> 8), byte(cfg)}, nil)
}

func (d *Dev) readConfig() (uint16, error) {
	var b [2]byte
	if err := d.c.Tx([]byte{regConfig}, b[:]); err != nil {
		return 0, err
	}
	return uint16(b[0])<<8 | uint16(b[1]), nil
}

func (d *Dev) String() string {
	return fmt.Sprintf("ADS1115{%s}", &d.c)
}
