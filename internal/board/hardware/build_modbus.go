package hardware

import (
	"context"
	"fmt"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/board"
	"github.com/openhal/gateway/internal/hw/modbus"
	"github.com/openhal/gateway/internal/hw/modbusline"
	"github.com/openhal/gateway/internal/hw/serialline"
)

// modbusDevice makes a Modbus device on its line, which the first device
// on it makes. Nothing is opened here: a line opens its link once
// started, and a unit that is not there is a device offline or in fault,
// not an error.
func (b *builder) modbusDevice(desc device.Descriptor, dc board.DeviceConfig) (device.Device, error) {
	lc, ok := b.cfg.Modbus[dc.Bus]
	if !ok {
		return nil, fmt.Errorf("bus %q: no such line under modbus:", dc.Bus)
	}
	if b.lines == nil {
		b.lines = map[string]*modbusline.Line{}
	}
	l, ok := b.lines[dc.Bus]
	if !ok {
		l = modbusline.New(modbusline.Config{
			Name: "modbus." + dc.Bus, Open: func(ctx context.Context) (modbus.Transport, error) { return OpenModbus(ctx, lc) },
			Timeout: lc.RequestTimeout(), Retries: lc.RequestRetries(), Quiet: lc.QuietTime(),
		}, b.clk, b.log)
		b.lines[dc.Bus] = l
		b.lineOrder = append(b.lineOrder, l)
	}
	return l.Device(desc, dc.ModbusPoint()), nil
}

// startModbus starts the lines made, in the order of their first
// devices' ids, and stops them with the rest.
func (b *builder) startModbus() {
	for _, l := range b.lineOrder {
		l.Start()
		b.closers = append(b.closers, l.Close)
	}
}

// OpenModbus opens a line's link: a TCP connection, or the serial port
// as serial devices open theirs (exclusive, raw) with RTU framing on it.
// lc must have passed the configuration's checks.
func OpenModbus(ctx context.Context, lc board.ModbusLineConfig) (modbus.Transport, error) {
	if lc.IsTCP() {
		return modbus.DialTCP(ctx, lc.TCPAddr())
	}
	pc := lc.PortConfig()
	rwc, err := serialline.Open(ctx, pc)
	if err != nil {
		return nil, err
	}
	p, ok := rwc.(modbus.Port)
	if !ok {
		rwc.Close()
		return nil, fmt.Errorf("open %s: %T is not a serial port", pc.Path, rwc)
	}
	return modbus.NewRTU(p, lc.RTUConfig()), nil
}
