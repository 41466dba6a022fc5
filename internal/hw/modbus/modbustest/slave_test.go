package modbustest_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/hw/modbus"
	"github.com/openhal/gateway/internal/hw/modbus/modbustest"
)

func timeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// exchange sends one RTU request PDU to unit on a hand-driven port and
// returns the reply frame, or nil when none came within wait.
func exchange(t *testing.T, p *modbustest.Port, unit byte, pdu []byte, wait time.Duration) []byte {
	t.Helper()
	p.ResetInputBuffer()
	if _, err := p.Write(modbus.AppendCRC(append([]byte{unit}, pdu...))); err != nil {
		t.Fatal(err)
	}
	p.SetReadTimeout(wait)
	buf := make([]byte, 300)
	n, err := p.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		return nil
	}
	return buf[:n]
}

// TestSlaveAnswers checks the slave's answers on RTU, frame by frame.
func TestSlaveAnswers(t *testing.T) {
	s := modbustest.NewSlave()
	u := s.Unit(1)
	u.SetRegisters(modbus.HoldingRegisters, 10, 1, 2)
	u.SetBits(modbus.Coils, 0, true, false, true)
	p := s.RTUPort(t)
	f := func(b ...byte) []byte { return modbus.AppendCRC(b) }
	tests := []struct {
		name       string
		unit       byte
		pdu, reply []byte
	}{
		{"read holding", 1, []byte{3, 0, 10, 0, 2}, f(1, 3, 4, 0, 1, 0, 2)},
		{"read coils", 1, []byte{1, 0, 0, 0, 3}, f(1, 1, 1, 0x05)},
		{"undefined address", 1, []byte{3, 0, 11, 0, 2}, f(1, 0x83, 2)},
		{"read too many", 1, []byte{3, 0, 0, 0, 126}, f(1, 0x83, 3)},
		{"read none", 1, []byte{4, 0, 0, 0, 0}, f(1, 0x84, 3)},
		{"unknown function", 1, []byte{0x2B, 0x0E, 1, 0}, f(1, 0xAB, 1)},
		{"write coil: bad value", 1, []byte{5, 0, 0, 0x12, 0x34}, f(1, 0x85, 3)},
		{"write coil off", 1, []byte{5, 0, 0, 0, 0}, f(1, 5, 0, 0, 0, 0)},
		{"write undefined register", 1, []byte{6, 0, 0, 0, 1}, f(1, 0x86, 2)},
		{"write registers: byte count wrong", 1, []byte{16, 0, 10, 0, 2, 3, 0, 1, 0}, f(1, 0x90, 3)},
		{"write registers", 1, []byte{16, 0, 10, 0, 2, 4, 0, 7, 0, 8}, f(1, 16, 0, 10, 0, 2)},
		{"write coils", 1, []byte{15, 0, 0, 0, 3, 1, 0x02}, f(1, 15, 0, 0, 0, 3)},
		{"absent unit", 2, []byte{3, 0, 10, 0, 1}, nil},
		{"broadcast", 0, []byte{6, 0, 10, 0, 9}, nil},
	}
	for _, tt := range tests {
		wait := time.Second
		if tt.reply == nil {
			wait = 20 * time.Millisecond
		}
		if got := exchange(t, p, tt.unit, tt.pdu, wait); !slices.Equal(got, tt.reply) {
			t.Errorf("%s: % x, want % x", tt.name, got, tt.reply)
		}
	}
	if regs, _ := u.Registers(modbus.HoldingRegisters, 10, 2); !slices.Equal(regs, []uint16{7, 8}) {
		t.Errorf("registers after writes: %v (the broadcast must not write)", regs)
	}
	if bits, _ := u.Bits(modbus.Coils, 0, 3); !slices.Equal(bits, []bool{false, true, false}) {
		t.Errorf("coils after writes: %v", bits)
	}
	if _, ok := u.Registers(modbus.HoldingRegisters, 9, 2); ok {
		t.Error("Registers of an undefined address: ok")
	}
	if got := s.Requests(); len(got) != len(tests) || got[0].Unit != 1 || got[0].Function != 3 || got[0].Addr != 10 || got[0].Count != 2 ||
		!slices.Equal(got[0].PDU, tests[0].pdu) {
		t.Errorf("log: %+v", got)
	}
}

