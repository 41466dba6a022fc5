package modbus

// CRC returns the CRC-16 of an RTU frame's bytes (its unit id and PDU)
// as Modbus over Serial Line V1.02, 6.2.2 computes it: polynomial 0xA001
// (0x8005 reflected), initial value 0xFFFF. On the wire its low byte
// goes first (AppendCRC).
func CRC(b []byte) uint16 {
	crc := uint16(0xFFFF)
	for _, c := range b {
		crc ^= uint16(c)
		for range 8 {
			if crc&1 != 0 {
				crc = crc>>1 ^ 0xA001
			} else {
				crc >>= 1
			}
		}
	}
	return crc
}

// AppendCRC appends the CRC of b to b, low byte first: b becomes an RTU
// frame.
func AppendCRC(b []byte) []byte {
	crc := CRC(b)
	return append(b, byte(crc), byte(crc>>8))
}
