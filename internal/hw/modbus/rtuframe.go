package modbus

import "encoding/binary"

// replyFrameLen returns the length of the RTU frame (unit id, PDU, CRC)
// that b starts, as a reply to a request of function fc: 0 if b cannot
// start one, -1 if more bytes are needed to know. b[1] is fc, or fc with
// the exception bit.
//
// RTU marks a frame's end by 3.5 characters of silence, which a user
// space program behind a USB adapter's latency cannot see; the length
// from the function code (and the byte count where there is one) and a
// valid CRC find the frame instead, at any offset.
func replyFrameLen(fc byte, b []byte) int {
	if len(b) < 2 {
		return -1
	}
	if b[1] == fc|exceptionBit {
		return 5 // unit, function, code, CRC
	}
	n := replyPDULen(fc, b[1:])
	if n <= 0 {
		return n
	}
	return 1 + n + 2
}

// replyPDULen is the length of the reply PDU that p starts (function
// code first) for request function fc: 0 if impossible, -1 if more
// bytes are needed. It knows the public functions of the Modbus
// Application Protocol V1.1b3 whose reply length the reply itself
// tells; others (43, encapsulated interface) are refused by RTU's Do.
func replyPDULen(fc byte, p []byte) int {
	switch fc {
	case 0x05, 0x06, 0x08, 0x0B, 0x0F, 0x10:
		return 5 // function, two 16-bit fields
	case 0x07:
		return 2 // function, status byte
	case 0x16:
		return 7 // function, address, AND mask, OR mask
	case 0x01, 0x02, 0x03, 0x04, 0x0C, 0x11, 0x14, 0x15, 0x17:
		if len(p) < 2 {
			return -1
		}
		if bc := int(p[1]); bc > 0 && 2+bc <= MaxPDU {
			return 2 + bc
		}
		return 0
	case 0x18:
		if len(p) < 3 {
			return -1
		}
		if bc := int(binary.BigEndian.Uint16(p[1:])); 3+bc <= MaxPDU {
			return 3 + bc
		}
		return 0
	}
	return 0
}

// rtuKnows reports whether RTU framing can find the reply to a request
// of function fc.
func rtuKnows(fc byte) bool {
	return replyPDULen(fc, []byte{fc, 2, 0, 2}) > 0
}

// scan is what findFrame saw in the bytes received so far.
type scan struct {
	pdu    []byte // the reply PDU of the first valid frame, nil if none
	at     int    // where that frame starts
	badCRC []byte // the first whole frame of the unit and function whose CRC is wrong
}

// findFrame looks for the reply of unit to a request of function fc
// anywhere in buf: noise before it (line noise, the tail of a late
// reply) is skipped. The first whole frame with a valid CRC wins.
func findFrame(buf []byte, unit, fc byte) scan {
	var s scan
	for i := 0; i+1 < len(buf); i++ {
		if buf[i] != unit || (buf[i+1] != fc && buf[i+1] != fc|exceptionBit) {
			continue
		}
		n := replyFrameLen(fc, buf[i:])
		if n <= 0 || i+n > len(buf) {
			continue
		}
		f := buf[i : i+n]
		if CRC(f[:n-2]) == binary.LittleEndian.Uint16(f[n-2:]) {
			s.pdu, s.at = f[1:n-2], i
			return s
		}
		if s.badCRC == nil {
			s.badCRC = f
		}
	}
	return s
}

// strayReply finds the first whole frame with a valid CRC in buf from a
// unit other than unit, of any function: on a serial line, the late
// reply of another unit to an earlier request. It returns where the
// frame starts and its length, or n == 0 if there is none.
func strayReply(buf []byte, unit byte) (at, n int) {
	for i := 0; i+1 < len(buf); i++ {
		if buf[i] == unit {
			continue
		}
		n := replyFrameLen(buf[i+1]&^exceptionBit, buf[i:])
		if n <= 0 || i+n > len(buf) {
			continue
		}
		if f := buf[i : i+n]; CRC(f[:n-2]) == binary.LittleEndian.Uint16(f[n-2:]) {
			return i, n
		}
	}
	return 0, 0
}