// TestSlaveKnobs checks noise, a bad CRC, a handler, an exception and a
// hold.
func TestSlaveKnobs(t *testing.T) {
	s := modbustest.NewSlave()
	u := s.Unit(1)
	u.SetRegisters(modbus.InputRegisters, 0, 5)
	p := s.RTUPort(t)
	read := []byte{4, 0, 0, 0, 1}
	good := modbus.AppendCRC([]byte{1, 4, 2, 0, 5})

	u.SetNoise([]byte{0xAA, 0xBB})
	if got := exchange(t, p, 1, read, time.Second); !slices.Equal(got, append([]byte{0xAA, 0xBB}, good...)) {
		t.Errorf("noise: % x", got)
	}
	u.SetNoise(nil)
	u.SetBadCRC(true)
	if got := exchange(t, p, 1, read, time.Second); len(got) != len(good) || slices.Equal(got, good) || modbus.CRC(got) == 0 {
		t.Errorf("bad CRC: % x", got)
	}
	u.SetBadCRC(false)
	u.SetException(modbus.SlaveDeviceBusy)
	if got := exchange(t, p, 1, read, time.Second); !slices.Equal(got, modbus.AppendCRC([]byte{1, 0x84, 6})) {
		t.Errorf("exception: % x", got)
	}
	u.SetException(0)
	u.SetHandler(func(req []byte) []byte { return []byte{req[0], 2, 0xAB, 0xCD} })
	if got := exchange(t, p, 1, read, time.Second); !slices.Equal(got, modbus.AppendCRC([]byte{1, 4, 2, 0xAB, 0xCD})) {
		t.Errorf("handler: % x", got)
	}
	u.SetHandler(nil)

	release := u.Hold()
	if got := exchange(t, p, 1, read, 20*time.Millisecond); got != nil {
		t.Errorf("held, yet answered: % x", got)
	}
	release()
	release() // twice is harmless
	p.SetReadTimeout(10 * time.Second)
	buf := make([]byte, 16)
	if n, err := p.Read(buf); err != nil || !slices.Equal(buf[:n], good) {
		t.Errorf("released: % x, %v", buf[:n], err)
	}
}

// TestSlaveWaitRequests checks that WaitRequests waits for the count and
// gives up with its context.
func TestSlaveWaitRequests(t *testing.T) {
	s := modbustest.NewSlave()
	s.Unit(1).SetRegisters(modbus.HoldingRegisters, 0, 1)
	p := s.RTUPort(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.WaitRequests(ctx, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitRequests with nothing received: %v", err)
	}
	go p.Write(modbus.AppendCRC([]byte{1, 3, 0, 0, 0, 1}))
	got, err := s.WaitRequests(timeout(t, 10*time.Second), 1)
	if err != nil || len(got) != 1 || got[0].Function != 3 {
		t.Errorf("WaitRequests = %+v, %v", got, err)
	}
}

// TestSlaveClose checks that Close releases a held request and that the
// RTU serving ends when its port closes.
func TestSlaveClose(t *testing.T) {
	s := modbustest.NewSlave()
	s.Unit(1).SetRegisters(modbus.HoldingRegisters, 0, 1)
	s.Unit(1).Hold()
	p, line := modbustest.NewPort()
	done := make(chan error)
	go func() { done <- s.Serve(line) }()
	p.Write(modbus.AppendCRC([]byte{1, 3, 0, 0, 0, 1}))
	if _, err := s.WaitRequests(timeout(t, 10*time.Second), 1); err != nil {
		t.Fatal(err)
	}
	s.Close()
	p.Close()
	if err := <-done; err != nil {
		t.Errorf("Serve = %v, want nil", err)
	}
}

// TestPort checks the in-memory port's reads: a timeout returns 0, nil;
// ResetInputBuffer drops; Close and Unplug fail reads.
func TestPort(t *testing.T) {
	p, line := modbustest.NewPort()
	p.SetReadTimeout(time.Millisecond)
	buf := make([]byte, 8)
	if n, err := p.Read(buf); n != 0 || err != nil {
		t.Errorf("read of nothing: %d, %v", n, err)
	}
	line.Write([]byte{1, 2, 3})
	p.ResetInputBuffer()
	if n, err := p.Read(buf); n != 0 || err != nil {
		t.Errorf("read after reset: %d, %v", n, err)
	}
	p.Inject([]byte{4})
	if n, err := p.Read(buf); n != 1 || buf[0] != 4 || err != nil {
		t.Errorf("read of injected: %d % x, %v", n, buf[:n], err)
	}
	p.Write([]byte{9})
	if n, err := line.Read(buf); n != 1 || buf[0] != 9 || err != nil {
		t.Errorf("line read: %d, %v", n, err)
	}
	line.Close()
	if _, err := p.Read(buf); !errors.Is(err, modbustest.ErrPortClosed) {
		t.Errorf("read after the line closed: %v", err)
	}
	if _, err := line.Read(buf); !errors.Is(err, io.EOF) {
		t.Errorf("line read after close: %v", err)
	}
	p2, _ := modbustest.NewPort()
	p2.Unplug()
	if _, err := p2.Write([]byte{1}); err == nil || modbus.IsLinkError(err) == false {
		t.Errorf("write after unplug: %v", err)
	}
}
