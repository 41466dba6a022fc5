package modbus_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/hw/modbus"
	"github.com/openhal/gateway/internal/hw/modbus/modbustest"
)

// newTCP returns a slave with units 1 and 0 (holding 0-1 = 111, 222) on
// a loopback port and a client connected to it.
func newTCP(t *testing.T) (*modbustest.Slave, *modbus.TCP, *modbus.Client) {
	t.Helper()
	s := modbustest.NewSlave()
	s.Unit(1).SetRegisters(modbus.HoldingRegisters, 0, 111, 222)
	s.Unit(1).SetBits(modbus.Coils, 0, false)
	s.Unit(0).SetRegisters(modbus.InputRegisters, 0, 5)
	tcp, err := modbus.DialTCP(timeout(t, 10*time.Second), s.ListenTCP(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tcp.Close() })
	return s, tcp, &modbus.Client{T: tcp}
}

// TestTCPFunctions reads and writes over Modbus TCP, unit 0 included.
func TestTCPFunctions(t *testing.T) {
	s, _, c := newTCP(t)
	ctx := timeout(t, 10*time.Second)
	if regs, err := c.ReadRegisters(ctx, 1, modbus.HoldingRegisters, 0, 2); err != nil || !slices.Equal(regs, []uint16{111, 222}) {
		t.Errorf("read holding = %v, %v", regs, err)
	}
	if regs, err := c.ReadRegisters(ctx, 0, modbus.InputRegisters, 0, 1); err != nil || regs[0] != 5 {
		t.Errorf("read input of unit 0 = %v, %v", regs, err)
	}
	if err := c.WriteCoil(ctx, 1, 0, true); err != nil {
		t.Fatal(err)
	}
	if bits, err := c.ReadBits(ctx, 1, modbus.Coils, 0, 1); err != nil || !bits[0] {
		t.Errorf("coil after write = %v, %v", bits, err)
	}
	if err := c.WriteRegisters(ctx, 1, 0, []uint16{7, 8}); err != nil {
		t.Fatal(err)
	}
	if regs, _ := s.Unit(1).Registers(modbus.HoldingRegisters, 0, 2); !slices.Equal(regs, []uint16{7, 8}) {
		t.Errorf("holding after write = %v", regs)
	}
	_, err := c.ReadRegisters(ctx, 1, modbus.HoldingRegisters, 9, 1)
	var exc *modbus.Exception
	if !errors.As(err, &exc) || exc.Code != modbus.IllegalDataAddress {
		t.Errorf("undefined address: %v", err)
	}
	_, err = c.ReadRegisters(ctx, 42, modbus.HoldingRegisters, 0, 1)
	if !errors.As(err, &exc) || err.Error() != "read holding 0+1 of unit 42: exception 11: gateway target device failed to respond" {
		t.Errorf("absent unit: %v", err)
	}
}

// TestTCPStaleTransaction cancels a request while the unit holds it,
// then asks again: the late reply to the first (its own values) must be
// dropped for the second's.
func TestTCPStaleTransaction(t *testing.T) {
	s, _, c := newTCP(t)
	release := s.Unit(1).Hold()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := c.ReadRegisters(ctx, 1, modbus.HoldingRegisters, 0, 1)
		done <- err
	}()
	if _, err := s.WaitRequests(timeout(t, 10*time.Second), 1); err != nil {
		t.Fatal(err)
	}
	cancelled := time.Now()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled request: %v", err)
	}
	if took := time.Since(cancelled); took > 20*time.Millisecond {
		t.Errorf("the cancel took %v", took)
	}
	release()
	regs, err := c.ReadRegisters(timeout(t, 10*time.Second), 1, modbus.HoldingRegisters, 1, 1)
	if err != nil || !slices.Equal(regs, []uint16{222}) {
		t.Errorf("the next request = %v, %v; want 222 (111 is the stale reply)", regs, err)
	}
}

// TestTCPTimeout checks a silent unit: ErrTimeout at the deadline, and
// the connection still good after.
func TestTCPTimeout(t *testing.T) {
	s, _, c := newTCP(t)
	s.Unit(1).SetSilent(true)
	_, err := c.ReadRegisters(timeout(t, 50*time.Millisecond), 1, modbus.HoldingRegisters, 0, 1)
	if !errors.Is(err, modbus.ErrTimeout) || err.Error() != "read holding 0+1 of unit 1: timeout: no answer" || modbus.IsLinkError(err) {
		t.Errorf("silent unit: %v", err)
	}
	s.Unit(1).SetSilent(false)
	if regs, err := c.ReadRegisters(timeout(t, 10*time.Second), 1, modbus.HoldingRegisters, 0, 1); err != nil || regs[0] != 111 {
		t.Errorf("after the timeout: %v, %v", regs, err)
	}
}

