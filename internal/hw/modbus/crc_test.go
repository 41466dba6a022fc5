package modbus

import (
	"bytes"
	"testing"
)

// TestCRC checks frames whose CRC the specification and pymodbus agree
// on, as the bytes on the wire (low byte first).
func TestCRC(t *testing.T) {
	tests := []struct {
		frame, crc []byte
	}{
		{[]byte{0x01, 0x03, 0x00, 0x00, 0x00, 0x0A}, []byte{0xC5, 0xCD}},
		{[]byte{0x11, 0x03, 0x00, 0x6B, 0x00, 0x03}, []byte{0x76, 0x87}}, // the spec's example
		{[]byte{0x01, 0x05, 0x00, 0x00, 0xFF, 0x00}, []byte{0x8C, 0x3A}},
		{[]byte{0x01, 0x06, 0x00, 0x01, 0x00, 0x03}, []byte{0x98, 0x0B}},
		{[]byte{0x01, 0x04, 0x00, 0x00, 0x00, 0x01}, []byte{0x31, 0xCA}},
		{[]byte{0x01, 0x03, 0x04, 0x01, 0x02, 0x03, 0x04}, []byte{0x5B, 0x3C}},
		{nil, []byte{0xFF, 0xFF}},
	}
	for _, tt := range tests {
		got := AppendCRC(append([]byte(nil), tt.frame...))
		if want := append(append([]byte(nil), tt.frame...), tt.crc...); !bytes.Equal(got, want) {
			t.Errorf("AppendCRC(% x) = % x, want % x", tt.frame, got, want)
		}
		if c := CRC(tt.frame); byte(c) != tt.crc[0] || byte(c>>8) != tt.crc[1] {
			t.Errorf("CRC(% x) = %#04x, want low byte %#02x then %#02x", tt.frame, c, tt.crc[0], tt.crc[1])
		}
		// A frame with its CRC appended has a CRC of 0: the receiver's check.
		if c := CRC(got); c != 0 {
			t.Errorf("CRC of % x with its CRC = %#04x, want 0", tt.frame, c)
		}
	}
}
