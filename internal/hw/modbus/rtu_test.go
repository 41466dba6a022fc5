package modbus_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/hw/modbus"
	"github.com/openhal/gateway/internal/hw/modbus/modbustest"
)

// newRTU returns a slave with unit 1 (holding 100-101 = 0x4120 0x0000,
// input 0 = 7, coils 0-3, discrete 0-1) and an RTU client on its line.
func newRTU(t *testing.T) (*modbustest.Slave, *modbustest.Port, *modbus.Client) {
	t.Helper()
	s := modbustest.NewSlave()
	u := s.Unit(1)
	u.SetRegisters(modbus.HoldingRegisters, 100, 0x4120, 0x0000)
	u.SetRegisters(modbus.InputRegisters, 0, 7)
	u.SetBits(modbus.Coils, 0, false, true, false, false)
	u.SetBits(modbus.DiscreteInputs, 0, true, false)
	p := s.RTUPort(t)
	rtu := modbus.NewRTU(p, modbus.RTUConfig{Baud: 115200})
	t.Cleanup(func() { rtu.Close() })
	return s, p, &modbus.Client{T: rtu}
}

func timeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// TestRTUFunctions reads every table and writes coils and registers,
// reading the writes back from the slave.
func TestRTUFunctions(t *testing.T) {
	s, _, c := newRTU(t)
	ctx := timeout(t, 10*time.Second)
	regs, err := c.ReadRegisters(ctx, 1, modbus.HoldingRegisters, 100, 2)
	if err != nil || !slices.Equal(regs, []uint16{0x4120, 0}) {
		t.Fatalf("read holding = %04x, %v", regs, err)
	}
	if v, _ := modbus.Decode(modbus.Float32, modbus.SwapNone, regs); v != 10 {
		t.Errorf("float32 = %v, want 10", v)
	}
	if regs, err := c.ReadRegisters(ctx, 1, modbus.InputRegisters, 0, 1); err != nil || regs[0] != 7 {
		t.Errorf("read input = %v, %v", regs, err)
	}
	if bits, err := c.ReadBits(ctx, 1, modbus.Coils, 0, 4); err != nil || !slices.Equal(bits, []bool{false, true, false, false}) {
		t.Errorf("read coils = %v, %v", bits, err)
	}
	if bits, err := c.ReadBits(ctx, 1, modbus.DiscreteInputs, 0, 2); err != nil || !slices.Equal(bits, []bool{true, false}) {
		t.Errorf("read discrete = %v, %v", bits, err)
	}
	u := s.Unit(1)
	if err := c.WriteCoil(ctx, 1, 0, true); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteCoils(ctx, 1, 1, []bool{false, true, true}); err != nil {
		t.Fatal(err)
	}
	if bits, _ := u.Bits(modbus.Coils, 0, 4); !slices.Equal(bits, []bool{true, false, true, true}) {
		t.Errorf("coils after writes = %v", bits)
	}
	if err := c.WriteRegister(ctx, 1, 101, 0xBEEF); err != nil {
		t.Fatal(err)
	}
	if regs, _ := u.Registers(modbus.HoldingRegisters, 100, 2); !slices.Equal(regs, []uint16{0x4120, 0xBEEF}) {
		t.Errorf("holding after write = %04x", regs)
	}
	if err := c.WriteRegisters(ctx, 1, 100, []uint16{1, 2}); err != nil {
		t.Fatal(err)
	}
	if regs, _ := u.Registers(modbus.HoldingRegisters, 100, 2); !slices.Equal(regs, []uint16{1, 2}) {
		t.Errorf("holding after writes = %04x", regs)
	}
	got := s.Requests()
	if len(got) != 8 || got[0].Function != 3 || got[0].Addr != 100 || got[0].Count != 2 || got[7].Function != 16 {
		t.Errorf("the slave's log: %+v", got)
	}
}

// TestRTUExceptions checks that exceptions come back as *Exception, named.
func TestRTUExceptions(t *testing.T) {
	s, _, c := newRTU(t)
	ctx := timeout(t, 10*time.Second)
	_, err := c.ReadRegisters(ctx, 1, modbus.HoldingRegisters, 200, 2)
	var exc *modbus.Exception
	if !errors.As(err, &exc) || exc.Code != 2 || exc.Function != 3 ||
		err.Error() != "read holding 200+2 of unit 1: exception 2: illegal data address" {
		t.Errorf("undefined address: %v", err)
	}
	s.Unit(1).SetException(modbus.SlaveDeviceBusy)
	err = c.WriteCoil(ctx, 1, 0, true)
	if !errors.As(err, &exc) || exc.Code != 6 || err.Error() != "write coil 0 of unit 1: exception 6: slave device busy" {
		t.Errorf("busy: %v", err)
	}
	if modbus.IsLinkError(err) {
		t.Error("an exception is a link error")
	}
}