// TestTCPDropped checks that a connection the server closes is a link
// error, before a request and while one is awaited.
func TestTCPDropped(t *testing.T) {
	s, _, c := newTCP(t)
	release := s.Unit(1).Hold()
	defer release()
	done := make(chan error)
	go func() {
		_, err := c.ReadRegisters(context.Background(), 1, modbus.HoldingRegisters, 0, 1)
		done <- err
	}()
	if _, err := s.WaitRequests(timeout(t, 10*time.Second), 1); err != nil {
		t.Fatal(err)
	}
	s.DropConnections()
	if err := <-done; !modbus.IsLinkError(err) || !errors.Is(err, io.EOF) {
		t.Errorf("dropped while awaiting: %v, want a link error (EOF)", err)
	}
}

// rawServer accepts one connection and hands it to the test, which plays
// the server by hand.
func rawServer(t *testing.T) (addr string, conn <-chan net.Conn) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		l.Close()
		if err == nil {
			t.Cleanup(func() { c.Close() })
			ch <- c
		}
	}()
	return l.Addr().String(), ch
}

// readADU reads one request ADU.
func readADU(t *testing.T, c net.Conn) (tid uint16, unit byte, pdu []byte) {
	var head [7]byte
	if _, err := io.ReadFull(c, head[:]); err != nil {
		t.Errorf("read request: %v", err)
		return
	}
	pdu = make([]byte, binary.BigEndian.Uint16(head[4:])-1)
	if _, err := io.ReadFull(c, pdu); err != nil {
		t.Errorf("read request: %v", err)
	}
	return binary.BigEndian.Uint16(head[:]), head[6], pdu
}

func adu(tid uint16, unit byte, pdu ...byte) []byte {
	b := binary.BigEndian.AppendUint16(nil, tid)
	b = append(b, 0, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(1+len(pdu)))
	return append(append(b, unit), pdu...)
}

// TestTCPByHand plays replies the slave would not make: another unit, a
// reply cut at a timeout and finished later, a header that is not MBAP.
func TestTCPByHand(t *testing.T) {
	addr, conns := rawServer(t)
	tcp, err := modbus.DialTCP(timeout(t, 10*time.Second), addr)
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	srv := <-conns
	req := []byte{0x03, 0x00, 0x00, 0x00, 0x01}
	type result struct {
		pdu []byte
		err error
	}
	do := func(ctx context.Context) <-chan result {
		ch := make(chan result, 1)
		go func() {
			pdu, err := tcp.Do(ctx, 1, req)
			ch <- result{pdu, err}
		}()
		return ch
	}

	// Another unit answers.
	r := do(timeout(t, 10*time.Second))
	tid, unit, pdu := readADU(t, srv)
	if unit != 1 || !slices.Equal(pdu, req) {
		t.Fatalf("request: unit %d % x", unit, pdu)
	}
	srv.Write(adu(tid, 2, 0x03, 0x02, 0x00, 0x01))
	if res := <-r; !errors.Is(res.err, modbus.ErrBadReply) || res.err.Error() != "bad reply: unit 2 answered a request to unit 1" {
		t.Errorf("another unit: %v", res.err)
	}

	// Half a reply, the deadline, then the rest of it and the next reply.
	r = do(timeout(t, 50*time.Millisecond))
	tid, _, _ = readADU(t, srv)
	late := adu(tid, 1, 0x03, 0x02, 0x00, 0x01)
	srv.Write(late[:5])
	if res := <-r; !errors.Is(res.err, modbus.ErrTimeout) || res.err.Error() != "timeout: 5 bytes then silence: "+hex(late[:5]) {
		t.Errorf("half a reply: %v", res.err)
	}
	r = do(timeout(t, 10*time.Second))
	tid, _, _ = readADU(t, srv)
	srv.Write(append(late[5:], adu(tid, 1, 0x03, 0x02, 0x00, 0x02)...))
	if res := <-r; res.err != nil || !slices.Equal(res.pdu, []byte{0x03, 0x02, 0x00, 0x02}) {
		t.Errorf("after the late half: % x, %v", res.pdu, res.err)
	}

	// Not MBAP: the stream is lost, the transport says so from then on.
	r = do(timeout(t, 10*time.Second))
	readADU(t, srv)
	srv.Write([]byte{0x00, 0x09, 0x00, 0x05, 0x00, 0x03, 0x01, 0x03})
	res := <-r
	if !modbus.IsLinkError(res.err) || !strings.Contains(res.err.Error(), "lost the stream's framing: MBAP header 00 09 00 05 00 03 01 (protocol 5, length 3)") {
		t.Errorf("not MBAP: %v", res.err)
	}
	if _, err := tcp.Do(context.Background(), 1, req); err == nil || err.Error() != res.err.Error() {
		t.Errorf("after losing the stream: %v", err)
	}
}

func hex(b []byte) string { return fmt.Sprintf("% x", b) }

// TestDialTCPFails checks a refused connection.
func TestDialTCPFails(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = modbus.DialTCP(timeout(t, 10*time.Second), addr)
	if err == nil || !strings.HasPrefix(err.Error(), "connect "+addr+": ") || !modbus.IsLinkError(err) {
		t.Errorf("DialTCP to a closed port: %v", err)
	}
}
