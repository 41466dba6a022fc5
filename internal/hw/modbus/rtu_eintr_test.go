package modbus_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/hw/modbus"
	"github.com/openhal/gateway/internal/hw/modbus/modbustest"
)

// eintrPort is a port whose Drain is interrupted by a signal the first
// times, as tcdrain is by the Go runtime's preemption (SIGURG).
type eintrPort struct {
	*modbustest.Port
	interrupted int
}

func (p *eintrPort) Drain() error {
	if p.interrupted > 0 {
		p.interrupted--
		return syscall.EINTR
	}
	return p.Port.Drain()
}

// TestRTUDrainInterrupted: a drain interrupted by a signal is done again,
// not a failed link (e2e TestBinaryModbusStopHangs, under load, saw a
// stop's write fail as "drain: interrupted system call" and the whole
// line go offline).
func TestRTUDrainInterrupted(t *testing.T) {
	s := modbustest.NewSlave()
	s.Unit(1).SetRegisters(modbus.HoldingRegisters, 0, 42)
	p := &eintrPort{Port: s.RTUPort(t), interrupted: 2}
	rtu := modbus.NewRTU(p, modbus.RTUConfig{Baud: 115200})
	t.Cleanup(func() { rtu.Close() })
	c := &modbus.Client{T: rtu}
	regs, err := c.ReadRegisters(timeout(t, 10*time.Second), 1, modbus.HoldingRegisters, 0, 1)
	if err != nil || len(regs) != 1 || regs[0] != 42 {
		t.Fatalf("read after two interrupted drains = %v, %v; want [42]", regs, err)
	}
}
