package modbus

import (
	"encoding/binary"
	"fmt"
)

// Function codes this package builds requests for.
const (
	fcReadCoils              = 0x01
	fcReadDiscreteInputs     = 0x02
	fcReadHoldingRegisters   = 0x03
	fcReadInputRegisters     = 0x04
	fcWriteSingleCoil        = 0x05
	fcWriteSingleRegister    = 0x06
	fcWriteMultipleCoils     = 0x0F
	fcWriteMultipleRegisters = 0x10
)

// MaxPDU is the longest PDU, request or reply: 256 bytes of an RTU frame
// less its unit id and CRC.
const MaxPDU = 253

// exceptionBit marks a reply's function code as an exception reply.
const exceptionBit = 0x80

// checkReply checks that a reply PDU answers a request of function fc:
// an exception reply becomes an *Exception, another function
// ErrBadReply. It returns the reply unchanged otherwise.
func checkReply(fc byte, reply []byte) ([]byte, error) {
	switch {
	case len(reply) == 0:
		return nil, fmt.Errorf("%w: empty PDU", ErrBadReply)
	case reply[0] == fc|exceptionBit && fc&exceptionBit == 0:
		if len(reply) != 2 {
			return nil, fmt.Errorf("%w: exception reply of %d bytes, want 2", ErrBadReply, len(reply))
		}
		return nil, &Exception{Function: fc, Code: reply[1]}
	case reply[0] != fc:
		return nil, fmt.Errorf("%w: function %#02x answered a request of function %#02x", ErrBadReply, reply[0], fc)
	}
	return reply, nil
}

// checkRequest refuses a PDU no transport can carry.
func checkRequest(pdu []byte) error {
	switch {
	case len(pdu) == 0:
		return fmt.Errorf("%w: empty PDU", ErrRequest)
	case len(pdu) > MaxPDU:
		return fmt.Errorf("%w: PDU of %d bytes, at most %d", ErrRequest, len(pdu), MaxPDU)
	case pdu[0] == 0 || pdu[0]&exceptionBit != 0:
		return fmt.Errorf("%w: function code %#02x", ErrRequest, pdu[0])
	}
	return nil
}

// readRequest is the PDU of a read of n bits or registers from addr.
func readRequest(fc byte, addr, n uint16) []byte {
	return []byte{fc, byte(addr >> 8), byte(addr), byte(n >> 8), byte(n)}
}

// readData checks the reply to a read of function fc that wants want
// data bytes, and returns them.
func readData(fc byte, reply []byte, want int) ([]byte, error) {
	if len(reply) < 2 {
		return nil, fmt.Errorf("%w: %d bytes, want %d", ErrBadReply, len(reply), 2+want)
	}
	if reply[0] != fc {
		return nil, fmt.Errorf("%w: function %#02x answered a request of function %#02x", ErrBadReply, reply[0], fc)
	}
	if int(reply[1]) != want {
		return nil, fmt.Errorf("%w: byte count %d, want %d", ErrBadReply, reply[1], want)
	}
	if len(reply) != 2+want {
		return nil, fmt.Errorf("%w: %d bytes with byte count %d, want %d", ErrBadReply, len(reply), want, 2+want)
	}
	return reply[2:], nil
}

// parseBits returns the n bits of a reply to a read of coils or
// discrete inputs (function fc): packed eight to a byte, the first in
// the low bit of the first byte.
func parseBits(fc byte, reply []byte, n uint16) ([]bool, error) {
	data, err := readData(fc, reply, (int(n)+7)/8)
	if err != nil {
		return nil, err
	}
	bits := make([]bool, n)
	for i := range bits {
		bits[i] = data[i/8]&(1<<(i%8)) != 0
	}
	return bits, nil
}

// parseRegisters returns the n registers of a reply to a read of input
// or holding registers (function fc), each big-endian.
func parseRegisters(fc byte, reply []byte, n uint16) ([]uint16, error) {
	data, err := readData(fc, reply, 2*int(n))
	if err != nil {
		return nil, err
	}
	regs := make([]uint16, n)
	for i := range regs {
		regs[i] = binary.BigEndian.Uint16(data[2*i:])
	}
	return regs, nil
}

// writeSingleRequest is the PDU of a write of one coil or register
// (function 5 or 6).
func writeSingleRequest(fc byte, addr, v uint16) []byte {
	return []byte{fc, byte(addr >> 8), byte(addr), byte(v >> 8), byte(v)}
}

// checkEcho checks a reply that must repeat its request (functions 5
// and 6).
func checkEcho(req, reply []byte) error {
	if len(reply) != len(req) {
		return fmt.Errorf("%w: echo of %d bytes, want %d", ErrBadReply, len(reply), len(req))
	}
	for i := range req {
		if reply[i] != req[i] {
			return fmt.Errorf("%w: echo % x differs from the request % x", ErrBadReply, reply, req)
		}
	}
	return nil
}

// writeRegistersRequest is the PDU of a write of registers from addr
// (function 16).
func writeRegistersRequest(addr uint16, v []uint16) []byte {
	pdu := []byte{fcWriteMultipleRegisters, byte(addr >> 8), byte(addr), byte(len(v) >> 8), byte(len(v)), byte(2 * len(v))}
	for _, r := range v {
		pdu = append(pdu, byte(r>>8), byte(r))
	}
	return pdu
}

// writeCoilsRequest is the PDU of a write of coils from addr (function
// 15), packed as parseBits unpacks them.
func writeCoilsRequest(addr uint16, v []bool) []byte {
	nb := (len(v) + 7) / 8
	pdu := []byte{fcWriteMultipleCoils, byte(addr >> 8), byte(addr), byte(len(v) >> 8), byte(len(v)), byte(nb)}
	data := make([]byte, nb)
	for i, on := range v {
		if on {
			data[i/8] |= 1 << (i % 8)
		}
	}
	return append(pdu, data...)
}

// checkWriteMultiple checks the reply to a write of n coils or registers
// from addr (function 15 or 16): the function, the address and the
// count.
func checkWriteMultiple(fc byte, reply []byte, addr uint16, n int) error {
	want := []byte{fc, byte(addr >> 8), byte(addr), byte(n >> 8), byte(n)}
	if len(reply) != len(want) {
		return fmt.Errorf("%w: %d bytes, want %d", ErrBadReply, len(reply), len(want))
	}
	for i := range want {
		if reply[i] != want[i] {
			return fmt.Errorf("%w: % x, want % x", ErrBadReply, reply, want)
		}
	}
	return nil
}
