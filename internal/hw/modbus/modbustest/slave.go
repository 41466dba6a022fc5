// Package modbustest is a Modbus slave in memory, for tests: units with
// their four tables, served over RTU framing (on any byte stream, and on
// an in-memory serial Port) and over Modbus TCP, with knobs to make a
// unit fail the ways real ones do: silent, an exception, slow, held
// until released, a bad CRC, noise before the reply, a reply of the
// test's own making.
//
//	s := modbustest.NewSlave()
//	s.Unit(1).SetRegisters(modbus.HoldingRegisters, 100, 0x4120, 0x0000)
//	rtu := modbus.NewRTU(s.RTUPort(t), modbus.RTUConfig{Baud: 19200})
//	addr := s.ListenTCP(t) // or over TCP
//
// It answers functions 1-6, 15 and 16 (others: exception 1). Reading or
// writing an address not set first gives exception 2. A unit never
// named with Unit is absent: silent on RTU, exception 0x0B (gateway
// target device failed to respond) on TCP, as a TCP gateway answers.
// Unit 0 is a broadcast on RTU, not answered (nor carried out); on TCP
// it is a unit like the others.
package modbustest

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/hw/modbus"
)

// Request is a request a slave received, as its log keeps it.
type Request struct {
	Unit     byte
	Function byte
	Addr     uint16 // the first address (functions 1-6, 15, 16)
	Count    uint16 // how many bits or registers: 1 for functions 5 and 6
	PDU      []byte // the request as received, function code first
}

// Slave is a set of units behind one line or server. Its methods are
// safe for concurrent use.
type Slave struct {
	mu     sync.Mutex
	units  map[byte]*Unit
	log    []Request
	logged chan struct{} // closed and replaced at each request logged
	quit   chan struct{} // closed by Close
	closed bool
	conns  map[net.Conn]struct{} // TCP connections being served
}

// NewSlave returns a slave with no units.
func NewSlave() *Slave {
	return &Slave{units: map[byte]*Unit{}, logged: make(chan struct{}), quit: make(chan struct{}), conns: map[net.Conn]struct{}{}}
}

// Close releases every request held or delayed, and closes the TCP
// connections being served. The slave answers no more: Serve and
// ServeTCP return as their next read fails.
func (s *Slave) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.quit)
		for c := range s.conns {
			c.Close()
		}
	}
}

// Unit returns unit id, present from now on (with empty tables) if it
// was not.
func (s *Slave) Unit(id byte) *Unit {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.units[id]
	if !ok {
		u = &Unit{s: s, id: id}
		for t := range u.tables {
			u.tables[t] = map[uint16]uint16{}
		}
		s.units[id] = u
	}
	return u
}

// Requests returns the requests received so far, to any unit, present
// or not, in order.
func (s *Slave) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

// WaitRequests waits until at least n requests have been received and
// returns them all, or ctx's error.
func (s *Slave) WaitRequests(ctx context.Context, n int) ([]Request, error) {
	for {
		s.mu.Lock()
		log, logged := s.log, s.logged
		s.mu.Unlock()
		if len(log) >= n {
			return append([]Request(nil), log...), nil
		}
		select {
		case <-logged:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// DropConnections closes the TCP connections being served, as a server
// restarting would; the listener stays.
func (s *Slave) DropConnections() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.Close()
	}
}

// answer runs one request to unit and returns the reply PDU, and whether
// to send it. It logs the request, waits while the unit is held or
// delayed (or until stop or Close), then applies the unit's knobs. On
// RTU unit 0 is a broadcast and an absent unit is silent; on TCP unit 0
// is a unit like the others and an absent unit gets exception 0x0B.
func (s *Slave) answer(unit byte, pdu []byte, rtu bool, stop <-chan struct{}) (reply []byte, send bool) {
	s.mu.Lock()
	s.logRequest(unit, pdu)
	u := s.units[unit]
	var hold chan struct{}
	var delay time.Duration
	if u != nil {
		hold, delay = u.hold, u.delay
	}
	s.mu.Unlock()
	switch {
	case rtu && (u == nil || unit == 0):
		return nil, false
	case u == nil:
		return []byte{pdu[0] | 0x80, modbus.GatewayTargetDeviceFailedToRespond}, true
	}
	if !s.wait(hold, delay, stop) {
		return nil, false
	}
	return u.answer(pdu)
}

// logRequest appends to the log; s.mu is held.
func (s *Slave) logRequest(unit byte, pdu []byte) {
	r := Request{Unit: unit, Function: pdu[0], PDU: append([]byte(nil), pdu...)}
	if len(pdu) >= 5 {
		r.Addr = binary.BigEndian.Uint16(pdu[1:])
		r.Count = binary.BigEndian.Uint16(pdu[3:])
	}
	if r.Function == 5 || r.Function == 6 {
		r.Count = 1
	}
	s.log = append(s.log, r)
	close(s.logged)
	s.logged = make(chan struct{})
}

// wait waits for hold to be released (nil: not held), then for delay;
// false if stop or Close came first.
func (s *Slave) wait(hold chan struct{}, delay time.Duration, stop <-chan struct{}) bool {
	if hold != nil {
		select {
		case <-hold:
		case <-stop:
			return false
		case <-s.quit:
			return false
		}
	}
	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-stop:
			return false
		case <-s.quit:
			return false
		}
	}
	return true
}

// Serve answers the RTU requests that come on conn, until a read of
// conn fails; it returns nil for io.EOF or a closed pipe or connection.
// A request held or delayed is released by Close.
func (s *Slave) Serve(conn io.ReadWriter) error {
	return s.serveRTU(conn, nil)
}

// RTUPort returns an in-memory serial Port with s serving its line
// (RTU); t's cleanup closes it and waits for the serving to end. Call it
// again for a new port, as a reopen would.
func (s *Slave) RTUPort(t testing.TB) *Port {
	p, end := NewPort()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := s.serveRTU(end, stop); err != nil {
			t.Errorf("modbustest: serve RTU: %v", err)
		}
	}()
	t.Cleanup(func() {
		close(stop)
		p.Close()
		<-done
	})
	return p
}

// ListenTCP serves s over Modbus TCP on a loopback port and returns its
// address; t's cleanup stops it.
func (s *Slave) ListenTCP(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("modbustest: listen: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := s.ServeTCP(l); err != nil {
			t.Errorf("modbustest: serve TCP: %v", err)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
	})
	return l.Addr().String()
}

// closedErr reports whether err is how a closed stream ends a read.
func closedErr(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, net.ErrClosed)
}
