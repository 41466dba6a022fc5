package modbus

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// FuzzFindFrame feeds findFrame any bytes: it must not panic, and what
// it returns must be a frame of the unit and function with a valid CRC
// found in the bytes.
func FuzzFindFrame(f *testing.F) {
	f.Add(AppendCRC([]byte{1, 3, 4, 0, 1, 0, 2}), byte(1), byte(3))
	f.Add(append([]byte{1, 3, 0xF0}, AppendCRC([]byte{1, 3, 2, 0, 1})...), byte(1), byte(3))
	f.Add(AppendCRC([]byte{1, 0x83, 2}), byte(1), byte(3))
	f.Add(AppendCRC([]byte{7, 0x18, 0, 4, 0, 1, 0, 9}), byte(7), byte(0x18))
	f.Add(AppendCRC([]byte{7, 0x10, 0, 1, 0, 2}), byte(7), byte(0x10))
	f.Add([]byte{}, byte(0), byte(0))
	f.Fuzz(func(t *testing.T, buf []byte, unit, fc byte) {
		s := findFrame(buf, unit, fc)
		if s.pdu == nil {
			return
		}
		fr := buf[s.at : s.at+1+len(s.pdu)+2]
		if fr[0] != unit || !bytes.Equal(fr[1:1+len(s.pdu)], s.pdu) || (s.pdu[0] != fc && s.pdu[0] != fc|exceptionBit) {
			t.Fatalf("pdu % x is not a frame of unit %d function %d at %d in % x", s.pdu, unit, fc, s.at, buf)
		}
		if CRC(fr) != 0 {
			t.Fatalf("frame % x has a bad CRC", fr)
		}
		if n := replyFrameLen(fc, fr); n != len(fr) {
			t.Fatalf("frame % x of %d bytes, its function says %d", fr, len(fr), n)
		}
	})
}

// FuzzReplies feeds the Client's reply parsers any PDU: no panic, and a
// parse that succeeds returns what was asked for.
func FuzzReplies(f *testing.F) {
	f.Add([]byte{0x03, 0x04, 0, 1, 0, 2}, uint16(2))
	f.Add([]byte{0x01, 0x01, 0xFF}, uint16(8))
	f.Add([]byte{0x02, 0x02, 0xFF, 0x01}, uint16(9))
	f.Add([]byte{0x83, 0x02}, uint16(1))
	f.Add([]byte{0x10, 0x00, 0x01, 0x00, 0x02}, uint16(2))
	f.Add([]byte{0x03, 0xFF}, uint16(0xFFFF))
	f.Fuzz(func(t *testing.T, reply []byte, n uint16) {
		for _, fc := range []byte{fcReadCoils, fcReadDiscreteInputs, fcReadHoldingRegisters, fcReadInputRegisters} {
			r, err := checkReply(fc, reply)
			var exc *Exception
			if err != nil && !errors.Is(err, ErrBadReply) && !errors.As(err, &exc) {
				t.Fatalf("checkReply: %v", err)
			}
			if err != nil {
				continue
			}
			if fc <= fcReadDiscreteInputs {
				if bits, err := parseBits(fc, r, n); err == nil && len(bits) != int(n) {
					t.Fatalf("%d bits for %d", len(bits), n)
				}
			} else if regs, err := parseRegisters(fc, r, n); err == nil && len(regs) != int(n) {
				t.Fatalf("%d registers for %d", len(regs), n)
			}
		}
		req := writeSingleRequest(fcWriteSingleRegister, 1, 2)
		if err := checkEcho(req, reply); err == nil && !bytes.Equal(req, reply) {
			t.Fatal("an echo that differs was taken")
		}
		if err := checkWriteMultiple(fcWriteMultipleRegisters, reply, 1, int(n)); err == nil && len(reply) != 5 {
			t.Fatal("a write reply of the wrong length was taken")
		}
	})
}

// FuzzTCPStream feeds a TCP transport any bytes as the server's side of
// the stream: no panic, and a reply taken has the request's transaction
// id.
func FuzzTCPStream(f *testing.F) {
	mbap := func(tid uint16, pdu ...byte) []byte {
		b := binary.BigEndian.AppendUint16(nil, tid)
		b = append(b, 0, 0)
		b = binary.BigEndian.AppendUint16(b, uint16(1+len(pdu)))
		return append(append(b, 1), pdu...)
	}
	f.Add(mbap(1, 3, 2, 0, 1))
	f.Add(append(mbap(9, 3, 2, 0, 7), mbap(1, 3, 2, 0, 1)...))
	f.Add(mbap(1, 0x83, 2))
	f.Add([]byte{0, 1, 0, 5, 0, 0, 1})
	f.Add([]byte{0, 1, 0, 0, 0xFF, 0xFF, 1})
	f.Fuzz(func(t *testing.T, stream []byte) {
		client, server := net.Pipe()
		defer server.Close()
		tr := NewTCP(client)
		defer tr.Close()
		go func() {
			io.ReadFull(server, make([]byte, 12))
			server.Write(stream)
			server.Close()
		}()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		pdu, err := tr.Do(ctx, 1, []byte{3, 0, 0, 0, 1})
		if err != nil {
			return
		}
		at := -1
		for i := 0; i+mbapLen <= len(stream); i++ {
			if binary.BigEndian.Uint16(stream[i:]) == 1 && bytes.HasPrefix(stream[i+mbapLen:], pdu) {
				at = i
				break
			}
		}
		if at < 0 || pdu[0] != 3 {
			t.Fatalf("reply % x is not of transaction 1 in % x", pdu, stream)
		}
	})
}

// FuzzCodec decodes any registers as every type and order, and encodes
// what comes out back: the same registers (but for Bool, NaNs, and the
// integers float64 cannot hold exactly).
func FuzzCodec(f *testing.F) {
	f.Add(uint16(0x42F6), uint16(0xE979), uint16(0), uint16(0))
	f.Add(uint16(0xFFFF), uint16(0xFFFF), uint16(0xFFFF), uint16(0xFFFF))
	f.Add(uint16(0x7FF8), uint16(1), uint16(0), uint16(0))
	f.Fuzz(func(t *testing.T, a, b, c, d uint16) {
		all := []uint16{a, b, c, d}
		for typ := Bool; typ <= Float64; typ++ {
			for s := SwapNone; s <= SwapWordByte; s++ {
				regs := all[:typ.Words()]
				v, err := Decode(typ, s, regs)
				if err != nil {
					t.Fatalf("Decode(%s, %s, %04x): %v", typ, s, regs, err)
				}
				back, err := Encode(typ, s, v)
				exact := typ != Bool && v == v && (typ != Int64 && typ != Uint64 || v > -(1<<53) && v < 1<<53)
				if exact && (err != nil || !equalRegs(back, regs)) {
					t.Fatalf("%s/%s: %04x → %v → %04x, %v", typ, s, regs, v, back, err)
				}
			}
		}
	})
}

func equalRegs(a, b []uint16) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
