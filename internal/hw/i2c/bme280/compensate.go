package bme280

import "encoding/binary"

// calibration holds the trimming parameters each chip carries in its NVM
// (datasheet BST-BME280-DS002 §4.2.2, Table 16).
type calibration struct {
	t1         uint16
	t2, t3     int16
	p1         uint16
	p2, p3, p4 int16
	p5, p6, p7 int16
	p8, p9     int16
	h1         uint8
	h2         int16
	h3         uint8
	h4, h5     int16
	h6         int8
}

// Lengths of the two calibration blocks: 0x88..0xA1 and 0xE1..0xE7.
const (
	calib1Len = 0xA1 - 0x88 + 1
	calib2Len = 0xE7 - 0xE1 + 1
)

// parseCalibration decodes the blocks read from 0x88..0xA1 (a) and
// 0xE1..0xE7 (b). Words are little-endian; dig_H4 and dig_H5 are signed
// 12-bit values sharing register 0xE5: H4 = 0xE4[7:0]<<4 | 0xE5[3:0],
// H5 = 0xE6[7:0]<<4 | 0xE5[7:4], with the sign in 0xE4/0xE6.
func parseCalibration(a [calib1Len]byte, b [calib2Len]byte) calibration {
	u := func(i int) uint16 { return binary.LittleEndian.Uint16(a[i:]) }
	s := func(i int) int16 { return int16(u(i)) }
	return calibration{
		t1: u(0), t2: s(2), t3: s(4),
		p1: u(6), p2: s(8), p3: s(10), p4: s(12), p5: s(14),
		p6: s(16), p7: s(18), p8: s(20), p9: s(22),
		// a[24] is 0xA0, reserved.
		h1: a[25],
		h2: int16(binary.LittleEndian.Uint16(b[0:])),
		h3: b[2],
		h4: int16(int8(b[3]))<<4 | int16(b[4]&0x0F),
		h5: int16(int8(b[5]))<<4 | int16(b[4]>>4),
		h6: int8(b[6]),
	}
}

// The three functions below are the datasheet's integer compensation
// (§4.2.3, rev. 1.1), transcribed with its types: int32 for temperature
// and humidity, int64 for pressure. Go's >> on signed integers is
// arithmetic, as the reference code assumes.

// temperature returns the temperature in 0.01 °C and t_fine, the fine
// temperature the pressure and humidity compensation need.
func (c *calibration) temperature(adcT int32) (t, tFine int32) {
	t1, t2, t3 := int32(c.t1), int32(c.t2), int32(c.t3)
	var1 := (((adcT >> 3) - (t1 << 1)) * t2) >> 11
	d := (adcT >> 4) - t1
	var2 := (((d * d) >> 12) * t3) >> 14
	tFine = var1 + var2
	return (tFine*5 + 128) >> 8, tFine
}

// pressure returns the pressure in Pa as Q24.8 (divide by 256).
func (c *calibration) pressure(adcP, tFine int32) uint32 {
	var1 := int64(tFine) - 128000
	var2 := var1 * var1 * int64(c.p6)
	var2 += (var1 * int64(c.p5)) << 17
	var2 += int64(c.p4) << 35
	var1 = ((var1 * var1 * int64(c.p3)) >> 8) + ((var1 * int64(c.p2)) << 12)
	var1 = (((int64(1) << 47) + var1) * int64(c.p1)) >> 33
	if var1 == 0 {
		return 0 // the reference's guard against dividing by zero
	}
	p := 1048576 - int64(adcP)
	p = (((p << 31) - var2) * 3125) / var1
	var1 = (int64(c.p9) * (p >> 13) * (p >> 13)) >> 25
	var2 = (int64(c.p8) * p) >> 19
	p = ((p + var1 + var2) >> 8) + (int64(c.p7) << 4)
	return uint32(p)
}

// humidity returns the relative humidity in %RH as Q22.10 (divide by
// 1024), clamped by the reference code to 0..100 %RH.
func (c *calibration) humidity(adcH, tFine int32) uint32 {
	h1, h2, h3 := int32(c.h1), int32(c.h2), int32(c.h3)
	h4, h5, h6 := int32(c.h4), int32(c.h5), int32(c.h6)
	v := tFine - 76800
	x := (((adcH << 14) - (h4 << 20) - (h5 * v)) + 16384) >> 15
	y := (((((v * h6) >> 10) * (((v * h3) >> 11) + 32768)) >> 10) + 2097152) * h2
	v = x * ((y + 8192) >> 14)
	v -= ((((v >> 15) * (v >> 15)) >> 7) * h1) >> 4
	v = max(v, 0)
	v = min(v, 419430400)
	return uint32(v >> 12)
}
