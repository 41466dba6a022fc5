// Package sensirion holds what Sensirion's I²C humidity sensors (SHT3x,
// SHT4x) share: data read back as 16-bit words each followed by a CRC-8,
// and the conversion of a raw temperature word to °C. The SHT3x's
// commands are big-endian 16-bit words (Command); the SHT4x's are single
// bytes. Their humidity conversions differ, so each driver keeps its own.
package sensirion

import (
	"fmt"

	"periph.io/x/conn/v3/i2c"

	"github.com/openhal/gateway/internal/hw/sensor"
)

// ErrCRC reports a word whose CRC byte does not match its data: the read
// was corrupted on the bus, so its value must not be used. It matches
// sensor.ErrCorrupt too, so that the device's fault says so in words.
var ErrCRC error = crcError{}

type crcError struct{}

func (crcError) Error() string        { return "crc mismatch" }
func (crcError) Is(target error) bool { return target == sensor.ErrCorrupt }

// CRC8 is the checksum Sensirion puts after every data word: polynomial
// 0x31 (x⁸+x⁵+x⁴+1), initial value 0xFF, no reflection, no final XOR.
// The datasheets' example: CRC8(0xBE, 0xEF) = 0x92.
func CRC8(data []byte) byte {
	crc := byte(0xFF)
	for _, b := range data {
		crc ^= b
		for range 8 {
			if crc&0x80 != 0 {
				crc = crc<<1 ^ 0x31
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// Command sends a 16-bit command, most significant byte first.
func Command(d *i2c.Dev, cmd uint16) error {
	return d.Tx([]byte{byte(cmd >> 8), byte(cmd)}, nil)
}

// Words checks and splits b, a read of 3-byte groups (two data bytes and
// their CRC), into its words. names label the words in a CRC error, so the
// error says which value was corrupt; it has one name per group.
func Words(b []byte, names ...string) ([]uint16, error) {
	if len(b) != 3*len(names) {
		return nil, fmt.Errorf("read %d bytes for %d words", len(b), len(names))
	}
	words := make([]uint16, len(names))
	for i, name := range names {
		g := b[3*i : 3*i+3]
		if got, want := g[2], CRC8(g[:2]); got != want {
			return nil, fmt.Errorf("%s word 0x%02X%02X: %w: got 0x%02X, want 0x%02X",
				name, g[0], g[1], ErrCRC, got, want)
		}
		words[i] = uint16(g[0])<<8 | uint16(g[1])
	}
	return words, nil
}

// Celsius converts a raw temperature word to °C. The SHT3x-DIS (§4.13)
// and SHT4x datasheets give the same transfer function,
// T = -45 + 175·S/(2¹⁶-1), so the drivers share it rather than each carry
// a copy that could drift.
func Celsius(s uint16) float64 {
	return -45 + 175*float64(s)/65535
}