// TestRTUNoise checks that noise before the reply is skipped, including
// bytes that look like the start of the reply.
func TestRTUNoise(t *testing.T) {
	for _, noise := range [][]byte{
		{0x00},
		{0xFF, 0xFE, 0x00, 0x13},
		{0x01, 0x03, 0xF0, 0x55}, // our unit and function, a long byte count
		{0x01, 0x83},             // our unit, an exception's function, then the reply
		{0x01, 0x01, 0x01, 0x01}, // our unit, over and over
		make([]byte, 600),        // more than a frame
		{0x01, 0x03, 0x04, 0x41}, // the start of a frame cut short
	} {
		s, _, c := newRTU(t)
		s.Unit(1).SetNoise(noise)
		regs, err := c.ReadRegisters(timeout(t, 10*time.Second), 1, modbus.HoldingRegisters, 100, 2)
		if err != nil || !slices.Equal(regs, []uint16{0x4120, 0}) {
			t.Errorf("noise % x: %04x, %v", noise[:min(len(noise), 8)], regs, err)
		}
	}
}

// TestRTUDropsBytesBetweenFrames checks that what came in since the last
// reply (here a whole stale reply with other values) is dropped before a
// request is sent, not taken for its reply.
func TestRTUDropsBytesBetweenFrames(t *testing.T) {
	_, p, c := newRTU(t)
	p.Inject(modbus.AppendCRC([]byte{0x01, 0x03, 0x04, 0xDE, 0xAD, 0xBE, 0xEF}))
	regs, err := c.ReadRegisters(timeout(t, 10*time.Second), 1, modbus.HoldingRegisters, 100, 2)
	if err != nil || !slices.Equal(regs, []uint16{0x4120, 0}) {
		t.Errorf("read = %04x, %v; want the slave's 4120 0000", regs, err)
	}
}

// TestRTUFailures checks a silent unit, a bad CRC, an absent unit and a
// reply cut short: each an error of its kind after the deadline, naming
// what was seen.
func TestRTUFailures(t *testing.T) {
	tests := []struct {
		name  string
		setup func(s *modbustest.Slave)
		unit  byte
		want  error
		msg   string
	}{
		{"silent", func(s *modbustest.Slave) { s.Unit(1).SetSilent(true) }, 1, modbus.ErrTimeout,
			"read holding 100+2 of unit 1: timeout: no answer"},
		{"absent", func(s *modbustest.Slave) {}, 9, modbus.ErrTimeout,
			"read holding 100+2 of unit 9: timeout: no answer"},
		{"bad CRC", func(s *modbustest.Slave) { s.Unit(1).SetBadCRC(true) }, 1, modbus.ErrCRC,
			"read holding 100+2 of unit 1: bad CRC: 01 03 04 41 20 00 00 ef 3a (want ef c5)"},
		{"noise only", func(s *modbustest.Slave) {
			s.Unit(1).SetHandler(func([]byte) []byte { return []byte{0x55} })
		}, 1, modbus.ErrTimeout, "read holding 100+2 of unit 1: timeout: 4 bytes then silence: 01 55 c0 1f"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, c := newRTU(t)
			tt.setup(s)
			_, err := c.ReadRegisters(timeout(t, 50*time.Millisecond), tt.unit, modbus.HoldingRegisters, 100, 2)
			if !errors.Is(err, tt.want) || err.Error() != tt.msg {
				t.Errorf("err = %v, want %q", err, tt.msg)
			}
			if modbus.IsLinkError(err) {
				t.Error("IsLinkError = true")
			}
		})
	}
}

