package modbustest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"

	"github.com/openhal/gateway/internal/hw/modbus"
)

// serveRTU answers the RTU requests that come on conn until a read
// fails; stop (nil: never) releases a request held or delayed.
func (s *Slave) serveRTU(conn io.ReadWriter, stop <-chan struct{}) error {
	var buf []byte
	chunk := make([]byte, 512)
	for {
		n, err := conn.Read(chunk)
		buf = append(buf, chunk[:n]...)
		for {
			unit, pdu, rest, ok := nextRequest(buf)
			if !ok {
				break
			}
			buf = rest
			if err := s.answerRTU(conn, unit, pdu, stop); err != nil {
				return err
			}
		}
		if len(buf) > 1024 {
			buf = append([]byte(nil), buf[len(buf)-256:]...)
		}
		if err != nil {
			if closedErr(err) {
				return nil
			}
			return fmt.Errorf("read: %w", err)
		}
	}
}

// answerRTU answers one request in an RTU frame, with the unit's noise
// and CRC knobs.
func (s *Slave) answerRTU(conn io.Writer, unit byte, pdu []byte, stop <-chan struct{}) error {
	reply, send := s.answer(unit, pdu, true, stop)
	if !send {
		return nil
	}
	noise, badCRC := s.Unit(unit).framing()
	frame := append(append([]byte(nil), noise...), modbus.AppendCRC(append([]byte{unit}, reply...))...)
	if badCRC {
		frame[len(frame)-1] ^= 0xFF
	}
	if _, err := conn.Write(frame); err != nil && !closedErr(err) {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// nextRequest finds the first whole request frame with a valid CRC in
// buf, skipping what comes before it, and returns its unit, its PDU and
// what follows it. A request of a function it does not know the length
// of is taken when the CRC of all buf is valid.
func nextRequest(buf []byte) (unit byte, pdu, rest []byte, ok bool) {
	for i := 0; i+4 <= len(buf); i++ {
		n := requestLen(buf[i:])
		if n <= 0 || i+n > len(buf) {
			continue
		}
		f := buf[i : i+n]
		if modbus.CRC(f[:n-2]) == binary.LittleEndian.Uint16(f[n-2:]) {
			return f[0], append([]byte(nil), f[1:n-2]...), buf[i+n:], true
		}
	}
	return 0, nil, buf, false
}

// requestLen is the length of the request frame b starts (unit,
// function, data, CRC): 0 if it cannot tell yet or at all.
func requestLen(b []byte) int {
	switch b[1] {
	case 1, 2, 3, 4, 5, 6:
		return 8
	case 15, 16:
		if len(b) < 7 {
			return 0
		}
		return 7 + int(b[6]) + 2
	}
	return len(b)
}

// ServeTCP answers Modbus TCP connections accepted on l until l is
// closed, then closes them and returns nil.
func (s *Slave) ServeTCP(l net.Listener) error {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	mine := map[net.Conn]struct{}{}
	defer func() {
		close(stop)
		s.mu.Lock()
		for c := range mine {
			c.Close()
		}
		s.mu.Unlock()
		wg.Wait()
	}()
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("accept: %w", err)
		}
		s.mu.Lock()
		if s.closed {
			c.Close()
		}
		s.conns[c] = struct{}{}
		mine[c] = struct{}{}
		s.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.serveConn(c, stop)
			s.mu.Lock()
			delete(s.conns, c)
			delete(mine, c)
			s.mu.Unlock()
			c.Close()
		}()
	}
}

// serveConn answers the ADUs of one connection, in order, until it
// fails or its framing is wrong.
func (s *Slave) serveConn(c net.Conn, stop <-chan struct{}) {
	var head [7]byte
	for {
		if _, err := io.ReadFull(c, head[:]); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint16(head[4:]))
		if binary.BigEndian.Uint16(head[2:]) != 0 || n < 2 || n > 1+modbus.MaxPDU {
			return
		}
		pdu := make([]byte, n-1)
		if _, err := io.ReadFull(c, pdu); err != nil {
			return
		}
		unit := head[6]
		reply, send := s.answer(unit, pdu, false, stop)
		if !send {
			continue
		}
		adu := append(head[:4:4], 0, 0, unit)
		binary.BigEndian.PutUint16(adu[4:], uint16(1+len(reply)))
		if _, err := c.Write(append(adu, reply...)); err != nil {
			return
		}
	}
}
