package hardware

import (
	"fmt"
	"time"

	"periph.io/x/conn/v3/i2c"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/board"
	"github.com/openhal/gateway/internal/hw/i2c/pca9685"
	"github.com/openhal/gateway/internal/hw/pwm"
	"github.com/openhal/gateway/internal/hw/servo"
)

// pca9685Chip is the PCA9685 declared as chips.<name>, made once and
// shared by the devices on its outputs. Neither its bus nor the chip is
// opened here: the first write does (pca9685.Shared), so that a board
// unplugged, unpowered or on a bus that is not there puts its devices in
// fault, said with what failed, and the rest of the bench runs.
func (b *builder) pca9685Chip(name string, cc board.ChipConfig) (*pca9685.Shared, error) {
	if s, ok := b.pcas[name]; ok {
		return s, nil
	}
	if cc.Address == nil || cc.Frequency == nil {
		return nil, fmt.Errorf("chips.%s: no address or frequency", name)
	}
	host, bus := b.host, cc.Bus
	open := func() (i2c.BusCloser, error) {
		bc, err := host.I2CBus(bus)
		if err != nil {
			return nil, fmt.Errorf("open I2C bus %s: %w", bus, err)
		}
		return bc, nil
	}
	what := fmt.Sprintf("chips.%s (pca9685 at %#02x on I2C bus %s)", name, *cc.Address, bus)
	s, err := pca9685.NewShared(what, open, uint16(*cc.Address), *cc.Frequency)
	if err != nil {
		return nil, err
	}
	if b.pcas == nil {
		b.pcas = map[string]*pca9685.Shared{}
	}
	b.pcas[name] = s
	b.closers = append(b.closers, s.Close)
	return s, nil
}

// pca9685PWM is a pwm device on a PCA9685 output.
func (b *builder) pca9685PWM(desc device.Descriptor, dc board.DeviceConfig) (device.Device, error) {
	name, cc, _ := b.cfg.PCA9685(dc)
	initial, ok := dc.InitialValue().(float64)
	if !ok || dc.PWM.Channel == nil {
		return nil, fmt.Errorf("initial value %v or channel missing", dc.InitialValue())
	}
	chip, err := b.pca9685Chip(name, cc)
	if err != nil {
		return nil, err
	}
	o, err := pca9685.NewOutput(desc, chip, *dc.PWM.Channel, initial)
	if err != nil {
		return nil, err
	}
	b.closers = append(b.closers, o.Close)
	return o, nil
}

// servo is a servo on a PCA9685 output or on a hardware PWM channel. Its
// move ends before its output is released (closers run last first).
func (b *builder) servo(desc device.Descriptor, dc board.DeviceConfig) (device.Device, error) {
	initial, ok := dc.InitialValue().(float64)
	if !ok {
		return nil, fmt.Errorf("initial angle %v is not a number", dc.InitialValue())
	}
	cfg := dc.ServoConfig()
	out, hz, err := b.servoOutput(desc, dc, cfg, initial)
	if err != nil {
		return nil, err
	}
	d, err := servo.NewDevice(desc, cfg, out, initial, time.Duration(float64(time.Second)/hz), b.clk)
	if err != nil {
		return nil, err
	}
	b.closers = append(b.closers, d.Close)
	return d, nil
}

// servoOutput opens what makes a servo's pulse, and says its frequency.
// A hardware PWM channel starts at the initial angle's pulse; a PCA9685
// output at the servo's Run.
func (b *builder) servoOutput(desc device.Descriptor, dc board.DeviceConfig, cfg servo.Config, initial float64) (servo.Output, float64, error) {
	if name, cc, ok := b.cfg.PCA9685(dc); ok && dc.PWM.Channel != nil {
		chip, err := b.pca9685Chip(name, cc)
		if err != nil {
			return nil, 0, err
		}
		ch := pca9685.Channel{Chip: chip, N: *dc.PWM.Channel}
		b.closers = append(b.closers, ch.Off)
		return ch, chip.Frequency(), nil
	}
	pulse, err := cfg.Pulse(initial)
	if err != nil {
		return nil, 0, err
	}
	chip, channel, err := b.pwmChannel(dc)
	if err != nil {
		return nil, 0, err
	}
	hz := dc.ServoFrequency()
	hw, err := pwm.NewHardware(desc, b.host.SysRoot(), chip, channel, hz, pulse.Seconds()*hz*100)
	if err != nil {
		return nil, 0, err
	}
	b.closers = append(b.closers, hw.Close)
	return hw, hz, nil
}
