package modbus

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestCodecOrders checks every type in every order against register
// contents written by hand from the value's big-endian bytes.
func TestCodecOrders(t *testing.T) {
	type regs = []uint16
	tests := []struct {
		t                      Type
		v                      float64
		abcd, badc, cdab, dcba regs
	}{
		{Bool, 1, regs{0x0001}, regs{0x0100}, regs{0x0001}, regs{0x0100}},
		{Bool, 0, regs{0x0000}, regs{0x0000}, regs{0x0000}, regs{0x0000}},
		{Int16, -12345, regs{0xCFC7}, regs{0xC7CF}, regs{0xCFC7}, regs{0xC7CF}},
		{Uint16, 0x1234, regs{0x1234}, regs{0x3412}, regs{0x1234}, regs{0x3412}},
		{Int32, -123456789, regs{0xF8A4, 0x32EB}, regs{0xA4F8, 0xEB32}, regs{0x32EB, 0xF8A4}, regs{0xEB32, 0xA4F8}},
		{Uint32, 0x12345678, regs{0x1234, 0x5678}, regs{0x3412, 0x7856}, regs{0x5678, 0x1234}, regs{0x7856, 0x3412}},
		{Float32, float64(float32(123.456)), regs{0x42F6, 0xE979}, regs{0xF642, 0x79E9}, regs{0xE979, 0x42F6}, regs{0x79E9, 0xF642}},
		{Int64, -0x0001020304050607,
			regs{0xFFFE, 0xFDFC, 0xFBFA, 0xF9F9}, regs{0xFEFF, 0xFCFD, 0xFAFB, 0xF9F9},
			regs{0xF9F9, 0xFBFA, 0xFDFC, 0xFFFE}, regs{0xF9F9, 0xFAFB, 0xFCFD, 0xFEFF}},
		{Uint64, 0x0011223344556677,
			regs{0x0011, 0x2233, 0x4455, 0x6677}, regs{0x1100, 0x3322, 0x5544, 0x7766},
			regs{0x6677, 0x4455, 0x2233, 0x0011}, regs{0x7766, 0x5544, 0x3322, 0x1100}},
		{Float64, 123.456,
			regs{0x405E, 0xDD2F, 0x1A9F, 0xBE77}, regs{0x5E40, 0x2FDD, 0x9F1A, 0x77BE},
			regs{0xBE77, 0x1A9F, 0xDD2F, 0x405E}, regs{0x77BE, 0x9F1A, 0x2FDD, 0x5E40}},
	}
	for _, tt := range tests {
		for s, want := range map[Swap]regs{SwapNone: tt.abcd, SwapByte: tt.badc, SwapWord: tt.cdab, SwapWordByte: tt.dcba} {
			name := tt.t.String() + "/" + s.String()
			got, err := Encode(tt.t, s, tt.v)
			if err != nil || !slices.Equal(got, want) {
				t.Errorf("%s: Encode(%v) = %04x, %v; want %04x", name, tt.v, got, err, want)
			}
			v, err := Decode(tt.t, s, want)
			if err != nil || v != tt.v {
				t.Errorf("%s: Decode(%04x) = %v, %v; want %v", name, want, v, err, tt.v)
			}
			if len(want) != tt.t.Words() {
				t.Errorf("%s: Words = %d, the registers %d", name, tt.t.Words(), len(want))
			}
		}
	}
}

// TestDecodeBool checks that any nonzero register is true, in any order.
func TestDecodeBool(t *testing.T) {
	for _, r := range []uint16{1, 0x0100, 0x8000, 0xFFFF} {
		for s := SwapNone; s <= SwapWordByte; s++ {
			if v, err := Decode(Bool, s, []uint16{r}); v != 1 || err != nil {
				t.Errorf("Decode(bool, %s, %04x) = %v, %v", s, r, v, err)
			}
		}
	}
}

// TestDecodeRefuses checks the wrong number of registers and invalid
// types and swaps.
func TestDecodeRefuses(t *testing.T) {
	tests := []struct {
		t    Type
		s    Swap
		regs []uint16
		msg  string
	}{
		{Float32, SwapNone, []uint16{1}, "decode float32: 1 registers, want 2"},
		{Int16, SwapNone, []uint16{1, 2}, "decode int16: 2 registers, want 1"},
		{Float64, SwapWord, nil, "decode float64: 0 registers, want 4"},
		{0, SwapNone, []uint16{1}, "type(0): not a type"},
		{Int16, 9, []uint16{1}, "swap(9): not a swap"},
	}
	for _, tt := range tests {
		if _, err := Decode(tt.t, tt.s, tt.regs); err == nil || err.Error() != tt.msg {
			t.Errorf("Decode(%s, %s, %v) = %v, want %q", tt.t, tt.s, tt.regs, err, tt.msg)
		}
	}
}

