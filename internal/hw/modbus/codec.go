package modbus

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strconv"
)

// Type is how a value is encoded in one or more registers.
type Type uint8

// The types. The zero Type is none of them.
const (
	Bool Type = iota + 1 // one register (or a coil): nonzero is true
	Int16
	Uint16
	Int32
	Uint32
	Float32 // IEEE 754 single
	Int64
	Uint64
	Float64 // IEEE 754 double
)

var typeNames = [...]string{Bool: "bool", Int16: "int16", Uint16: "uint16", Int32: "int32", Uint32: "uint32",
	Float32: "float32", Int64: "int64", Uint64: "uint64", Float64: "float64"}

// ParseType returns the type named s ("float32"), as String writes it.
func ParseType(s string) (Type, bool) {
	for t := Bool; t <= Float64; t++ {
		if typeNames[t] == s {
			return t, true
		}
	}
	return 0, false
}

func (t Type) valid() bool { return t >= Bool && t <= Float64 }

// String returns the type's name in the configuration.
func (t Type) String() string {
	if t.valid() {
		return typeNames[t]
	}
	return "type(" + strconv.Itoa(int(t)) + ")"
}

// Words returns how many 16-bit registers a value of t spans (0 for an
// invalid Type).
func (t Type) Words() int {
	switch t {
	case Bool, Int16, Uint16:
		return 1
	case Int32, Uint32, Float32:
		return 2
	case Int64, Uint64, Float64:
		return 4
	}
	return 0
}

// Swap is the order of a value's bytes across its registers, the bytes
// named ABCD (ABCDEFGH for 64 bits) from the most significant.
type Swap uint8

const (
	// SwapNone: big-endian, high word first (ABCD), the Modbus order.
	SwapNone Swap = iota
	// SwapByte: the bytes of each register swapped (BADC).
	SwapByte
	// SwapWord: the registers in reverse order, low word first (CDAB;
	// for 64 bits all four reversed: GHEFCDAB).
	SwapWord
	// SwapWordByte: both, little-endian throughout (DCBA).
	SwapWordByte
)

var swapNames = [...]string{SwapNone: "none", SwapByte: "byte", SwapWord: "word", SwapWordByte: "word_byte"}

// ParseSwap returns the swap named s: "none", "byte", "word" or
// "word_byte".
func ParseSwap(s string) (Swap, bool) {
	for w, name := range swapNames {
		if name == s {
			return Swap(w), true
		}
	}
	return 0, false
}

// String returns the swap's name as ParseSwap reads it.
func (s Swap) String() string {
	if int(s) < len(swapNames) {
		return swapNames[s]
	}
	return "swap(" + strconv.Itoa(int(s)) + ")"
}

// Decode returns the value of type t that regs hold in order s. regs has
// exactly t.Words() registers. An int64 or uint64 beyond ±2^53 comes out
// rounded to the nearest float64 (a meter's energy counter in Wh stays
// exact up to 9 PWh).
func Decode(t Type, s Swap, regs []uint16) (float64, error) {
	if err := check(t, s); err != nil {
		return 0, err
	}
	if len(regs) != t.Words() {
		return 0, fmt.Errorf("decode %s: %d registers, want %d", t, len(regs), t.Words())
	}
	b := fromRegisters(s, regs)
	switch t {
	case Bool:
		if binary.BigEndian.Uint16(b) != 0 {
			return 1, nil
		}
		return 0, nil
	case Int16:
		return float64(int16(binary.BigEndian.Uint16(b))), nil
	case Uint16:
		return float64(binary.BigEndian.Uint16(b)), nil
	case Int32:
		return float64(int32(binary.BigEndian.Uint32(b))), nil
	case Uint32:
		return float64(binary.BigEndian.Uint32(b)), nil
	case Float32:
		return float64(math.Float32frombits(binary.BigEndian.Uint32(b))), nil
	case Int64:
		return float64(int64(binary.BigEndian.Uint64(b))), nil
	case Uint64:
		return float64(binary.BigEndian.Uint64(b)), nil
	default: // Float64
		return math.Float64frombits(binary.BigEndian.Uint64(b)), nil
	}
}

// Encode returns the registers that hold v as type t in order s. It
// refuses, naming the value and the type: a value out of t's range
// (Range), a fraction, NaN or an infinity for an integer type, and for
// Bool anything but 0 and 1. A float32 is rounded to the nearest
// single.
func Encode(t Type, s Swap, v float64) ([]uint16, error) {
	if err := check(t, s); err != nil {
		return nil, err
	}
	b, err := toBytes(t, v)
	if err != nil {
		return nil, fmt.Errorf("encode %s as %s: %w", fmtValue(v), t, err)
	}
	return toRegisters(s, b), nil
}

