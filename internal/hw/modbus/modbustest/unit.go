package modbustest

import (
	"encoding/binary"
	"time"

	"github.com/openhal/gateway/internal/hw/modbus"
)

// Unit is one unit (slave id) of a Slave: its four tables, sparse (an
// address exists once set), and its knobs. Its methods are safe for
// concurrent use.
type Unit struct {
	s  *Slave
	id byte

	// All below is guarded by s.mu.
	tables    [5]map[uint16]uint16 // by modbus.Table; bits stored as 0 or 1
	silent    bool
	exception byte
	delay     time.Duration
	hold      chan struct{}
	badCRC    bool
	noise     []byte
	handler   func(req []byte) []byte
}

// SetBits sets coils or discrete inputs (t) from addr, creating them.
func (u *Unit) SetBits(t modbus.Table, addr uint16, v ...bool) {
	u.s.mu.Lock()
	defer u.s.mu.Unlock()
	for i, on := range v {
		var r uint16
		if on {
			r = 1
		}
		u.tables[t][addr+uint16(i)] = r
	}
}

// SetRegisters sets input or holding registers (t) from addr, creating
// them.
func (u *Unit) SetRegisters(t modbus.Table, addr uint16, v ...uint16) {
	u.s.mu.Lock()
	defer u.s.mu.Unlock()
	for i, r := range v {
		u.tables[t][addr+uint16(i)] = r
	}
}

// Bits returns n coils or discrete inputs (t) from addr; false if one
// of them was never set.
func (u *Unit) Bits(t modbus.Table, addr, n uint16) ([]bool, bool) {
	u.s.mu.Lock()
	defer u.s.mu.Unlock()
	regs, ok := u.get(t, addr, n)
	bits := make([]bool, len(regs))
	for i, r := range regs {
		bits[i] = r != 0
	}
	return bits, ok
}

// Registers returns n input or holding registers (t) from addr; false
// if one of them was never set.
func (u *Unit) Registers(t modbus.Table, addr, n uint16) ([]uint16, bool) {
	u.s.mu.Lock()
	defer u.s.mu.Unlock()
	return u.get(t, addr, n)
}

// get returns n values of t from addr; u.s.mu is held.
func (u *Unit) get(t modbus.Table, addr, n uint16) ([]uint16, bool) {
	if int(addr)+int(n) > 0x10000 {
		return nil, false
	}
	v := make([]uint16, n)
	for i := range v {
		r, ok := u.tables[t][addr+uint16(i)]
		if !ok {
			return nil, false
		}
		v[i] = r
	}
	return v, true
}

// SetSilent makes the unit not answer at all (true), as a unit powered
// off or with another id would, or answer again (false).
func (u *Unit) SetSilent(on bool) { u.set(func() { u.silent = on }) }

// SetException makes the unit answer every request with exception code
// (0: answer normally).
func (u *Unit) SetException(code byte) { u.set(func() { u.exception = code }) }

// SetDelay makes the unit wait d before each answer (0: none).
func (u *Unit) SetDelay(d time.Duration) { u.set(func() { u.delay = d }) }

// SetBadCRC makes the unit's RTU answers carry a wrong CRC (true).
func (u *Unit) SetBadCRC(on bool) { u.set(func() { u.badCRC = on }) }

// SetNoise makes the unit send b before each RTU answer, in the same
// write, as line noise just before a frame (nil: none).
func (u *Unit) SetNoise(b []byte) {
	u.set(func() { u.noise = append([]byte(nil), b...) })
}

// SetHandler makes f answer the unit's requests in place of its tables
// and knobs (but for hold and delay): f gets the request PDU, function
// code first, and returns the reply PDU, or nil for no answer. nil
// restores the tables.
func (u *Unit) SetHandler(f func(req []byte) []byte) { u.set(func() { u.handler = f }) }

// Hold makes the unit's requests wait, from now on, until release is
// called (or the slave is closed): the test can see a request arrive
// (Slave.WaitRequests) and act while it is in flight. release may be
// called more than once.
func (u *Unit) Hold() (release func()) {
	ch := make(chan struct{})
	u.set(func() { u.hold = ch })
	var done bool
	return func() {
		u.set(func() {
			if !done {
				done = true
				close(ch)
				if u.hold == ch {
					u.hold = nil
				}
			}
		})
	}
}

func (u *Unit) set(f func()) {
	u.s.mu.Lock()
	defer u.s.mu.Unlock()
	f()
}