// TestRTUCutShort plays the unit by hand: three bytes of the reply, then
// nothing.
func TestRTUCutShort(t *testing.T) {
	p, line := modbustest.NewPort()
	rtu := modbus.NewRTU(p, modbus.RTUConfig{})
	defer rtu.Close()
	go func() {
		req := make([]byte, 8)
		if _, err := io.ReadFull(line, req); err == nil {
			line.Write([]byte{0x01, 0x03, 0x04})
		}
	}()
	_, err := rtu.Do(timeout(t, 50*time.Millisecond), 1, []byte{0x03, 0x00, 0x00, 0x00, 0x02})
	if !errors.Is(err, modbus.ErrTimeout) || err.Error() != "timeout: 3 bytes then silence: 01 03 04" {
		t.Errorf("err = %v", err)
	}
}

// TestRTUStrayReply plays a line where unit 1 is silent and unit 2's
// late reply to an earlier request comes instead: unit 1's timeout says
// it did not answer, and what was heard.
func TestRTUStrayReply(t *testing.T) {
	late := modbus.AppendCRC([]byte{0x02, 0x03, 0x02, 0x01, 0x90})
	tests := []struct {
		name  string
		heard []byte
		want  string
	}{
		{"the late reply alone", late, "timeout: no answer; heard unit 2's reply instead: 02 03 02 01 90 fd b8"},
		{"with noise", append([]byte{0x00}, late...), "timeout: no answer; heard 8 bytes, unit 2's reply among them: 00 02 03 02 01 90 fd b8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, line := modbustest.NewPort()
			rtu := modbus.NewRTU(p, modbus.RTUConfig{})
			defer rtu.Close()
			go func() {
				req := make([]byte, 8)
				if _, err := io.ReadFull(line, req); err == nil {
					line.Write(tt.heard)
				}
			}()
			_, err := rtu.Do(timeout(t, 50*time.Millisecond), 1, []byte{0x03, 0x00, 0x00, 0x00, 0x01})
			if !errors.Is(err, modbus.ErrTimeout) || err.Error() != tt.want {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestRTURefuses checks requests refused without a byte sent.
func TestRTURefuses(t *testing.T) {
	s, p, _ := newRTU(t)
	rtu := modbus.NewRTU(p, modbus.RTUConfig{})
	tests := []struct {
		unit byte
		pdu  []byte
		msg  string
	}{
		{0, []byte{0x06, 0, 1, 0, 1}, "bad request: unit 0 is a broadcast, which no unit answers; RTU requests go to units 1 to 247"},
		{248, []byte{0x03, 0, 1, 0, 1}, "bad request: unit 248 is reserved on a serial line; RTU requests go to units 1 to 247"},
		{1, []byte{0x2B, 0x0E, 0x01, 0x00}, "bad request: function 0x2b: its reply's length is unknown to RTU framing"},
		{1, nil, "bad request: empty PDU"},
		{1, make([]byte, 254), "bad request: PDU of 254 bytes, at most 253"},
		{1, []byte{0x83, 0, 0}, "bad request: function code 0x83"},
	}
	for _, tt := range tests {
		_, err := rtu.Do(context.Background(), tt.unit, tt.pdu)
		if !errors.Is(err, modbus.ErrRequest) || err.Error() != tt.msg || modbus.IsLinkError(err) {
			t.Errorf("Do(%d, % x) = %v, want %q", tt.unit, tt.pdu[:min(len(tt.pdu), 4)], err, tt.msg)
		}
	}
	if got := s.Requests(); len(got) != 0 {
		t.Errorf("the slave received %+v", got)
	}
}

// TestRTUCancel checks that a cancel ends the wait for a reply within
// 20 ms, with and without a deadline.
func TestRTUCancel(t *testing.T) {
	for _, deadline := range []bool{false, true} {
		s, _, c := newRTU(t)
		release := s.Unit(1).Hold()
		defer release()
		ctx, cancel := context.WithCancel(context.Background())
		if deadline {
			ctx, cancel = context.WithTimeout(context.Background(), time.Hour)
		}
		done := make(chan error)
		var cancelled time.Time
		go func() {
			_, err := c.ReadRegisters(ctx, 1, modbus.HoldingRegisters, 100, 2)
			done <- err
		}()
		if _, err := s.WaitRequests(timeout(t, 10*time.Second), 1); err != nil {
			t.Fatal(err)
		}
		cancelled = time.Now()
		cancel()
		err := <-done
		if took := time.Since(cancelled); took > 20*time.Millisecond {
			t.Errorf("deadline %v: the cancel took %v", deadline, took)
		}
		if !errors.Is(err, context.Canceled) || modbus.IsLinkError(err) || errors.Is(err, modbus.ErrTimeout) {
			t.Errorf("deadline %v: err = %v, want context.Canceled", deadline, err)
		}
	}
}

// TestRTULinkErrors checks that a port unplugged or closed, even while
// a reply is awaited, is a link error.
func TestRTULinkErrors(t *testing.T) {
	_, p, c := newRTU(t)
	p.Unplug()
	_, err := c.ReadRegisters(timeout(t, 10*time.Second), 1, modbus.HoldingRegisters, 100, 2)
	if !modbus.IsLinkError(err) || !errors.Is(err, syscall.EIO) {
		t.Errorf("unplugged: %v, want a link error with EIO", err)
	}

	s, _, c := newRTU(t)
	release := s.Unit(1).Hold()
	defer release()
	done := make(chan error)
	go func() {
		_, err := c.ReadRegisters(context.Background(), 1, modbus.HoldingRegisters, 100, 2)
		done <- err
	}()
	if _, err := s.WaitRequests(timeout(t, 10*time.Second), 1); err != nil {
		t.Fatal(err)
	}
	c.T.Close()
	if err := <-done; !modbus.IsLinkError(err) || !strings.Contains(err.Error(), "port closed") {
		t.Errorf("closed while awaiting: %v, want a link error", err)
	}
}

// recorder is a Port that records the calls RTU makes, for the order of
// DE, write and drain, and when each write went.
type recorder struct {
	modbus.Port
	mu     sync.Mutex
	calls  []string
	writes []time.Time
	reads  []time.Time // reads that returned bytes
}

func (r *recorder) note(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, s)
}

func (r *recorder) SetRTS(on bool) error {
	if on {
		r.note("rts on")
	} else {
		r.note("rts off")
	}
	return r.Port.SetRTS(on)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.note("write")
	r.mu.Lock()
	r.writes = append(r.writes, time.Now())
	r.mu.Unlock()
	return r.Port.Write(b)
}

func (r *recorder) Read(b []byte) (int, error) {
	n, err := r.Port.Read(b)
	if n > 0 {
		r.mu.Lock()
		r.reads = append(r.reads, time.Now())
		r.mu.Unlock()
	}
	return n, err
}

func (r *recorder) Drain() error            { r.note("drain"); return r.Port.Drain() }
func (r *recorder) ResetInputBuffer() error { r.note("reset"); return r.Port.ResetInputBuffer() }

// TestRTUDE checks that the driver is enabled around the write and the
// drain, and released after, at the level DE says.
func TestRTUDE(t *testing.T) {
	tests := []struct {
		de   modbus.DE
		want []string
	}{
		{modbus.DENone, []string{"reset", "write", "drain"}},
		{modbus.DERTS, []string{"reset", "rts on", "write", "drain", "rts off"}},
		{modbus.DERTSLow, []string{"reset", "rts off", "write", "drain", "rts on"}},
	}
	for _, tt := range tests {
		s := modbustest.NewSlave()
		s.Unit(1).SetRegisters(modbus.HoldingRegisters, 0, 5)
		r := &recorder{Port: s.RTUPort(t)}
		c := modbus.Client{T: modbus.NewRTU(r, modbus.RTUConfig{DE: tt.de})}
		if _, err := c.ReadRegisters(timeout(t, 10*time.Second), 1, modbus.HoldingRegisters, 0, 1); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(r.calls, tt.want) {
			t.Errorf("DE %s: calls %q, want %q", tt.de, r.calls, tt.want)
		}
	}
}

// TestRTUFrameGap checks that a request waits the frame gap after the
// last byte of the reply before it.
func TestRTUFrameGap(t *testing.T) {
	const gap = 30 * time.Millisecond
	s := modbustest.NewSlave()
	s.Unit(1).SetRegisters(modbus.HoldingRegisters, 0, 5)
	r := &recorder{Port: s.RTUPort(t)}
	c := modbus.Client{T: modbus.NewRTU(r, modbus.RTUConfig{FrameGap: gap})}
	for range 3 {
		if _, err := c.ReadRegisters(timeout(t, 10*time.Second), 1, modbus.HoldingRegisters, 0, 1); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i < len(r.writes); i++ {
		var last time.Time
		for _, rd := range r.reads {
			if rd.Before(r.writes[i]) {
				last = rd
			}
		}
		if quiet := r.writes[i].Sub(last); quiet < gap {
			t.Errorf("request %d: written %v after the last byte received, want at least %v", i, quiet, gap)
		}
	}
}