func check(t Type, s Swap) error {
	if !t.valid() {
		return fmt.Errorf("%s: not a type", t)
	}
	if int(s) >= len(swapNames) {
		return fmt.Errorf("%s: not a swap", s)
	}
	return nil
}

// Range returns the least and the greatest raw value of t: an integer
// type's bounds, ±MaxFloat32 or ±MaxFloat64 for the floats, 0 and 1 for
// Bool. The greatest int64 and uint64 are not float64 numbers: Range
// returns them rounded up (2^63, 2^64), which Encode refuses.
func Range(t Type) (min, max float64) {
	switch t {
	case Bool:
		return 0, 1
	case Int16:
		return math.MinInt16, math.MaxInt16
	case Uint16:
		return 0, math.MaxUint16
	case Int32:
		return math.MinInt32, math.MaxInt32
	case Uint32:
		return 0, math.MaxUint32
	case Float32:
		return -math.MaxFloat32, math.MaxFloat32
	case Int64:
		return math.MinInt64, math.MaxInt64
	case Uint64:
		return 0, math.MaxUint64
	case Float64:
		return -math.MaxFloat64, math.MaxFloat64
	}
	return 0, 0
}

// toBytes encodes v big-endian, checking that t can hold it.
func toBytes(t Type, v float64) ([]byte, error) {
	b := make([]byte, 2*t.Words())
	switch t {
	case Float32:
		if !math.IsNaN(v) && !math.IsInf(v, 0) && math.Abs(v) > math.MaxFloat32 {
			return nil, fmt.Errorf("beyond ±%g", math.MaxFloat32)
		}
		binary.BigEndian.PutUint32(b, math.Float32bits(float32(v)))
		return b, nil
	case Float64:
		binary.BigEndian.PutUint64(b, math.Float64bits(v))
		return b, nil
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil, fmt.Errorf("not a number an integer type can hold")
	}
	if v != math.Trunc(v) {
		return nil, fmt.Errorf("not an integer")
	}
	lo, hi := Range(t)
	if v < lo || v > hi || (v == hi && (t == Int64 || t == Uint64)) {
		if t == Bool {
			return nil, fmt.Errorf("want 0 or 1")
		}
		return nil, fmt.Errorf("out of range %s to %s", fmtInt(lo), maxText(t, hi))
	}
	switch t.Words() {
	case 1:
		if v < 0 {
			binary.BigEndian.PutUint16(b, uint16(int16(v)))
		} else {
			binary.BigEndian.PutUint16(b, uint16(v))
		}
	case 2:
		if v < 0 {
			binary.BigEndian.PutUint32(b, uint32(int32(v)))
		} else {
			binary.BigEndian.PutUint32(b, uint32(v))
		}
	default:
		if v < 0 {
			binary.BigEndian.PutUint64(b, uint64(int64(v)))
		} else {
			binary.BigEndian.PutUint64(b, uint64(v))
		}
	}
	return b, nil
}

// fmtValue writes v in full where it is short enough to read (123456789,
// not 1.23456789e+08).
func fmtValue(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e21 {
		return fmtInt(v)
	}
	if math.Abs(v) < 1e21 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// fmtInt writes an integral float64 in full and exactly
// ("-9223372036854775808", not "-9223372036854776000").
func fmtInt(v float64) string { return new(big.Float).SetFloat64(v).Text('f', 0) }

// maxText is the greatest value of t as a person reads it: for 64-bit
// integers the true bound, which float64 cannot hold.
func maxText(t Type, hi float64) string {
	switch t {
	case Int64:
		return strconv.FormatInt(math.MaxInt64, 10)
	case Uint64:
		return strconv.FormatUint(math.MaxUint64, 10)
	}
	return fmtInt(hi)
}

// toRegisters splits big-endian bytes into registers in order s.
func toRegisters(s Swap, b []byte) []uint16 {
	regs := make([]uint16, len(b)/2)
	for i := range regs {
		regs[i] = binary.BigEndian.Uint16(b[2*i:])
	}
	return swap(s, regs)
}

// fromRegisters returns the big-endian bytes that regs hold in order s.
func fromRegisters(s Swap, regs []uint16) []byte {
	regs = swap(s, append([]uint16(nil), regs...))
	b := make([]byte, 2*len(regs))
	for i, r := range regs {
		binary.BigEndian.PutUint16(b[2*i:], r)
	}
	return b
}

// swap reorders regs in place from ABCD to s, or back: each swap is its
// own inverse.
func swap(s Swap, regs []uint16) []uint16 {
	if s == SwapByte || s == SwapWordByte {
		for i, r := range regs {
			regs[i] = r<<8 | r>>8
		}
	}
	if s == SwapWord || s == SwapWordByte {
		for i, j := 0, len(regs)-1; i < j; i, j = i+1, j-1 {
			regs[i], regs[j] = regs[j], regs[i]
		}
	}
	return regs
}
