package modbus_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"go.bug.st/serial"

	"github.com/openhal/gateway/internal/hw/modbus"
	"github.com/openhal/gateway/internal/hw/modbus/modbustest"
	"github.com/openhal/gateway/internal/ptytest"
)

// openPTY returns a pseudo-terminal's master and its slave's path; the
// code under test opens the slave like a serial port.
func openPTY(t *testing.T) (*os.File, string) { return ptytest.OpenT(t) }

// TestRTUOnPTY runs the RTU transport, opened with go.bug.st/serial, on
// a real pseudo-terminal with the slave on its master side: reads,
// writes, noise between frames, a silent unit, a cancel, a hang-up.
func TestRTUOnPTY(t *testing.T) {
	master, path := openPTY(t)
	s := modbustest.NewSlave()
	t.Cleanup(s.Close)
	s.Unit(1).SetRegisters(modbus.HoldingRegisters, 0, 0x42F6, 0xE979)
	s.Unit(1).SetBits(modbus.Coils, 0, false)
	mode := &serial.Mode{BaudRate: 19200, DataBits: 8, Parity: serial.NoParity, StopBits: serial.OneStopBit}
	rtu, err := modbus.OpenRTU(context.Background(), path, mode, modbus.RTUConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer rtu.Close()
	served := make(chan struct{})
	go func() {
		defer close(served)
		s.Serve(master) // ends with EIO when the slave side hangs up
	}()
	c := &modbus.Client{T: rtu}

	regs, err := c.ReadRegisters(timeout(t, 10*time.Second), 1, modbus.HoldingRegisters, 0, 2)
	if v, _ := modbus.Decode(modbus.Float32, modbus.SwapNone, regs); err != nil || float32(v) != 123.456 {
		t.Fatalf("read = %04x (%v), %v", regs, v, err)
	}
	if err := c.WriteCoil(timeout(t, 10*time.Second), 1, 0, true); err != nil {
		t.Fatal(err)
	}
	if bits, _ := s.Unit(1).Bits(modbus.Coils, 0, 1); !bits[0] {
		t.Error("the coil was not written")
	}

	master.Write([]byte{0x01, 0x03, 0x04, 0xDE, 0xAD}) // noise between frames
	s.Unit(1).SetNoise([]byte{0x00, 0xFF})             // and before the reply
	if regs, err := c.ReadRegisters(timeout(t, 10*time.Second), 1, modbus.HoldingRegisters, 0, 2); err != nil || !slices.Equal(regs, []uint16{0x42F6, 0xE979}) {
		t.Errorf("read among noise = %04x, %v", regs, err)
	}

	s.Unit(1).SetSilent(true)
	if _, err := c.ReadRegisters(timeout(t, 50*time.Millisecond), 1, modbus.HoldingRegisters, 0, 2); !errors.Is(err, modbus.ErrTimeout) {
		t.Errorf("silent unit: %v", err)
	}
	s.Unit(1).SetSilent(false)

	release := s.Unit(1).Hold()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := c.ReadRegisters(ctx, 1, modbus.HoldingRegisters, 0, 2)
		done <- err
	}()
	if _, err := s.WaitRequests(timeout(t, 10*time.Second), 5); err != nil {
		t.Fatal(err)
	}
	cancelled := time.Now()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if took := time.Since(cancelled); took > 20*time.Millisecond {
		t.Errorf("the cancel took %v", took)
	}
	release()

	master.Close() // the adapter goes away
	_, err = c.ReadRegisters(timeout(t, 10*time.Second), 1, modbus.HoldingRegisters, 0, 2)
	if !modbus.IsLinkError(err) {
		t.Errorf("after the hang-up: %v, want a link error", err)
	}
	<-served
}

// TestOpenRTUFails checks the errors of OpenRTU: a missing port, and a
// DE by RTS on a terminal without modem lines.
func TestOpenRTUFails(t *testing.T) {
	mode := &serial.Mode{BaudRate: 9600}
	_, err := modbus.OpenRTU(context.Background(), "/dev/nonexistent-modbus", mode, modbus.RTUConfig{})
	if err == nil || !strings.HasPrefix(err.Error(), "open /dev/nonexistent-modbus: ") || !modbus.IsLinkError(err) {
		t.Errorf("missing port: %v", err)
	}
	_, err = modbus.OpenRTU(context.Background(), "/dev/null", mode, modbus.RTUConfig{FrameGap: -1})
	if err == nil || err.Error() != "open /dev/null: frame gap -1ns: negative" {
		t.Errorf("bad config: %v", err)
	}
	_, path := openPTY(t)
	rtu, err := modbus.OpenRTU(context.Background(), path, mode, modbus.RTUConfig{DE: modbus.DERTS})
	if err == nil {
		// Some kernels may grant modem lines on a pty; then RTS works.
		rtu.Close()
		t.Skip("this kernel sets RTS on a pseudo-terminal")
	}
	if !strings.HasPrefix(err.Error(), "open "+path+": set RTS for DE (rts): ") {
		t.Errorf("DE on a pty: %v", err)
	}
}