// framing returns the RTU knobs: noise before the frame, a bad CRC.
func (u *Unit) framing() (noise []byte, badCRC bool) {
	u.s.mu.Lock()
	defer u.s.mu.Unlock()
	return u.noise, u.badCRC
}

// answer returns the unit's reply to pdu, and whether it answers.
func (u *Unit) answer(pdu []byte) ([]byte, bool) {
	u.s.mu.Lock()
	h := u.handler
	u.s.mu.Unlock()
	if h != nil {
		r := h(append([]byte(nil), pdu...))
		return r, r != nil
	}
	u.s.mu.Lock()
	defer u.s.mu.Unlock()
	switch {
	case u.silent:
		return nil, false
	case u.exception != 0:
		return []byte{pdu[0] | 0x80, u.exception}, true
	}
	return u.execute(pdu), true
}

// execute carries out a request on the tables; u.s.mu is held.
func (u *Unit) execute(pdu []byte) []byte {
	fc := pdu[0]
	exc := func(code byte) []byte { return []byte{fc | 0x80, code} }
	if fc != 1 && fc != 2 && fc != 3 && fc != 4 && fc != 5 && fc != 6 && fc != 15 && fc != 16 {
		return exc(modbus.IllegalFunction)
	}
	if len(pdu) < 5 {
		return exc(modbus.IllegalDataValue)
	}
	addr, n := binary.BigEndian.Uint16(pdu[1:]), binary.BigEndian.Uint16(pdu[3:])
	switch fc {
	case 1, 2, 3, 4:
		return u.read(fc, addr, n, len(pdu) == 5)
	case 5:
		if len(pdu) != 5 || (n != 0xFF00 && n != 0) {
			return exc(modbus.IllegalDataValue)
		}
		return u.write(fc, modbus.Coils, addr, []uint16{n >> 15}, pdu)
	case 6:
		if len(pdu) != 5 {
			return exc(modbus.IllegalDataValue)
		}
		return u.write(fc, modbus.HoldingRegisters, addr, []uint16{n}, pdu)
	case 15:
		if n < 1 || n > modbus.MaxWriteCoils || len(pdu) < 6 || int(pdu[5]) != (int(n)+7)/8 || len(pdu) != 6+int(pdu[5]) {
			return exc(modbus.IllegalDataValue)
		}
		v := make([]uint16, n)
		for i := range v {
			v[i] = uint16(pdu[6+i/8]>>(i%8)) & 1
		}
		return u.write(fc, modbus.Coils, addr, v, pdu[:5])
	default: // 16
		if n < 1 || n > modbus.MaxWriteRegisters || len(pdu) < 6 || int(pdu[5]) != 2*int(n) || len(pdu) != 6+int(pdu[5]) {
			return exc(modbus.IllegalDataValue)
		}
		v := make([]uint16, n)
		for i := range v {
			v[i] = binary.BigEndian.Uint16(pdu[6+2*i:])
		}
		return u.write(fc, modbus.HoldingRegisters, addr, v, pdu[:5])
	}
}

var readTables = [5]modbus.Table{1: modbus.Coils, 2: modbus.DiscreteInputs, 3: modbus.HoldingRegisters, 4: modbus.InputRegisters}

// read answers functions 1-4; u.s.mu is held.
func (u *Unit) read(fc byte, addr, n uint16, wellFormed bool) []byte {
	t := readTables[fc]
	max := uint16(modbus.MaxReadRegisters)
	if t.Bits() {
		max = modbus.MaxReadBits
	}
	if !wellFormed || n < 1 || n > max {
		return []byte{fc | 0x80, modbus.IllegalDataValue}
	}
	v, ok := u.get(t, addr, n)
	if !ok {
		return []byte{fc | 0x80, modbus.IllegalDataAddress}
	}
	if t.Bits() {
		data := make([]byte, (n+7)/8)
		for i, b := range v {
			data[i/8] |= byte(b) << (i % 8)
		}
		return append([]byte{fc, byte(len(data))}, data...)
	}
	reply := []byte{fc, byte(2 * n)}
	for _, r := range v {
		reply = binary.BigEndian.AppendUint16(reply, r)
	}
	return reply
}

// write stores v in t from addr if every address exists, and returns
// reply; u.s.mu is held.
func (u *Unit) write(fc byte, t modbus.Table, addr uint16, v []uint16, reply []byte) []byte {
	if _, ok := u.get(t, addr, uint16(len(v))); !ok {
		return []byte{fc | 0x80, modbus.IllegalDataAddress}
	}
	for i, r := range v {
		u.tables[t][addr+uint16(i)] = r
	}
	return append([]byte(nil), reply...)
}