// TestEncodeRefuses checks the values a type cannot hold, each error
// naming the value and the type.
func TestEncodeRefuses(t *testing.T) {
	tests := []struct {
		t   Type
		v   float64
		msg string
	}{
		{Int16, 32768, "encode 32768 as int16: out of range -32768 to 32767"},
		{Int16, -32769, "encode -32769 as int16: out of range -32768 to 32767"},
		{Uint16, -1, "encode -1 as uint16: out of range 0 to 65535"},
		{Uint16, 65536, "encode 65536 as uint16: out of range 0 to 65535"},
		{Int32, 2147483648, "encode 2147483648 as int32: out of range -2147483648 to 2147483647"},
		{Uint32, 4294967296, "encode 4294967296 as uint32: out of range 0 to 4294967295"},
		{Int64, 9223372036854775807, "encode 9223372036854775808 as int64: out of range -9223372036854775808 to 9223372036854775807"},
		{Uint64, 18446744073709551615, "encode 18446744073709551616 as uint64: out of range 0 to 18446744073709551615"},
		{Uint64, -1, "encode -1 as uint64: out of range 0 to 18446744073709551615"},
		{Int16, 1.5, "encode 1.5 as int16: not an integer"},
		{Uint32, 0.001, "encode 0.001 as uint32: not an integer"},
		{Int32, math.NaN(), "encode NaN as int32: not a number an integer type can hold"},
		{Uint16, math.Inf(1), "encode +Inf as uint16: not a number an integer type can hold"},
		{Int64, math.Inf(-1), "encode -Inf as int64: not a number an integer type can hold"},
		{Bool, 2, "encode 2 as bool: want 0 or 1"},
		{Bool, -1, "encode -1 as bool: want 0 or 1"},
		{Bool, 0.5, "encode 0.5 as bool: not an integer"},
		{Float32, 1e39, "encode 1e+39 as float32: beyond ±3.4028234663852886e+38"},
		{Float32, -1e300, "encode -1e+300 as float32: beyond ±3.4028234663852886e+38"},
		{0, 1, "type(0): not a type"},
	}
	for _, tt := range tests {
		if regs, err := Encode(tt.t, SwapNone, tt.v); err == nil || err.Error() != tt.msg {
			t.Errorf("Encode(%s, %v) = %04x, %v; want %q", tt.t, tt.v, regs, err, tt.msg)
		}
	}
}

// TestEncodeBounds checks that the bounds Range gives are encoded (but
// for the 64-bit integers' maximum, which float64 rounds up), and that
// floats take NaN and infinities.
func TestEncodeBounds(t *testing.T) {
	for typ := Bool; typ <= Float64; typ++ {
		lo, hi := Range(typ)
		for _, v := range []float64{lo, hi} {
			_, err := Encode(typ, SwapNone, v)
			refused := (typ == Int64 || typ == Uint64) && v == hi
			if (err != nil) != refused {
				t.Errorf("Encode(%s, %v) = %v, want refused %v", typ, v, err, refused)
			}
		}
		if typ == Int64 || typ == Uint64 {
			if _, err := Encode(typ, SwapNone, math.Nextafter(hi, 0)); err != nil {
				t.Errorf("%s: the greatest float64 below its bound: %v", typ, err)
			}
		}
	}
	for _, typ := range []Type{Float32, Float64} {
		for _, v := range []float64{math.Inf(1), math.Inf(-1), math.NaN()} {
			regs, err := Encode(typ, SwapWord, v)
			if err != nil {
				t.Errorf("Encode(%s, %v): %v", typ, v, err)
				continue
			}
			back, _ := Decode(typ, SwapWord, regs)
			if !(back == v || math.IsNaN(back) && math.IsNaN(v)) {
				t.Errorf("%s: %v came back as %v", typ, v, back)
			}
		}
	}
}

// TestRoundTrip encodes and decodes values of every type in every order.
func TestRoundTrip(t *testing.T) {
	values := map[Type][]float64{
		Bool:    {0, 1},
		Int16:   {0, 1, -1, 32767, -32768, 255, -256},
		Uint16:  {0, 1, 65535, 256},
		Int32:   {0, -1, 2147483647, -2147483648, 65536, -65537},
		Uint32:  {0, 4294967295, 65536, 65535},
		Float32: {0, -1.5, 3.25, float64(float32(1e-38)), 16777216, float64(float32(0.1))},
		Int64:   {0, -1, 1 << 53, -(1 << 53), math.MinInt64, 4294967296},
		Uint64:  {0, 1 << 53, 1 << 63, 4294967296},
		Float64: {0, 0.1, -1e308, math.SmallestNonzeroFloat64, math.Pi},
	}
	for typ, vs := range values {
		for s := SwapNone; s <= SwapWordByte; s++ {
			for _, v := range vs {
				regs, err := Encode(typ, s, v)
				if err != nil {
					t.Errorf("Encode(%s, %s, %v): %v", typ, s, v, err)
					continue
				}
				if back, err := Decode(typ, s, regs); err != nil || back != v {
					t.Errorf("%s/%s: %v → %04x → %v, %v", typ, s, v, regs, back, err)
				}
			}
		}
	}
}

// TestCodecNames checks Type and Swap names both ways.
func TestCodecNames(t *testing.T) {
	names := []string{"bool", "int16", "uint16", "int32", "uint32", "float32", "int64", "uint64", "float64"}
	words := []int{1, 1, 1, 2, 2, 2, 4, 4, 4}
	for i, name := range names {
		typ, ok := ParseType(name)
		if !ok || typ.String() != name || typ.Words() != words[i] {
			t.Errorf("ParseType(%q) = %v (%d words), %v", name, typ, typ.Words(), ok)
		}
	}
	for i, name := range []string{"none", "byte", "word", "word_byte"} {
		s, ok := ParseSwap(name)
		if !ok || s != Swap(i) || s.String() != name {
			t.Errorf("ParseSwap(%q) = %v, %v", name, s, ok)
		}
	}
	for _, bad := range []string{"", "Float32", "float", "int8", "abcd"} {
		if _, ok := ParseType(bad); ok {
			t.Errorf("ParseType(%q) accepted", bad)
		}
		if _, ok := ParseSwap(bad); ok {
			t.Errorf("ParseSwap(%q) accepted", bad)
		}
	}
	if !strings.HasPrefix(Type(0).String(), "type(") || Type(0).Words() != 0 {
		t.Errorf("Type(0): %q, %d words", Type(0), Type(0).Words())
	}
}
